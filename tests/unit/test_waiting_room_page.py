"""render_page: one self-contained, safe page per room (no browser; see tests/browser for that)."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from beekeeper.core.colours import contrast_ratio, ink_for, readable_text_on
from beekeeper.core.paths import SITE_DIR
from beekeeper.core.push import PageChannel
from beekeeper.core.routes import Caller, called_by
from beekeeper.core.settings import SettingsError
from beekeeper.waiting_room_site import (
    MAX_PAGE_BYTES,
    PAGE_ROUTES,
    REQUIRED_HOOKS,
    REQUIRED_PLACEHOLDERS,
    PageTemplateError,
    bundle_script,
    render_page,
    room_config_json,
)
from tests.support.sample_room import sample_room

HOSTILE_NAMES = [
    "</script><script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "<!--<script>",
    "Tom & Jerry's {{ROOM_CONFIG}} sale",
    "Ünïcødé \u2028 Sale",
]


class _Collector(HTMLParser):
    """What a browser's parser sees: elements, their attributes and the text of each."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.title = ""
        self._open: list[str] = []
        self._script_attrs: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._open.append(tag)
        if tag == "script":
            self._script_attrs = dict(attrs)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._script_attrs is not None and self._open and self._open[-1] == "script":
            self.scripts.append((self._script_attrs, data))
            self._script_attrs = None
        elif self._open and self._open[-1] == "title":
            self.title += data


