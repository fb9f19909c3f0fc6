"""How the room retries: capped exponential backoff with full jitter, the side effects passed in.

AWS's advice for a call that was refused for load (throttled, or a batch call's items left
unprocessed) is to pause before trying again, longer each time up to a cap, and to draw each
pause at random so that callers refused together do not come back together: "Exponential
Backoff And Jitter" (AWS Architecture Blog,
https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/) and the SDKs' standard
retry mode (AWS SDKs and Tools Reference Guide, "Retry behavior",
https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html), which never
delays the first attempt, only the retries. DynamoDB asks it of unprocessed items and keys in so
many words: "If you retry the batch operation immediately, the underlying read or write requests
can still fail due to throttling on the individual tables. If you delay the batch operation
using exponential backoff, the individual requests in the batch are much more likely to
succeed" (Amazon DynamoDB API Reference, BatchWriteItem and BatchGetItem).

Full jitter: the pause before retry n (n = 0 for the first retry) is drawn uniformly from
[0, min(cap, first x 2^n)] (`Backoff`). `retry` runs a loop's attempts with those pauses; a loop
that keeps state across attempts of its own (the consumer's lane) draws its pauses from
`Backoff` itself.

Nothing here sleeps, reads a clock or draws a random number by itself: a loop passes its own
sleep and randomness (`Pauses`), so tests and the simulator's clock run it exactly. Standard
library only: the Lambda asset ships core/.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

State = TypeVar("State")

# 2^n stops growing here: every cap is reached long before, and a float stays finite.
_MAX_DOUBLINGS = 64


@dataclass(frozen=True)
class Backoff:
    """Capped exponential backoff with full jitter (see the module's docstring)."""

    first: float  # the longest pause before the first retry, in seconds
    cap: float  # the longest pause before any retry

    def __post_init__(self) -> None:
        if not 0 < self.first <= self.cap:
            raise ValueError(f"a backoff needs 0 < first <= cap, not {self.first}, {self.cap}")

    def ceiling(self, retry: int) -> float:
        """The longest pause before retry `retry` (0: the first retry)."""
        if retry < 0:
            raise ValueError(f"retries count from 0, not {retry}")
        return min(self.cap, self.first * 2 ** min(retry, _MAX_DOUBLINGS))

    def pause(self, retry: int, random: Callable[[], float]) -> float:
        """The pause before retry `retry`: `random()` (uniform in [0, 1)) of its ceiling."""
        return random() * self.ceiling(retry)


@dataclass(frozen=True)
class Pauses:
    """What a loop waits with where it runs: its sleep, and the random source of the jitter
    (uniform in [0, 1), as `random.Random.random`)."""

    sleep: Callable[[float], None]
    random: Callable[[], float]

    def before_retry(self, backoff: Backoff, retry: int, *, at_most: float = math.inf) -> None:
        """Sleep before retry `retry` (0: the first): its pause, and no longer than `at_most`
        (what is left of a loop's time, say)."""
        self.sleep(min(backoff.pause(retry, self.random), at_most))


def retry(
    attempt: Callable[[State], State],
    state: State,
    *,
    retryable: Callable[[State], bool],
    attempts: int,
    backoff: Backoff,
    pauses: Pauses,
) -> State:
    """Run `attempt` on `state`, and on what it returns, until `retryable` says it need not run
    again or it ran `attempts` times, pausing before each retry (full jitter under `backoff`).

    `state` is what is still to do (a batch call's unprocessed items, say); an attempt that can
    fail in a way worth retrying says so in what it returns rather than raising, and whatever
    an attempt raises ends the loop. The last state is returned: what a loop does with a state
    still retryable at the end (raise, hand the work back) is the loop's own decision.
    """
    if attempts < 1:
        raise ValueError(f"a loop makes at least one attempt, not {attempts}")
    state = attempt(state)
    for number in range(attempts - 1):
        if not retryable(state):
            break
        pauses.before_retry(backoff, number)
        state = attempt(state)
    return state
