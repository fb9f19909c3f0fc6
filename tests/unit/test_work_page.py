"""The work page (waiting_room_site/work_page.py): one small self-contained document."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re

import pytest

from beekeeper.core.settings import RoomSettings
from beekeeper.waiting_room_site import MAX_PAGE_BYTES
from beekeeper.waiting_room_site.work_page import (
    WORK_DIR,
    bundle_work_script,
    render_work_page,
    work_locales,
)
from tests.support.sample_room import sample_room


def room(**changes: object) -> RoomSettings:
    return sample_room(**changes)


def digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def policy_of(page: str) -> str:
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    return html.unescape(policy)


def test_the_page_is_small_self_contained_and_fully_filled() -> None:
    page = render_work_page(room())
    assert len(page.encode("utf-8")) < MAX_PAGE_BYTES
    assert not re.search(r"https?://", page), "no other host"
    assert not re.search(r"\{\{[A-Z_]+\}\}", page)
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert "<link" not in page
    # Its one link: the marketing link, relative (.../work -> .../beekeeper).
    assert re.findall(r'href="([^"]*)"', page) == ["beekeeper"]


def test_the_policy_allows_its_own_script_styles_and_blob_workers_and_no_request() -> None:
    page = render_work_page(room())
    policy = policy_of(page)
    assert policy.startswith("default-src 'none'; ")
    assert f"script-src 'sha256-{digest(bundle_work_script())}'" in policy
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert f"style-src 'sha256-{digest(style)}'" in policy
    assert "worker-src blob:" in policy
    assert "connect-src 'none'" in policy and "img-src 'none'" in policy
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_the_rooms_branding_reaches_the_page() -> None:
    logo = "https://cdn.shop.example.com/logo.svg"
    page = render_work_page(room(accent_colour="#aa3300", logo_url=logo, display_name="Drop <1>"))
    assert "--accent:#aa3300" in page
    assert f'<img src="{html.escape(logo)}"' in page
    assert "img-src https://cdn.shop.example.com" in policy_of(page)
    assert "<title>Drop &lt;1&gt;</title>" in page and "Drop <1>" not in page


def test_the_config_can_not_close_its_script_element() -> None:
    page = render_work_page(room())
    (config,) = re.findall(r'id="beekeeper-work">(.*?)</script>', page, re.DOTALL)
    assert "<" not in config and ">" not in config
    data = json.loads(config)
    assert (data["joinUrl"], data["parameter"]) == ("beekeeper", "work")
    assert list(data["strings"]) == ["en", "de"]


def test_every_language_has_every_string_the_page_uses() -> None:
    script = bundle_work_script()
    used = set(re.findall(r"\bt\.(\w+)", script))
    markup = (WORK_DIR / "index.html").read_text(encoding="utf-8")
    used |= set(re.findall(r'data-bk-text="(\w+)"', markup)) | {"noscript"}
    locales = work_locales()
    assert used and set(locales) == {"en", "de"}
    for lang, strings in locales.items():
        assert sorted(used - set(strings)) == [], lang
        assert set(strings) == set(locales["en"]), lang


@pytest.mark.parametrize("lang", ["en", "de"])
def test_noscript_says_why_in_every_language(lang: str) -> None:
    page = render_work_page(room())
    assert f'<p lang="{lang}">{html.escape(work_locales()[lang]["noscript"])}</p>' in page


def test_the_bundle_has_no_module_syntax_left() -> None:
    script = bundle_work_script()
    assert not re.search(r"^\s*(import|export)\b", script, re.MULTILINE)
    assert "function searchCounters" in script and "startWork(" in script
