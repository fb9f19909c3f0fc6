"""The numbers docs/admission.md states are the code's: the lattice's batch and peak, the
consumers' capacity, the config's freshness, the governor's samples and rules, the work a place
costs and its flood rule, and the edge's per-address limit. A change to one fails here until
the document says so."""

from __future__ import annotations

import math

from beekeeper.core.datamodel import CONFIG_FRESH_SECONDS
from beekeeper.core.join_work import (
    DEFAULT_JOIN_WORK_MS,
    FLOOD_MAX_FACTOR,
    FLOOD_MIN_JOINS_PER_SECOND,
    FLOOD_RATE_MINUTES,
    SHARED_SECONDS,
    SUBPUZZLES,
)
from beekeeper.core.settings import DEFAULT_CONSUMER_CAPACITY, DEFAULT_WAF_LIMIT
from beekeeper.room.governor import (
    BASELINE_CHECKS,
    MIN_RATE_FRACTION,
    RECOVERY_FRACTION,
    SAMPLE_WINDOW_FRACTION,
    SAMPLES,
    SLOW_CHECKS_TO_HALVE,
)
from beekeeper.room.governor_stats import ERROR_SHARE, MEDIAN_Z, MIN_MARGIN_MS, MIN_SLOWDOWN
from beekeeper.room.pacing import BANK, PEAK_FACTOR
from tests.support.doc_numbers import stated, stated_number

DOC = "docs/admission.md"


def number(pattern: str) -> float:
    return stated_number(DOC, pattern)


def says(pattern: str) -> str:
    return stated(DOC, pattern)


def test_the_lattice_and_the_consumers() -> None:
    assert number(r"one batch of (\d+) per consumer") == BANK
    assert number(r"no second more than ([\d.]+) x the average") == PEAK_FACTOR
    assert number(r"\((\S+) by default, so 45 at 270,000") == DEFAULT_CONSUMER_CAPACITY
    assert math.ceil(270_000 / DEFAULT_CONSUMER_CAPACITY) == 45
    assert number(r"read once per container every (\d+) s") == CONFIG_FRESH_SECONDS


def test_the_governor() -> None:
    assert number(r"it takes (\d+) samples of the shop's URL") == SAMPLES
    assert number(r"spread over (half) a minute") == SAMPLE_WINDOW_FRACTION
    assert number(r"in which (\d+)% or more of the samples fail") == ERROR_SHARE * 100
    assert number(r"pooled from (five) healthy checks") == BASELINE_CHECKS
    assert number(r"allows above the baseline's \((\d+) standard errors") == MEDIAN_Z
    assert number(r"never less than ([\d.]+) x or") == MIN_SLOWDOWN
    assert number(r"x or (\d+) ms above it") == MIN_MARGIN_MS
    assert says(r"one slow check holds the rate, the (second) in a row halves it") == "second"
    assert SLOW_CHECKS_TO_HALVE == 2
    assert number(r"recovers (a quarter) of the gap") == RECOVERY_FRACTION
    assert number(r"never falls below (\d+)% of it") == MIN_RATE_FRACTION * 100


def test_the_work_a_place_costs() -> None:
    assert number(r"challenge the room signed \((\d+) SHA-256 sub-puzzles") == SUBPUZZLES
    assert number(r"follows the bare link in the same (\d+) seconds") == SHARED_SECONDS
    assert number(r"time: (\S+) by default in AWS and local mode alike") == DEFAULT_JOIN_WORK_MS
    assert number(r"faster than (ten) minutes of admissions") == FLOOD_RATE_MINUTES
    assert number(r"and at least (\d+) a second") == FLOOD_MIN_JOINS_PER_SECOND
    assert number(r"in proportion to the join rate, up to (\d+) x") == FLOOD_MAX_FACTOR
    assert number(r"pays at most (\d+) seconds of a phone's time") == (
        FLOOD_MAX_FACTOR * DEFAULT_JOIN_WORK_MS / 1000
    )
    assert number(r"on by default: (\S+) marketing-link requests") == DEFAULT_WAF_LIMIT
    assert number(r"requests, so (\S+) places, per address") == DEFAULT_WAF_LIMIT / 2
