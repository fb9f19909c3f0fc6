"""Pure pieces of the pipeline: cookie parsing, quota planning, pacing (governor: test_governor)."""

from __future__ import annotations

import pytest

from beekeeper.lambdas.consumer import Assignment, admissions_due, peak_per_second, share_start
from beekeeper.lambdas.cookies import is_plain_http_loopback, stage_root, token_from_cookies
from beekeeper.lambdas.trigger import minute_window, plan_quotas

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
    ],
)
def test_token_from_cookies(headers: dict[str, str], expected: str | None) -> None:
    token = token_from_cookies({"headers": headers})
    assert (str(token) if token else None) == expected


def test_multi_value_cookie_headers_are_all_read() -> None:
    event = {"multiValueHeaders": {"cookie": ["a=1", f"beekeeper_token={VALID}"]}}
    assert str(token_from_cookies(event)) == VALID
    assert token_from_cookies({"multiValueHeaders": {"cookie": [None, 3]}}) is None


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
    ("full", "path", "root"),
    [
        ("/prod/beekeeper", "/beekeeper", "/prod"),
        ("/beekeeper", "/beekeeper", "/"),
        (None, "/beekeeper", "/"),
        ("/a b;/beekeeper", "/beekeeper", "/"),
    ],
)
def test_stage_root(full: str | None, path: str, root: str) -> None:
    assert stage_root({"path": path, "requestContext": {"path": full}}) == root


@pytest.mark.parametrize(
    ("visitors", "capacity", "quotas"),
    [
        (0, 6000, []),
        (1, 6000, [1]),
        (6000, 6000, [6000]),
        (6001, 6000, [3001, 3000]),
        (12345, 6000, [4115, 4115, 4115]),
    ],
)
def test_plan_quotas(visitors: int, capacity: int, quotas: list[int]) -> None:
    assert plan_quotas(visitors, capacity) == quotas


def test_270000_per_minute_needs_45_consumers() -> None:
    quotas = plan_quotas(270_000, 6_000)
    assert len(quotas) == 45 and sum(quotas) == 270_000


def test_minute_window_ends_inside_the_minute() -> None:
    start, deadline = minute_window(100, 60)
    assert start == 6000 and 6058 <= deadline < 6060


def test_consumers_share_the_peak_bound() -> None:
    shares = [peak_per_second(Assignment(0, i, 6000, 0, 58, consumers=45)) for i in range(45)]
    assert sum(shares) == pytest.approx(1.25 * 270_000 / 60 + 10)


@pytest.mark.parametrize("quota", [1, 2, 7, 60, 6000])
def test_each_admission_falls_due_at_the_start_of_its_share(quota: int) -> None:
    assert admissions_due(quota, 0.0) == 1  # the first goes in at once
    assert admissions_due(quota, 1.0) == quota
    for k in range(1, quota + 1):
        # Due exactly when its share starts (the wake-up time), not a moment later...
        assert admissions_due(quota, share_start(quota, k)) >= k
        # ...and never more than one ahead of the even pace.
        if k < quota:
            assert admissions_due(quota, share_start(quota, k + 1) - 1e-6) == k
