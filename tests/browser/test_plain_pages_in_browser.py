"""The marketing link's closed and busy pages and the demo shop's, in headless chromium: the
room's look applies under the page's own Content-Security-Policy, and axe-core finds nothing
serious, for a dark and a light accent colour."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from beekeeper.core.plain_page import Brand
from beekeeper.local.demo_shop import SHOP_LABEL, DemoShop, RoomFacts
from beekeeper.room.producer import closed_page, page
from tests.support.page_browser import AXE, serious_violations

pytestmark = pytest.mark.slow


def shop_page(brand: Brand) -> str:
    """The demo shop's answer to a visitor it does not know: its refusal page."""
    room = RoomFacts(
        issuer="http://127.0.0.1:9", room="sale", client_url="http://127.0.0.1:9/client",
        marketing_url="http://127.0.0.1:9/beekeeper", leave_url="http://127.0.0.1:9/leave",
    )  # fmt: skip
    shop = DemoShop(room=room, shop_origin="http://127.0.0.1:8", brand=brand)
    body = shop({"PATH_INFO": "/", "REQUEST_METHOD": "GET"}, lambda status, headers: None)
    return b"".join(body).decode()


def pages(brand: Brand) -> dict[str, str]:
    event = {"headers": {"Accept-Language": "en-GB"}}
    return {
        "closed": closed_page("Sold out, thank you", event, brand)["body"],
        "busy": page(503, "Please try again in a moment", "Reload in half a minute.", brand)[
            "body"
        ],
        "shop": shop_page(brand),
    }


@pytest.mark.skipif(not AXE.exists(), reason="axe-core missing: run npm ci")
@pytest.mark.parametrize(("accent", "rgb"), [("#1f5fbf", "rgb(31, 95, 191)"),
                                             ("#ffd400", "rgb(255, 212, 0)")])  # fmt: skip
def test_the_rooms_look_applies_and_reads(
    new_page: Callable[..., Any], accent: str, rgb: str
) -> None:
    for name, html in pages(Brand("Spring Sale", accent)).items():
        tab = new_page()
        tab.set_content(html)
        band = tab.locator("header.band")
        # The inline style is allowed by the page's policy: the band wears the accent.
        assert band.evaluate("e => getComputedStyle(e).backgroundColor") == rgb, name
        assert tab.locator("h1").text_content() == "Spring Sale"
        if name == "shop":
            assert band.locator(".label").text_content() == SHOP_LABEL
        assert serious_violations(tab) == [], name
