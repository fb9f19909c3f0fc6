"""How long a visitor's phone takes to solve the marketing link's challenge (core/join_work.py).

A sub-puzzle takes a geometric number of tries with success probability target / 2^32, which
at these targets (one success in thousands of tries) is an exponential time of mean
2^32 / target tries; the challenge's `count` sub-puzzles add up to a gamma distribution of
shape `count`. A typical phone makes PHONE_TRIES_PER_SECOND tries a second on one core, the
unit `join_work` is set in (the page's several workers only make a real phone faster).
"""

from __future__ import annotations

import random

from beekeeper.core.join_work import PHONE_TRIES_PER_SECOND, TARGET_SPACE, Challenge


def solve_seconds(rng: random.Random, challenge: Challenge) -> float:
    mean_tries = TARGET_SPACE / challenge.target
    return rng.gammavariate(challenge.count, mean_tries / PHONE_TRIES_PER_SECOND)
