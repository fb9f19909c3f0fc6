"""The capacity formulas the stack sizes a room with (docs/stack.md)."""

from __future__ import annotations

import math

import pytest

from beekeeper.core import polling, polling_load
from beekeeper.core.polling_load import standing_polls_per_second
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity


def _room(**changes: object) -> RoomSettings:
    base = RoomSettings(
        name="r", display_name="R", region="us-east-1", origin="https://shop.example.com", rate=600
    )
    return base.replace(**changes)


@pytest.mark.parametrize(
    ("rate", "consumer_capacity", "per_minute", "reserved"),
    [
        (1, 6_000, 1, 2),
        (6_000, 6_000, 1, 2),
        (6_001, 6_000, 2, 4),
        (300_000, 6_000, 50, 100),
        (300_000, 30_000, 10, 20),
    ],
)
def test_consumers_are_reserved_for_two_overlapping_minutes(
    rate: int, consumer_capacity: int, per_minute: int, reserved: int
) -> None:
    room = _room(rate=rate, consumer_capacity=consumer_capacity)
    assert capacity.consumers_per_minute(room) == per_minute
    assert capacity.consumer_reserved_concurrency(room) == reserved


def test_polls_are_sized_by_the_admissions_not_the_line() -> None:
    # The pages' own /polling at the rate (OWN_POLLS_PER_ADMISSION each) and the edge's misses:
    # the line's length does not enter (the edge answers every page far from its turn).
    misses = polling_load.edge_misses_per_second()
    assert misses == pytest.approx(13 / 2 + 13 / 60 + 13 / 2)  # the state, the page, the challenge
    for rate in (1, 600, 6_000, 60_000, 300_000):
        expected = rate / 60 * polling_load.OWN_POLLS_PER_ADMISSION + misses
        assert capacity.polls_per_second(_room(rate=rate)) == math.ceil(expected)
    assert capacity.polls_per_second(_room(rate=300_000)) == 6_514


def test_the_model_counts_every_request_past_the_edge_and_at_it() -> None:
    origin = polling_load.origin_requests_per_second(
        joins_per_second=2_000, rate_per_minute=30_000, client_checks_per_admission=1
    )
    assert origin == pytest.approx(2_000 + 500 * 2.3 + polling_load.edge_misses_per_second())
    edge = polling_load.edge_requests_per_second(
        waiting=120_000, joins_per_second=2_000, rate_per_minute=30_000
    )
    # The origin's requests pass through the edge; 120,000 pages fetch every 6 s; 2,000 load
    # the page, the shared challenge and the work page.
    assert edge == pytest.approx(2_000 + 500 * 1.3 + 20_000 + 3 * 2_000)
    without_work = polling_load.edge_requests_per_second(
        waiting=120_000, joins_per_second=2_000, rate_per_minute=30_000, join_work=False
    )
    assert without_work == pytest.approx(edge - 2 * 2_000)


def test_the_poll_rule_alone_would_grow_with_the_line() -> None:
    # What the edge removes: without the shared state a page polls as /polling's answer asks.
    assert standing_polls_per_second(100_000, 600) < standing_polls_per_second(100_000, 60_000)
    assert standing_polls_per_second(1_000, 600) < standing_polls_per_second(100_000, 600)
    assert standing_polls_per_second(300_000, 1) == pytest.approx(
        300_000 / polling.POLL_AFTER_MAX_SECONDS, rel=1e-3
    )
    assert standing_polls_per_second(50_000, 6_000, interval_factor=1.125) == pytest.approx(
        standing_polls_per_second(50_000, 6_000) / 1.125
    )
    line = 2_000
    by_position = sum(1 / polling.poll_after_seconds(p, 600) for p in range(1, line + 1))
    assert standing_polls_per_second(line, 600) == pytest.approx(by_position)


def test_stage_limit_is_arrivals_plus_polls_plus_client_checks() -> None:
    room = _room(rate=6_000, arrival_shards=8)
    throttle = capacity.stage_throttle(room)
    # 8 shards x 1,000/s + own polls and misses + 6,000/min x 10 checks / 60 s
    assert throttle.rate_limit == 8_000 + capacity.polls_per_second(room) + 1_000
    assert capacity.polls_per_second(room) == math.ceil(100 * 1.3 + 13 / 2 + 13 / 60 + 13 / 2)
    assert throttle.arrivals_rate_limit == 8_000
    assert throttle.burst_limit == capacity.ACCOUNT_DEFAULT_BURST


def test_a_capacity_room_adds_its_places_heartbeats() -> None:
    rate_room = _room(rate=6_000, arrival_shards=8)
    assert capacity.heartbeats_per_second(rate_room) == 0
    room = rate_room.replace(max_inside=500, session_minutes=5, presence_grace_seconds=10)
    # 500 places, a heartbeat every 3 s (a third of the grace) each.
    assert capacity.heartbeats_per_second(room) == 167
    assert capacity.stage_throttle(room).rate_limit == (
        capacity.stage_throttle(rate_room).rate_limit + 167
    )
    # Without presence a page with the script beats a third of a session apart: 100 s.
    assert capacity.heartbeats_per_second(room.replace(presence_grace_seconds=0)) == 5


def test_small_room_burst_never_exceeds_its_rate() -> None:
    room = _room(rate=1, arrival_shards=1)
    throttle = capacity.stage_throttle(room)
    # At 1 visitor a minute: the edge's misses and a fraction of a poll a second.
    assert capacity.polls_per_second(room) == 14
    assert throttle.rate_limit == 1_000 + 14 + 1
    assert throttle.burst_limit == min(throttle.rate_limit, capacity.ACCOUNT_DEFAULT_BURST)
    assert throttle.arrivals_rate_limit == 1_000
