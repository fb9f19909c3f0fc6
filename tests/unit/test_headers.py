"""The origin a browser sends and the headers every answer carries (core/headers.py)."""

from __future__ import annotations

import pytest

from beekeeper.core.headers import PAGE_HEADERS, browser_origin, cors_headers


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Shop.Example.com/sale?x=1", "https://shop.example.com"),
        ("https://shop.example.com:443/", "https://shop.example.com"),
        ("https://shop.example.com:8443/a", "https://shop.example.com:8443"),
        ("http://localhost:8000/", "http://localhost:8000"),
        ("http://localhost:80/", "http://localhost"),
        ("http://[::1]:8080/", "http://[::1]:8080"),
        # A browser sends an internationalised host in its ASCII form.
        ("https://bücher.example/sale", "https://xn--bcher-kva.example"),
        ("https://BÜCHER.example:8443", "https://xn--bcher-kva.example:8443"),
    ],
)
def test_origin_is_what_a_browser_sends(url: str, origin: str) -> None:
    assert browser_origin(url) == origin


def test_cors_headers_name_the_browser_origin() -> None:
    assert cors_headers("https://bücher.example/x") == {
        "Access-Control-Allow-Origin": "https://xn--bcher-kva.example",
        "Access-Control-Allow-Credentials": "true",
        "Vary": "Origin",
    }


def test_the_page_may_not_be_framed_or_sniffed() -> None:
    assert PAGE_HEADERS["Content-Security-Policy"] == "frame-ancestors 'none'"
    assert PAGE_HEADERS["X-Frame-Options"] == "DENY"
    assert PAGE_HEADERS["X-Content-Type-Options"] == "nosniff"
