"""Pure pieces of the pipeline: cookie parsing, consumer planning, governor decisions."""

from __future__ import annotations

import pytest

from beekeeper.lambdas.cookies import is_plain_http_loopback, stage_root, token_from_cookies
from beekeeper.lambdas.governor import GovernorState, Sample, decide, rate_floor
from beekeeper.lambdas.room_state import RoomConfig
from beekeeper.lambdas.trigger import consumers_needed

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
    ("visitors", "capacity", "consumers"),
    [(0, 6000, 0), (1, 6000, 1), (6000, 6000, 1), (6001, 6000, 2), (12345, 6000, 3)],
)
def test_the_fewest_consumers_for_a_minute(visitors: int, capacity: int, consumers: int) -> None:
    assert consumers_needed(visitors, capacity) == consumers


def test_270000_per_minute_needs_45_consumers() -> None:
    assert consumers_needed(270_000, 6_000) == 45


def config(rate: int, operator_rate: int = 1000, version: int = 3) -> RoomConfig:
    return RoomConfig(True, operator_rate, rate, version, 0)


def state(name: str = "passing", version: int = 3, operator_rate: int = 1000) -> GovernorState:
    return GovernorState(name, 100.0, 10.0, 1_000, version, operator_rate)


def samples(ms: float, failed: int = 0) -> list[Sample]:
    return [Sample(ok=i >= failed, ms=ms) for i in range(20)]


def test_first_check_takes_the_baseline_with_a_floored_deviation() -> None:
    decision, rate, new = decide(config(1000), None, samples(200.0), now=5_000)
    assert decision == "baseline" and rate == 1000
    assert new.baseline_mean_ms == 200.0
    assert new.baseline_std_ms == 20.0  # 10% of the mean, not 0


def test_a_degraded_origin_can_not_give_a_baseline() -> None:
    decision, _, new = decide(config(1000), None, samples(100.0, failed=1), now=5_000)
    assert decision == "baseline-pending" and new.state == "baseline"


def test_slow_or_degraded_checks_halve_the_rate_down_to_the_floor() -> None:
    assert decide(config(1000), state(), samples(131.0), 2_000)[:2] == ("halve", 500)
    assert decide(config(1000), state(), samples(129.0), 2_000)[:2] == ("pass", 1000)
    assert decide(config(1000), state(), samples(90.0, failed=1), 2_000)[:2] == ("halve", 500)
    assert decide(config(60), state(), samples(500.0), 2_000)[1] == 50  # 5% of 1000
    assert rate_floor(10) == 1


def test_a_passing_check_recovers_a_quarter_of_the_gap() -> None:
    assert decide(config(500), state("throttled"), samples(100.0), 2_000)[:2] == ("raise", 625)
    assert decide(config(999), state("throttled"), samples(100.0), 2_000)[1] == 1000


def test_an_operator_change_resets_the_governor() -> None:
    decision, rate, new = decide(
        config(2000, operator_rate=2000, version=4), state(version=3), samples(100.0), 2_000
    )
    assert decision == "baseline" and rate == 2000
    assert new.config_version == 4 and new.operator_rate == 2000
