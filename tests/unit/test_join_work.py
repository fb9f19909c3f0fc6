"""The marketing link's challenge (core/join_work.py): issued, solved, checked, refused."""

from __future__ import annotations

import dataclasses
import math

import pytest

from beekeeper.core import join_work
from beekeeper.core.join_work import (
    CHALLENGE_LIFETIME_SECONDS,
    CLOCK_SKEW_SECONDS,
    FLOOD_MAX_FACTOR,
    FLOOD_MIN_JOINS_PER_SECOND,
    SUBPUZZLES,
    Challenge,
    JoinKeys,
    Solution,
    Verdict,
    check,
    flood_factor,
    issue,
    phone_seconds,
    solve,
    target_for,
    visitor_nonce,
)

KEYS = JoinKeys.from_secret("s" * 64)
NOW = 1_800_000_000.0


def counting_bytes() -> object:
    counter = iter(range(1, 1_000_000))
    return lambda n: next(counter).to_bytes(n, "big")


def challenge(work_ms: float = 5, room: str = "shop", now: float = NOW) -> Challenge:
    return issue(KEYS, room, now=now, work_ms=work_ms, token_bytes=counting_bytes())  # type: ignore[arg-type]


def test_a_solved_challenge_checks_out_and_round_trips_as_text() -> None:
    issued = challenge()
    assert Challenge.parse(str(issued)) == issued
    solution = solve(issued)
    assert Solution.parse(str(solution)) == solution
    assert len(solution.counters) == SUBPUZZLES
    assert check(KEYS, "shop", solution, now=NOW + 1) is Verdict.OK


def test_a_shared_challenge_gives_one_place_per_visitor_nonce_each_solved_on_its_own() -> None:
    issued = challenge()
    draw = counting_bytes()
    one, other = visitor_nonce(draw), visitor_nonce(draw)  # type: ignore[arg-type]
    assert one != other and len(one) == 22
    first, second = solve(issued, one), solve(issued, other)
    for solution in (first, second):
        assert Solution.parse(str(solution)) == solution
        assert str(solution).startswith(f"{issued}~{solution.visitor}~")
        assert check(KEYS, "shop", solution, now=NOW + 1) is Verdict.OK
    # Each is its own work: one visitor's counters do not solve another's puzzles, nor the
    # challenge's own (the form an app sends).
    borrowed = dataclasses.replace(first, visitor=other)
    assert first.counters != second.counters
    assert check(KEYS, "shop", borrowed, now=NOW + 1) is Verdict.WRONG
    assert check(KEYS, "shop", dataclasses.replace(first, visitor=None), now=NOW) is Verdict.WRONG
    # What is spent once: the challenge's nonce alone, or with the visitor's.
    spent = {solve(issued).spent_as, first.spent_as, second.spent_as}
    assert spent == {issued.nonce, f"{issued.nonce}.{one}", f"{issued.nonce}.{other}"}


def test_a_changed_field_or_another_room_or_key_is_forged() -> None:
    issued = challenge()
    solution = solve(issued)
    # An easier target, with the counters that solve it: the MAC no longer matches.
    easier = dataclasses.replace(issued, target=issued.target * 4)
    assert check(KEYS, "shop", solve(easier), now=NOW) is Verdict.FORGED
    later = dataclasses.replace(issued, issued_at=issued.issued_at + 100)
    assert check(KEYS, "shop", solve(later), now=NOW + 100) is Verdict.FORGED
    assert check(KEYS, "another-shop", solution, now=NOW) is Verdict.FORGED
    assert check(JoinKeys.from_secret("t" * 64), "shop", solution, now=NOW) is Verdict.FORGED


def test_a_challenge_lives_its_lifetime_and_no_longer() -> None:
    solution = solve(challenge())
    assert check(KEYS, "shop", solution, now=NOW + CHALLENGE_LIFETIME_SECONDS - 1) is Verdict.OK
    assert check(KEYS, "shop", solution, now=NOW + CHALLENGE_LIFETIME_SECONDS) is Verdict.EXPIRED
    # Dated in the future beyond any clock skew: not issued by this room's clock.
    assert check(KEYS, "shop", solution, now=NOW - CLOCK_SKEW_SECONDS - 1) is Verdict.EXPIRED


