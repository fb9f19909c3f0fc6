"""Pure pieces of the pipeline: cookie parsing, consumer planning.

Pacing has its own module (test_pacing), and so has the governor (test_governor).
"""

from __future__ import annotations

import pytest

from beekeeper.room.cookies import is_plain_http_loopback, token_from_request
from beekeeper.room.trigger import consumers_needed

VALID = "abcdefghijklmnopqrstuv.7"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Cookie": f"beekeeper_token={VALID}"}, VALID),
        ({"COOKIE": f"a=1;beekeeper_token={VALID};b=2"}, VALID),
        ({"cookie": f"  beekeeper_token = {VALID} "}, VALID),
        ({"cookie": f"xbeekeeper_token={VALID}"}, None),
        ({"cookie": "beekeeper_token=abcdefghijklmnopqrstuv.7.8"}, None),
        ({"cookie": "beekeeper_token=abcdefghijklmnopqrst!v.7"}, None),
        ({"cookie": "beekeeper_token=abcdefghijklmnopqrstuv.1234567890123"}, None),
        ({}, None),
        # An app's header, any casing; present, it wins over the cookie, even when malformed.
        ({"Beekeeper-Token": VALID}, VALID),
        ({"beekeeper-token": f" {VALID}\t", "Cookie": "beekeeper_token=B" * 1}, VALID),
        ({"BEEKEEPER-TOKEN": "nonsense", "Cookie": f"beekeeper_token={VALID}"}, None),
        ({"Beekeeper-Token": f"{VALID}\n.1"}, None),
    ],
)
def test_token_from_request(headers: dict[str, str], expected: str | None) -> None:
    token = token_from_request({"headers": headers})
    assert (str(token) if token else None) == expected


def test_multi_value_cookie_headers_are_all_read() -> None:
    event = {"multiValueHeaders": {"cookie": ["a=1", f"beekeeper_token={VALID}"]}}
    assert str(token_from_request(event)) == VALID
    assert token_from_request({"multiValueHeaders": {"cookie": [None, 3]}}) is None


@pytest.mark.parametrize(
    ("host", "proto", "loopback"),
    [
        ("127.0.0.1:8080", "http", True),
        ("localhost:3000", "http", True),
        ("[::1]:8080", "http", True),
        ("127.0.0.1:8080", "https", False),
        ("shop.example.com", "http", False),
        ("10.0.0.1", "http", False),
    ],
)
def test_plain_http_loopback(host: str, proto: str, loopback: bool) -> None:
    event = {"headers": {"Host": host, "X-Forwarded-Proto": proto}}
    assert is_plain_http_loopback(event) is loopback


@pytest.mark.parametrize(
    ("visitors", "capacity", "consumers"),
    [(0, 6000, 0), (1, 6000, 1), (6000, 6000, 1), (6001, 6000, 2), (12345, 6000, 3)],
)
def test_the_fewest_consumers_for_a_minute(visitors: int, capacity: int, consumers: int) -> None:
    assert consumers_needed(visitors, capacity) == consumers


def test_270000_per_minute_needs_45_consumers() -> None:
    assert consumers_needed(270_000, 6_000) == 45
