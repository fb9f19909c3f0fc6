"""The few-sentence pages in the room's look (core/plain_page.py): the marketing link's closed,
busy and refusal pages and the demo shop's, with the event's name, accent colour and logo."""

from __future__ import annotations

import base64
import hashlib
import re

from beekeeper.core.colours import contrast_ratio
from beekeeper.core.plain_page import Brand, render
from beekeeper.room.producer import closed_page, page
from tests.support.pipeline import room

BRAND = Brand("Spring <Sale>", "#ffd400", "https://cdn.shop.example:8443/logo.png")


def style_of(html: str) -> str:
    found = re.search(r"<style>(.*?)</style>", html, re.DOTALL)
    assert found is not None
    return found.group(1)


def test_the_page_wears_the_events_name_colour_and_logo() -> None:
    html = render(BRAND, title="This event is over", paragraphs=["Thank you.", "Sold <out>"])
    assert '<header class="band"><img src="https://cdn.shop.example:8443/logo.png" alt=""' in html
    assert "<h1>Spring &lt;Sale&gt;</h1>" in html  # the event's name, escaped
    assert "<h2>This event is over</h2><p>Thank you.</p><p>Sold &lt;out&gt;</p>" in html
    assert "<title>This event is over: Spring &lt;Sale&gt;</title>" in html
    properties = dict(re.findall(r"--([a-z-]+):(#[0-9a-f]{6})", style_of(html)))
    assert properties["accent"] == "#ffd400"
    # The name on the band and the links read (WCAG 2.1 AA: 4.5:1).
    assert contrast_ratio(properties["accent"], properties["on-accent"]) >= 4.5
    assert contrast_ratio(properties["accent-ink"], "#ffffff") >= 4.5
    assert "<script" not in html


def test_nothing_loads_but_its_own_style_and_the_logo() -> None:
    html = render(BRAND, title="Busy", paragraphs=["Reload."])
    digest = base64.b64encode(hashlib.sha256(style_of(html).encode()).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert policy.group(1).replace("&#x27;", "'") == (
        f"default-src 'none'; style-src 'sha256-{digest}'; "
        "img-src https://cdn.shop.example:8443; base-uri 'none'; form-action 'none'"
    )
    without_logo = render(Brand("Sale"), title="Busy", paragraphs=["Reload."])
    assert "img-src &#x27;none&#x27;" in without_logo and "<img" not in without_logo
    assert "Content-Security-Policy" not in render(BRAND, title="Shop", paragraphs=[], policy=False)


def test_the_marketing_links_pages_are_the_rooms() -> None:
    settings = room(display_name="Spring Sale", accent_colour="#0a7d3b")
    busy = page(503, "Please try again in a moment", "Reload.", Brand.of(settings))["body"]
    assert "<h1>Spring Sale</h1>" in busy and "--accent:#0a7d3b" in busy
    event = {"headers": {"Accept-Language": "de-DE"}}
    closed = closed_page("Ausverkauft, danke!", event, Brand.of(settings))["body"]
    assert '<html lang="de">' in closed and "<h1>Spring Sale</h1>" in closed
    assert "<h2>Diese Aktion ist beendet</h2>" in closed
    assert "<p>Ausverkauft, danke!</p>" in closed
