"""core/retry.py: capped exponential backoff with full jitter, and the one retry loop."""

from __future__ import annotations

import random

import pytest

from beekeeper.core.retry import Backoff, Pauses, retry

BACKOFF = Backoff(first=0.05, cap=2.0)


class Recorded:
    """A sleep that records each pause, in order with the attempts it falls between."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.events.append("pause")
        self.slept.append(seconds)

    def pauses(self, seed: int = 1) -> Pauses:
        return Pauses(sleep=self.sleep, random=random.Random(seed).random)


def test_the_ceiling_doubles_from_the_first_pause_up_to_the_cap() -> None:
    assert [BACKOFF.ceiling(n) for n in range(8)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    # However long a loop has gone on, the ceiling is the cap (and a number).
    assert BACKOFF.ceiling(10_000) == 2.0


def test_each_pause_is_drawn_uniformly_below_its_ceiling() -> None:
    rng = random.Random(7)
    for retry_number in range(8):
        ceiling = BACKOFF.ceiling(retry_number)
        drawn = [BACKOFF.pause(retry_number, rng.random) for _ in range(2000)]
        assert all(0 <= pause < ceiling for pause in drawn)
        # Full jitter: spread over the whole range, not bunched at the ceiling.
        assert min(drawn) < 0.05 * ceiling and max(drawn) > 0.95 * ceiling
        assert sum(drawn) / len(drawn) == pytest.approx(ceiling / 2, rel=0.05)


def test_the_pause_is_the_random_draw_times_the_ceiling() -> None:
    assert BACKOFF.pause(2, lambda: 0.25) == pytest.approx(0.05)
    assert BACKOFF.pause(9, lambda: 0.5) == pytest.approx(1.0)


@pytest.mark.parametrize(("first", "cap"), [(0.0, 1.0), (-0.1, 1.0), (2.0, 1.0)])
def test_a_backoff_needs_a_positive_first_pause_within_its_cap(first: float, cap: float) -> None:
    with pytest.raises(ValueError, match="0 < first <= cap"):
        Backoff(first=first, cap=cap)


def test_retries_count_from_zero() -> None:
    with pytest.raises(ValueError, match="count from 0"):
        BACKOFF.ceiling(-1)


def test_a_pause_before_a_retry_is_never_longer_than_asked() -> None:
    recorded = Recorded()
    recorded.pauses().before_retry(BACKOFF, 20, at_most=0.3)
    recorded.pauses(seed=2).before_retry(BACKOFF, 20, at_most=0.0)
    assert recorded.slept[0] <= 0.3 and recorded.slept[1] == 0.0


def test_the_loop_stops_when_nothing_is_left_to_retry() -> None:
    recorded = Recorded()
    calls: list[list[str]] = []

    def attempt(left: list[str]) -> list[str]:
        calls.append(left)
        recorded.events.append("attempt")
        return left[1:]  # one item done per call

    left = retry(
        attempt,
        ["a", "b", "c"],
        retryable=bool,
        attempts=5,
        backoff=BACKOFF,
        pauses=recorded.pauses(),
    )
    assert left == []
    assert calls == [["a", "b", "c"], ["b", "c"], ["c"]]  # each retry takes what was left
    # A pause before each retry, none before the first attempt or after the last.
    assert recorded.events == ["attempt", "pause", "attempt", "pause", "attempt"]
    assert len(recorded.slept) == 2
    assert all(s < BACKOFF.ceiling(n) for n, s in enumerate(recorded.slept))


def test_the_loop_makes_at_most_its_attempts_and_returns_what_is_left() -> None:
    recorded = Recorded()
    attempts: list[int] = []

    def refused(left: int) -> int:
        attempts.append(left)
        return left  # nothing ever goes through

    left = retry(refused, 3, retryable=bool, attempts=4, backoff=BACKOFF, pauses=recorded.pauses())
    assert left == 3 and len(attempts) == 4
    assert len(recorded.slept) == 3
    assert all(0 <= s < BACKOFF.ceiling(n) for n, s in enumerate(recorded.slept))
    assert len(set(recorded.slept)) == 3  # drawn, not fixed


def test_the_retryable_test_decides_what_is_tried_again() -> None:
    recorded = Recorded()
    answers = iter(["throttled", "refused", "ok"])
    seen: list[str] = []

    def call(_last: str) -> str:
        seen.append(answer := next(answers))
        return answer

    last = retry(
        call,
        "",
        retryable=lambda answer: answer == "throttled",
        attempts=5,
        backoff=BACKOFF,
        pauses=recorded.pauses(),
    )
    # "refused" is not worth another try: the loop ends there, and the caller has it.
    assert last == "refused" and seen == ["throttled", "refused"] and len(recorded.slept) == 1


def test_one_attempt_never_pauses_and_an_error_ends_the_loop() -> None:
    recorded = Recorded()
    assert (
        retry(
            lambda n: n + 1,
            0,
            retryable=bool,
            attempts=1,
            backoff=BACKOFF,
            pauses=recorded.pauses(),
        )
        == 1
    )
    calls: list[int] = []

    def fails(n: int) -> int:
        calls.append(n)
        raise RuntimeError("not retried")

    with pytest.raises(RuntimeError, match="not retried"):
        retry(fails, 0, retryable=bool, attempts=5, backoff=BACKOFF, pauses=recorded.pauses())
    assert calls == [0] and recorded.slept == []
    with pytest.raises(ValueError, match="at least one attempt"):
        retry(lambda n: n, 0, retryable=bool, attempts=0, backoff=BACKOFF, pauses=recorded.pauses())


def test_a_seeded_jitter_draws_the_same_pauses_again() -> None:
    runs = []
    for _ in range(2):
        recorded = Recorded()
        retry(
            lambda n: n, 1, retryable=bool, attempts=6, backoff=BACKOFF, pauses=recorded.pauses(9)
        )
        runs.append(recorded.slept)
    assert runs[0] == runs[1] and len(runs[0]) == 5