def parse(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    collector.close()
    return collector


def room_config(page: str) -> dict[str, object]:
    scripts = parse(page).scripts
    (config,) = [text for attrs, text in scripts if attrs.get("type") == "application/json"]
    loaded: dict[str, object] = json.loads(config)
    return loaded


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_display_names_stay_text(name: str) -> None:
    page = render_page(sample_room(display_name=name))
    parsed = parse(page)
    # The parser sees exactly our two scripts: the JSON config and the module, nothing injected.
    assert [attrs.get("type") for attrs, _ in parsed.scripts] == ["application/json", "module"]
    assert [tag for tag, _ in parsed.elements].count("script") == 2
    assert not any(tag == "img" for tag, _ in parsed.elements)
    assert parsed.title == name.strip()
    assert room_config(page)["displayName"] == name.strip()
    assert "<script>alert" not in page


def test_config_json_escapes_every_angle_bracket() -> None:
    page = render_page(sample_room(display_name="a</b>c"))
    (config,) = re.findall(r'id="beekeeper-room">(.*?)</script>', page, re.DOTALL)
    assert "<" not in config and ">" not in config
    assert "\\u003c/b\\u003e" in config


def test_config_carries_relative_urls_and_every_language() -> None:
    config = room_config(render_page(sample_room()))
    assert config["pollUrl"] == "polling"
    assert config["joinUrl"] == "beekeeper"
    assert config["enterUrl"] == "enter"
    assert config["leaveUrl"] == "leave"
    strings = config["strings"]
    assert isinstance(strings, dict)
    assert next(iter(strings)) == "en"
    assert {"en", "de"} <= set(strings)


def test_the_pages_room_urls_are_the_routes_the_table_says_it_calls() -> None:
    # The page resolves these relative to itself, as the routes are served beside /room;
    # tests/browser/test_local_capacity_browser.py follows a real admission's "via" to enter.
    assert sorted(found.name for found in PAGE_ROUTES.values()) == sorted(
        found.name for found in called_by(Caller.ROOM_PAGE) if found.at_room
    )
    config = json.loads(room_config_json(sample_room(), {}))
    for key, found in PAGE_ROUTES.items():
        assert "/" + config[key] == found.path


def test_page_is_small_and_self_contained() -> None:
    page = render_page(sample_room())
    assert len(page.encode("utf-8")) < MAX_PAGE_BYTES
    assert not re.search(r"https?://", page), "the page must reference no other host"
    parsed = parse(page)
    for tag, attrs in parsed.elements:
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
        assert not (tag == "script" and "src" in attrs)
    assert not re.search(r"\{\{[A-Z_]+\}\}", page), "every placeholder is filled"


def test_the_only_external_reference_is_the_configured_logo() -> None:
    logo = "https://cdn.shop.example.com/logo.svg?v=2"
    page = render_page(sample_room(logo_url=logo))
    assert re.findall(r"https?://[^\s\"'<>;]+", page) == [
        "https://cdn.shop.example.com",  # the policy's img-src
        html.escape(logo),
    ]


def test_policy_allows_exactly_the_inline_script_and_styles() -> None:
    page = render_page(sample_room())
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    policy = html.unescape(policy)
    digest = base64.b64encode(hashlib.sha256(bundle_script().encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert "default-src 'none'" in policy
    assert "connect-src 'self'" in policy
    assert "img-src 'none'" in policy
    (style,) = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    style_digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'sha256-{style_digest}'" in policy
    # The policy precedes everything it governs.
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_bundled_script_has_no_module_imports_or_exports() -> None:
    script = bundle_script()
    assert not re.search(r"^\s*(import|export)\b", script, re.MULTILINE)
    assert "function smoothEstimate" in script
    assert "startRoom(browserEnvironment(window))" in script


def test_accent_colour_reaches_the_page_with_readable_companions() -> None:
    page = render_page(sample_room(accent_colour="#FFD400"))
    assert "--accent:#ffd400" in page
    assert "--on-accent:#000000" in page
    ink = re.search(r"--accent-ink:(#[0-9a-f]{6})", page)
    assert ink is not None
    assert contrast_ratio(ink.group(1), "#f4f5f7") >= 4.5


@pytest.mark.parametrize(
    "accent", ["#ffffff", "#000000", "#ffd400", "#1f5fbf", "#00ff00", "#777777", "#ff0000"]
)
def test_derived_colours_meet_aa(accent: str) -> None:
    assert contrast_ratio(accent, readable_text_on(accent)) >= 4.5
    ink = ink_for(accent)
    assert contrast_ratio(ink, "#f4f5f7") >= 4.5
    assert contrast_ratio(ink, "#ffffff") >= 4.5
    assert contrast_ratio(ink, readable_text_on(ink)) >= 4.5


def test_ink_keeps_an_already_dark_accent() -> None:
    assert ink_for("#1f5fbf") == "#1f5fbf"


def test_noscript_message_in_every_language() -> None:
    page = render_page(sample_room())
    (noscript,) = re.findall(r"<noscript>(.*?)</noscript>", page, re.DOTALL)
    assert '<p lang="en">This waiting room needs JavaScript' in noscript
    assert '<p lang="de">' in noscript


def _default_template() -> str:
    return (SITE_DIR / "index.html").read_text(encoding="utf-8")


def test_custom_template_is_used(tmp_path: Path) -> None:
    custom = _default_template().replace("<h1>", '<h1 class="brand-title">')
    path = tmp_path / "room.html"
    path.write_text(custom, encoding="utf-8")
    page = render_page(sample_room(custom_template=str(path)))
    assert '<h1 class="brand-title">Spring Sale</h1>' in page


@pytest.mark.parametrize("placeholder", REQUIRED_PLACEHOLDERS)
def test_custom_template_without_a_placeholder_is_refused(tmp_path: Path, placeholder: str) -> None:
    path = tmp_path / "room.html"
    path.write_text(_default_template().replace(f"{{{{{placeholder}}}}}", ""), encoding="utf-8")
    with pytest.raises(PageTemplateError) as caught:
        render_page(sample_room(custom_template=str(path)))
    assert caught.value.missing_hook == placeholder
    assert f"{{{{{placeholder}}}}}" in str(caught.value)
    assert str(caught.value).startswith("custom_template:")


@pytest.mark.parametrize("hook", REQUIRED_HOOKS)
def test_custom_template_without_a_data_hook_is_refused(tmp_path: Path, hook: str) -> None:
    path = tmp_path / "room.html"
    path.write_text(
        _default_template().replace(f'data-bk="{hook}"', 'data-bk="gone"'), encoding="utf-8"
    )
    with pytest.raises(PageTemplateError) as caught:
        render_page(sample_room(custom_template=str(path)))
    assert caught.value.missing_hook == f'data-bk="{hook}"'
    assert f'data-bk="{hook}"' in str(caught.value)


def test_custom_template_with_an_unknown_placeholder_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "room.html"
    path.write_text(_default_template() + "{{DISPLAYNAME}}", encoding="utf-8")
    with pytest.raises(PageTemplateError, match=r"\{\{DISPLAYNAME\}\} is not a page placeholder"):
        render_page(sample_room(custom_template=str(path)))


def test_missing_custom_template_file_is_a_settings_error(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.html")
    with pytest.raises(SettingsError, match="the file does not exist"):
        render_page(sample_room(custom_template=missing))


def test_oversized_custom_template_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "room.html"
    path.write_text(
        _default_template().replace("</main>", "<p>" + "x" * MAX_PAGE_BYTES + "</p></main>"),
        encoding="utf-8",
    )
    with pytest.raises(PageTemplateError, match=f"keep it under {MAX_PAGE_BYTES:,} bytes"):
        render_page(sample_room(custom_template=str(path)))


def test_custom_template_styles_are_allowed_by_the_policy(tmp_path: Path) -> None:
    own_style = "<style>h1{letter-spacing:.1em}</style>"
    path = tmp_path / "room.html"
    path.write_text(_default_template().replace("</head>", own_style + "</head>"), "utf-8")
    page = render_page(sample_room(custom_template=str(path)))
    digest = base64.b64encode(hashlib.sha256(b"h1{letter-spacing:.1em}").digest()).decode()
    assert f"'sha256-{digest}'" in html.unescape(page)


def test_every_string_key_used_by_the_script_exists_in_english() -> None:
    english = json.loads((SITE_DIR / "locales" / "en.json").read_text(encoding="utf-8"))
    script = bundle_script()
    used = set(re.findall(r"\b(?:t|strings)\.(\w+)", script))
    used |= set(re.findall(r'return "(wait\w+)"', script))  # waitNoteKey's keys
    used |= set(re.findall(r'data-bk-text="(\w+)"', _default_template()))
    for state in ("noToken", "malformed", "unknown", "expired"):
        used |= {f"{state}Title", f"{state}Text"}
    assert used, "the script reads its strings through t.<key>"
    assert sorted(used - set(english)) == []


def test_the_bundle_carries_the_code_without_its_comments_and_still_parses(tmp_path: Path) -> None:
    script = bundle_script()
    assert "//" not in "".join(line for line in script.splitlines() if line.startswith("//"))
    assert "/**" not in script and "function firstOwnPoll(" in script
    # The sources write no string across lines: stripping lines can not change a string.
    for name in ("page.js", "room.js"):
        source = (SITE_DIR / name).read_text(encoding="utf-8")
        for number, line in enumerate(source.splitlines(), 1):
            assert line.count("`") % 2 == 0, f"{name}:{number} opens a template literal"
    if shutil.which("node") is None:
        pytest.skip("node checks the bundle's syntax")
    bundle = tmp_path / "bundle.mjs"
    bundle.write_text(script, encoding="utf-8")
    subprocess.run(["node", "--check", str(bundle)], check=True, timeout=60)


def test_the_page_gets_the_rule_s_figures_from_core() -> None:
    from beekeeper.core import serving

    timing = room_config(render_page(sample_room()))["timing"]
    assert timing["documentEverySeconds"] == serving.DOCUMENT_EVERY_SECONDS
    assert timing["displayDelaySeconds"] == serving.DISPLAY_DELAY_SECONDS
    assert timing["marginPlaces"] == serving.MARGIN_PLACES
    assert timing["minMarginSeconds"] == serving.MIN_MARGIN_SECONDS
    assert timing["maxMarginSeconds"] == serving.MAX_MARGIN_SECONDS
    assert timing["minuteSeconds"] == 60
    shortened = room_config(render_page(sample_room(), minute_seconds=10))["timing"]
    assert shortened["minuteSeconds"] == 10


def test_a_page_with_a_push_channel_is_told_where_to_subscribe_and_may_connect_there() -> None:
    channel = PageChannel.of(
        realtime_host="abc.appsync-realtime-api.eu-west-1.amazonaws.com",
        http_host="abc.appsync-api.eu-west-1.amazonaws.com",
        key="da2-abcdefghijklmnopqrstuvwxyz",
        room="sale",
    )
    page = render_page(sample_room(), channel=channel)
    assert room_config(page)["channel"] == channel.config()
    (policy,) = re.findall(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert (
        "connect-src 'self' wss://abc.appsync-realtime-api.eu-west-1.amazonaws.com; "
        in html.unescape(policy)
    )
    # The same script: the channel is data, not code (its hash does not change).
    assert bundle_script() in page
    # A page without a channel follows the shared state alone and may connect nowhere else.
    plain = render_page(sample_room())
    assert "channel" not in room_config(plain)
    assert "wss://" not in plain
    assert len(page.encode("utf-8")) < MAX_PAGE_BYTES
