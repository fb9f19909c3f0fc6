"""The admission lattice one consumer paces itself by (room/pacing.py): pure, no I/O."""

from __future__ import annotations

import math
import random

import pytest

from beekeeper.room.pacing import (
    BANK,
    LanePacer,
    minute_span,
    peak_per_second,
    slots_in_lane,
)

START, END = minute_span(1000, 60)


def lane(rate: int, index: int = 0, lanes: int = 1) -> LanePacer:
    return LanePacer(span_start=START, span_end=END, rate=rate, index=index, lanes=lanes)


def test_the_span_leaves_a_second_at_either_end_of_the_minute() -> None:
    assert (START, END) == (60_001.0, 60_059.0)
    assert minute_span(10, 6) == pytest.approx((60.1, 65.9))


@pytest.mark.parametrize(("slots", "lanes"), [(10, 1), (10, 3), (7, 7), (6000, 45), (3, 5)])
def test_lanes_share_every_slot_once(slots: int, lanes: int) -> None:
    assert sum(slots_in_lane(slots, i, lanes) for i in range(lanes)) == slots


@pytest.mark.parametrize("rate", [1, 7, 60, 600, 6000])
def test_a_lane_that_uses_every_slot_admits_exactly_the_rate(rate: int) -> None:
    pacer = lane(rate)
    admitted, now = 0, START
    while not pacer.exhausted:
        now = pacer.when_available(1, now)
        assert now < END
        take = pacer.allowance(now)
        pacer.take(take, now)
        admitted += take
    assert admitted == rate
    assert pacer.forfeited == 0


def test_the_first_visitor_of_a_quiet_minute_goes_in_at_once() -> None:
    pacer = lane(10)
    # Half the minute passed with nobody there: one batch of slots is kept, the rest forfeited.
    now = START + 29
    assert pacer.allowance(now) == min(BANK, pacer.due(now))
    assert pacer.forfeited == pacer.due(now) - BANK or pacer.due(now) <= BANK
    pacer.take(1, now)
    assert pacer.allowance(now) == min(BANK, pacer.due(now)) - 1


def test_unused_slots_are_kept_for_one_batch_only() -> None:
    pacer = lane(6000)
    now = START + 10  # 1,034 slots due, nobody admitted
    assert pacer.allowance(now) == BANK
    assert pacer.forfeited == pacer.due(now) - BANK


def test_no_slot_is_used_before_it_falls_due() -> None:
    pacer = lane(60)
    assert pacer.allowance(START - 0.5) == 0
    assert pacer.allowance(START) == 1
    pacer.take(1, START)
    assert pacer.allowance(START + 0.5) == 0
    second = pacer.slot_time(1)
    assert pacer.when_available(1, START + 0.5) == pytest.approx(second)
    assert pacer.allowance(second) == 1


def test_any_60_seconds_of_a_greedy_lane_stay_within_the_rate_plus_its_bank() -> None:
    """Admit whenever allowed, with random stalls, over several minutes: the window cap."""
    rng = random.Random(4)
    rate, times = 600, []
    for minute in range(1000, 1004):
        start, end = minute_span(minute, 60)
        pacer = LanePacer(span_start=start, span_end=end, rate=rate, index=0, lanes=1)
        now = start
        while now < end:
            take = pacer.allowance(now)
            pacer.take(take, now)
            times += [now] * take
            now += rng.choice([0.01, 0.05, 0.05, 0.3, 1.5])  # a stall now and then
    times.sort()
    worst = max(sum(1 for t in times if s <= t < s + 60) for s in times)
    assert rate // 2 < worst <= rate + BANK


def test_a_live_rate_change_starts_a_new_lattice_from_the_change() -> None:
    pacer = lane(60)
    middle = START + 29
    pacer.take(pacer.allowance(middle), middle)
    pacer.change_rate(middle, 600)
    assert pacer.allowance(middle) == 1  # the new lattice's first slot, nothing banked
    # The rest of the span brings the new rate's share of it.
    assert pacer.slots == math.ceil(600 * (END - middle) / (END - START) - 1e-9)


def test_the_peak_second_is_shared_by_the_lanes() -> None:
    shares = [peak_per_second(270_000, 45, 60) for _ in range(45)]
    assert sum(shares) == pytest.approx(1.25 * 270_000 / 60 + 10)


def test_catching_up_never_beats_the_lanes_peak_second() -> None:
    pacer = lane(60)  # ceiling 1.25 + 10 = 11.25 a second
    now = START + 50  # a stalled lane: its whole bank is due
    first = pacer.allowance(now)
    assert first == BANK
    pacer.take(first, now)
    later = now + 0.5
    assert pacer.allowance(later) <= math.floor(pacer.ceiling) - first
    assert pacer.when_available(2, later) >= now + 1.0


@pytest.mark.parametrize(("index", "lanes"), [(1, 1), (-1, 2), (0, 0)])
def test_a_lane_that_does_not_exist_is_refused(index: int, lanes: int) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        LanePacer(span_start=START, span_end=END, rate=10, index=index, lanes=lanes)


def test_a_long_poll_that_waited_does_not_bring_its_old_bank_along() -> None:
    pacer = lane(600)
    asked = START + 26
    assert pacer.allowance(asked) == BANK  # a receive long-polls for up to ten visitors
    arrived = START + 30  # ... who come four seconds later
    pacer.take(BANK, arrived)
    assert pacer.allowance(arrived) == 0
