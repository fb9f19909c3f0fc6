"""The simulated crowd: when visitors join, and what their waiting room pages are shown.

Visitors join through the real producer (`Producer.join_line`), so their ordinals, the arrival
counters and consumer wake-ups are the production code's. A sample of them also polls as the
waiting room page does (first poll FIRST_POLL_AFTER_JOIN_SECONDS after joining, then after
`poll_after`; core/page_timing.py), and each poll's position, computed from the table exactly
as /polling computes it, is compared with the truth: one more than the visitors who joined
earlier and are still waiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from beekeeper.core.datamodel import Token, status_copy_for, status_key
from beekeeper.core.page_timing import FIRST_POLL_AFTER_JOIN_SECONDS
from beekeeper.core.polling import poll_after_seconds, position
from beekeeper.lambdas.room_state import read_number
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable


class WaitingCount:
    """A Fenwick tree over visitors in join order: how many of the first k are still waiting."""

    def __init__(self, size: int) -> None:
        self._tree = [0] * (size + 1)

    def add(self, index: int, delta: int) -> None:
        i = index + 1
        while i < len(self._tree):
            self._tree[i] += delta
            i += i & -i

    def before(self, index: int) -> int:
        """Waiting visitors among 0 .. index - 1."""
        total, i = 0, index
        while i > 0:
            total += self._tree[i]
            i -= i & -i
        return total


@dataclass
class PositionProbe:
    scheduler: Scheduler
    table: FakeTable
    visitors: int
    sample_every: int  # visitor i polls when i % sample_every == 0
    polls: int = 0
    errors: int = 0
    largest_error: int = 0
    # Seconds from each polling visitor's admission to their page noticing it.
    noticed_after: list[float] = field(default_factory=list)
    _waiting: WaitingCount = field(init=False)
    _admitted: dict[int, float] = field(init=False, default_factory=dict)
    # Visitors the line passed over without admitting them (they left it; capacity mode).
    _passed: set[int] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self._waiting = WaitingCount(self.visitors)

    def joined(self, index: int, token: Token) -> None:
        self._waiting.add(index, 1)
        if index % self.sample_every == 0:
            first_poll = self.scheduler.now + FIRST_POLL_AFTER_JOIN_SECONDS
            self.scheduler.at(first_poll, lambda: self._poll(index, token))

    def waiting_only(self, index: int) -> None:
        """A visitor who waits (and counts ahead of later ones) but whose page is not probed."""
        self._waiting.add(index, 1)

    def admitted(self, index: int, when: float) -> None:
        if index not in self._admitted and index not in self._passed:
            self._admitted[index] = when
            self._waiting.add(index, -1)

    def passed(self, index: int, when: float) -> None:
        """The line passed over a visitor who left it: no longer ahead of anyone, no page."""
        if index not in self._admitted and index not in self._passed:
            self._passed.add(index)
            self._waiting.add(index, -1)

    def _poll(self, index: int, token: Token) -> None:
        if index in self._passed:
            return
        if index in self._admitted:
            self.noticed_after.append(self.scheduler.now - self._admitted[index])
            return
        status = self.table.items.get(status_key(status_copy_for(token.ordinal)))
        admitted_total = read_number(status, "admitted_total")
        rate = read_number(status, "rate")
        shown = position(token.ordinal, admitted_total)
        truth = 1 + self._waiting.before(index)
        self.polls += 1
        if shown != truth:
            self.errors += 1
            self.largest_error = max(self.largest_error, abs(shown - truth))
        wait = poll_after_seconds(shown, rate)
        self.scheduler.at(self.scheduler.now + wait, lambda: self._poll(index, token))
