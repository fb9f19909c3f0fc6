"""`beekeeper simulate --join-work`: the visitors' solving time in their join, on the real
producer's challenges (their difficulty rising under a flood) and its single-use write."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from beekeeper.cli.main import cli
from beekeeper.core.settings import default_for
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room


def test_each_visitor_solves_before_joining_and_nobody_is_lost() -> None:
    result = simulate(
        simulated_room(rate=600, join_work=1_000),
        Crowd(visitors=1_200, arrival=Arrival.parse("uniform:2"), minutes=4),
    )
    assert result.lost == 0 and result.admitted_twice == 0 and result.still_waiting == 0
    assert result.still_solving == 0 and sum(result.admitted_per_minute) == 1_200
    # A typical phone's second, split into sub-puzzles: a narrow spread.
    assert 0.9 <= result.join_work_seconds_p50 <= 1.1  # type: ignore[operator]
    assert result.join_work_seconds_p95 / result.join_work_seconds_p50 < 1.7  # type: ignore[operator]
    assert result.join_work_flood_factor_max == 1.0  # 10 a second is no flood at 600/min
    # The challenge's single-use write is one more call at the link than without work.
    plain = simulate(
        simulated_room(rate=600, join_work=0),
        Crowd(visitors=1_200, arrival=Arrival.parse("uniform:2"), minutes=4),
    )
    extra = result.calls_per_new_visitor - plain.calls_per_new_visitor  # type: ignore[operator]
    assert extra == pytest.approx(1.0, abs=0.05)


def test_a_sustained_flood_raises_the_work_and_visitors_still_solving_never_joined() -> None:
    # 200 a second at 60/min: a flood from 50 a second, so up to 4 x the work.
    result = simulate(
        simulated_room(rate=60, join_work=1_000),
        Crowd(visitors=12_000, arrival=Arrival.parse("uniform:1"), minutes=2),
    )
    assert 3.0 <= result.join_work_flood_factor_max <= 8.0  # type: ignore[operator]
    assert result.join_work_seconds_max > 3.0  # type: ignore[operator]
    joined = len(result.arrivals_per_minute) and sum(result.arrivals_per_minute)
    assert joined + result.still_solving == 12_000
    assert result.lost == 0 and result.admitted_twice == 0


def test_the_flag_and_its_json_keys() -> None:
    args = ["simulate", "--rate", "60", "--visitors", "50", "--minutes", "2", "--json"]
    # Without the flag a place costs what a room's does unless its file says otherwise.
    default = json.loads(CliRunner().invoke(cli, args).output)
    assert default["join_work_ms"] == default_for("join_work") == 1_000
    assert default["join_work_seconds_p50"] is not None
    off = json.loads(CliRunner().invoke(cli, [*args, "--join-work", "0"]).output)
    assert off["join_work_ms"] == 0 and off["join_work_seconds_p50"] is None
    result = CliRunner().invoke(cli, [*args, "--join-work", "500"])
    data = json.loads(result.output)
    assert data["join_work_ms"] == 500 and 0.3 < data["join_work_seconds_p50"] < 0.7
    assert data["admitted_per_minute"] == off["admitted_per_minute"]
    table = CliRunner().invoke(cli, [*args[:-1], "--join-work", "500"]).output
    assert "work before joining (500 ms of a typical phone)" in table
    refused = CliRunner().invoke(cli, [*args, "--join-work", "20000"])
    assert refused.exit_code == 2 and "1 to 10,000 milliseconds, or 0 for no work" in refused.output