def test_a_counter_that_does_not_solve_its_sub_puzzle_is_wrong() -> None:
    issued = challenge(work_ms=50)
    counters = list(solve(issued).counters)
    seed = join_work.seed(issued)
    wrong = next(c for c in range(10_000) if not join_work.solves(seed, 3, c, issued.target))
    counters[3] = wrong
    assert check(KEYS, "shop", Solution(issued, tuple(counters)), now=NOW) is Verdict.WRONG


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1.2.3",
        "{c}",  # no counters
        "{c}~",
        "{c}~1.2.3",  # fewer counters than sub-puzzles
        "{c}~" + ".".join(["1"] * (SUBPUZZLES + 1)),
        "{c}~" + ".".join(["x"] * SUBPUZZLES),
        "{c}~" + ".".join(["4294967296"] * SUBPUZZLES),  # beyond 32 bits
        "{c}~" + ".".join(["12345678901"] * SUBPUZZLES),
        "{c}\n~" + ".".join(["1"] * SUBPUZZLES),
        "2" + "{c}"[1:] + "~" + ".".join(["1"] * SUBPUZZLES),
        "{c}~" + "1" * 5000,
        "{c}~" + "A" * 21 + "~" + ".".join(["1"] * SUBPUZZLES),  # a visitor nonce too short
        "{c}~" + "A" * 21 + "=~" + ".".join(["1"] * SUBPUZZLES),
        "{c}~" + "A" * 22 + "\n~" + ".".join(["1"] * SUBPUZZLES),
        "{c}~" + "A" * 22 + "~" + "A" * 22 + "~" + ".".join(["1"] * SUBPUZZLES),
    ],
)
def test_anything_but_a_solution_is_malformed(text: str) -> None:
    assert Solution.parse(text.replace("{c}", str(challenge()))) is None


def test_a_challenge_costs_what_the_setting_says_on_a_typical_phone() -> None:
    for work_ms in (10, 250, 1_000, 10_000, 80_000):
        assert phone_seconds(target_for(work_ms)) == pytest.approx(work_ms / 1000, rel=0.01)
    assert target_for(1_000) > target_for(2_000) > target_for(4_000)


def test_the_work_rises_with_the_join_rate_only_under_a_flood_and_up_to_a_cap() -> None:
    rate = 600  # a flood starts at ten minutes of admissions a minute: 100 joins a second
    assert flood_factor(None, rate) == 1.0
    assert flood_factor(100, rate) == 1.0
    assert flood_factor(200, rate) == pytest.approx(2.0)
    assert flood_factor(350, rate) == pytest.approx(3.5)
    assert flood_factor(10_000, rate) == FLOOD_MAX_FACTOR
    # A small room: a floor, so a burst of a few dozen a second is no flood.
    assert flood_factor(FLOOD_MIN_JOINS_PER_SECOND, 10) == 1.0
    assert flood_factor(2 * FLOOD_MIN_JOINS_PER_SECOND, 10) == pytest.approx(2.0)


def test_solve_times_are_narrow_because_the_work_is_split() -> None:
    """The tries a challenge takes: a sum of SUBPUZZLES geometric counts. Their spread is
    the gamma's: over 400 challenges the p95 stays within 1.7 x the median (a single puzzle's
    is 4.3 x)."""
    tries = []
    for index in range(400):
        issued = challenge(work_ms=20, now=NOW + index)
        tries.append(sum(c + 1 for c in solve(issued).counters))
    tries.sort()
    median, p95 = tries[len(tries) // 2], tries[math.ceil(0.95 * len(tries)) - 1]
    assert p95 / median < 1.7
    expected = issued.expected_tries
    assert sum(tries) / len(tries) == pytest.approx(expected, rel=0.1)


def test_a_short_join_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="32 characters"):
        JoinKeys.from_secret("short")
