"""What a simulated scheduled event shows about its draw: pure functions of who joined before the
start and the order visitors were admitted in (the table's own log, never the code under test).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def inversions(values: Sequence[int]) -> int:
    """Pairs i < j with values[i] > values[j] (merge sort: n log n, fit for 100,000)."""
    work = list(values)
    buffer = [0] * len(work)
    count = 0
    width = 1
    while width < len(work):
        for left in range(0, len(work), 2 * width):
            middle = min(left + width, len(work))
            right = min(left + 2 * width, len(work))
            i, j, k = left, middle, left
            while i < middle and j < right:
                if work[i] <= work[j]:
                    buffer[k] = work[i]
                    i += 1
                else:
                    buffer[k] = work[j]
                    count += middle - i
                    j += 1
                k += 1
            buffer[k : k + middle - i] = work[i:middle]
            k += middle - i
            buffer[k : k + right - j] = work[j:right]
            work[left:right] = buffer[left:right]
        width *= 2
    return count


def kendall_tau(order: Sequence[int]) -> float | None:
    """Kendall's tau between 0, 1, 2, ... and `order` (distinct values): 1 for the same order,
    -1 for the reverse, near 0 for a random one; None for fewer than two."""
    n = len(order)
    if n < 2:
        return None
    pairs = n * (n - 1) // 2
    return 1.0 - 2.0 * inversions(order) / pairs


@dataclass(frozen=True)
class PrequeueFigures:
    visitors: int  # joined before the start
    order_tau: float | None  # arrival order against admission order within the pre-queue
    before_later: bool  # every pre-queue visitor admitted before any later visitor
    exceptions: int  # pre-queue visitors not admitted before the first later visitor was


def prequeue_figures(prequeue: Sequence[bool], admission_order: Sequence[int]) -> PrequeueFigures:
    """`prequeue[i]`: visitor i (in join order) joined the pre-queue. `admission_order`: each
    visitor's index in the order of their first admission."""
    drawn = [i for i in admission_order if prequeue[i]]
    first_later = next((n for n, i in enumerate(admission_order) if not prequeue[i]), None)
    total = sum(prequeue)
    before = (
        total
        if first_later is None
        else sum(1 for i in admission_order[:first_later] if prequeue[i])
    )
    exceptions = total - before if first_later is not None else 0
    return PrequeueFigures(
        visitors=total,
        order_tau=kendall_tau(drawn),
        before_later=exceptions == 0,
        exceptions=exceptions,
    )
