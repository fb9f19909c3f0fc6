"""A visitor's true place in line, and how far the places the pages showed were from it.

The true place of a waiting visitor at a moment is 1 + the visitors ahead of them who are still
waiting then and will be admitted before them (docs/pipeline.md, "The place shown"). Who is
admitted before whom is known only once the run is over, so the places the pages showed are
recorded as they are shown (`Sample`) and judged at the end (`judge`), from the fakes' own
logs: when each visitor joined, and when they were admitted or left the line. A visitor not
admitted by the end comes after everyone admitted, and among those still waiting the one who
joined first comes first.

Counting: one sweep through time with a Fenwick tree over the order of admission, so a run of
a million visitors is judged in one pass (O((visitors + samples) x log visitors)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Sample:
    """What a waiting page showed at a moment: a place (below 1: "at the front"), or None while
    it showed no number yet (the shared state it holds does not know its turn yet)."""

    at: float
    visitor: int
    shown: int | None


@dataclass(frozen=True)
class Verdict:
    """The places shown against the truth, over the samples that showed a number."""

    checked: int  # samples showing a place (or "at the front", taken as place 1)
    unshown: int  # samples showing no number yet
    wrong: int  # checked samples other than the true place
    errors: tuple[int, ...]  # |shown - true| of every checked sample, sorted

    @property
    def largest(self) -> int:
        return self.errors[-1] if self.errors else 0

    def percentile(self, fraction: float) -> int | None:
        """The nearest-rank percentile of the errors (None without a checked sample)."""
        if not self.errors:
            return None
        return self.errors[max(1, math.ceil(fraction * len(self.errors))) - 1]


def admission_order(admitted: Sequence[float | None]) -> list[int]:
    """Each visitor's rank in the order of admission: by the time of their admission, those
    not admitted after everyone admitted, and ties by who joined first (the lower index)."""
    by_order = sorted(
        range(len(admitted)),
        key=lambda i: (math.inf if admitted[i] is None else admitted[i], i),
    )
    rank = [0] * len(admitted)
    for position, visitor in enumerate(by_order):
        rank[visitor] = position
    return rank


def true_places(
    samples: Sequence[Sample],
    *,
    joined: Sequence[float],
    admitted: Sequence[float | None],
    gone: Sequence[float | None],
) -> list[int]:
    """The true place of each sample's visitor at the sample's moment. `joined[i]`: when
    visitor i joined the line (math.inf: never); `admitted[i]`: their first admission write;
    `gone[i]`: when they stopped waiting without being admitted (left the line), if they did."""
    rank = admission_order(admitted)
    # (time, kind, visitor or sample): at one moment a join counts before an end, both before
    # a look, so a visitor admitted the moment they joined is never counted as waiting.
    events: list[tuple[float, int, int]] = []
    for visitor, when in enumerate(joined):
        if math.isinf(when):
            continue
        events.append((when, 0, visitor))
        end, gone_at = admitted[visitor], gone[visitor]  # the first of the two that happened
        if gone_at is not None:
            end = gone_at if end is None else min(end, gone_at)
        if end is not None:
            events.append((end, 1, visitor))
    events.extend((sample.at, 2, index) for index, sample in enumerate(samples))
    events.sort()
    # The visitors waiting, by rank: a Fenwick tree (tree[i] sums the i & -i ranks up to i),
    # its loops written out (hundreds of thousands of events in a large run).
    tree = [0] * (len(joined) + 1)
    size = len(tree)
    truth = [0] * len(samples)
    for _, kind, which in events:
        if kind == 2:  # the waiting ranked before the sample's visitor
            i, total = rank[samples[which].visitor], 0
            while i > 0:
                total += tree[i]
                i -= i & -i
            truth[which] = 1 + total
            continue
        delta, i = (1 if kind == 0 else -1), rank[which] + 1
        while i < size:
            tree[i] += delta
            i += i & -i
    return truth


def judge(
    samples: Sequence[Sample],
    *,
    joined: Sequence[float],
    admitted: Sequence[float | None],
    gone: Sequence[float | None],
) -> Verdict:
    """The samples' places against the truth ("at the front", a place below 1, counts as 1)."""
    truth = true_places(samples, joined=joined, admitted=admitted, gone=gone)
    errors = sorted(
        abs(max(1, sample.shown) - true)
        for sample, true in zip(samples, truth, strict=True)
        if sample.shown is not None
    )
    unshown = sum(1 for sample in samples if sample.shown is None)
    return Verdict(
        checked=len(errors),
        unshown=unshown,
        wrong=sum(1 for error in errors if error),
        errors=tuple(errors),
    )
