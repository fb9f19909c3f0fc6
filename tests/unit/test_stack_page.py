"""The page's headers and mapping template (GET /room)."""

from __future__ import annotations

import base64
import re

import pytest

from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.stacks import page


def test_headers_with_quotes_are_set_by_the_template() -> None:
    static, overridden = page.split_headers(PAGE_HEADERS)
    assert set(overridden) == {"Content-Security-Policy"}
    assert static["Content-Type"] == "text/html; charset=utf-8"
    assert not any("'" in value for value in static.values())


def test_template_decodes_to_the_page_unchanged() -> None:
    html = "<p>Price: $5 #1 — ünïcode</p>"
    template = page.page_response_template(html, {"Content-Security-Policy": "default-src 'none'"})
    assert template.startswith(
        "#set($context.responseOverride.header.Content-Security-Policy = \"default-src 'none'\")"
    )
    encoded = re.search(r'base64Decode\("([^"]+)"\)$', template)
    assert encoded is not None
    assert base64.b64decode(encoded.group(1)).decode("utf-8") == html
    assert "\n" not in template


def test_a_50_kb_page_fits_one_mapping_template_with_room_to_spare() -> None:
    html = "<p>" + "x" * (50 * 1024) + "</p>"
    template = page.page_response_template(html, page.split_headers(PAGE_HEADERS)[1])
    assert len(template.encode()) < page.MAPPING_TEMPLATE_LIMIT_BYTES / 4


def test_a_page_too_large_for_api_gateway_is_refused_at_synth() -> None:
    html = "x" * (230 * 1024)
    with pytest.raises(page.PageTooLargeError, match="of the 307,200 bytes API Gateway allows"):
        page.page_response_template(html, {})


def test_a_header_value_that_would_break_the_template_is_refused() -> None:
    with pytest.raises(ValueError, match="can not be placed"):
        page.page_response_template("x", {"X-Test": 'a"b'})
