"""When the status copies /polling reads are written: the one owner of that decision.

The trigger publishes at the start of every minute; while a minute's consumers run, consumer 0
republishes every STATUS_EVERY_SECONDS so waiting pages see the line move; and in a quiet room
any consumer republishes right after it admits someone (at most QUIET_BUDGET times per
STATUS_EVERY_SECONDS), so the visitor behind is shown their new place at once rather than up
to five seconds later. What a copy holds is `room_state.status_item`.

With the room's `push` (room/push.py), each write also tells subscribed pages when they must be
told: a change (a capacity room filling or emptying, the start's draw) or a resync due; a change
held back (within a second of the last publish) goes with the timer's next write.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import RoomSnapshot, publish_status, read_snapshot

log = logging.getLogger("beekeeper.status")

STATUS_EVERY_SECONDS = 5.0
# The timer's copy is written only when something in it changed, or after this long anyway.
UNCHANGED_REWRITE_SECONDS = 60.0
# Publishes after admissions allowed per STATUS_EVERY_SECONDS: a quiet room's admissions are
# each published at once; a busy room falls back to the periodic copy (ten writes a publish).
QUIET_BUDGET = 5


@dataclass
class StatusPublisher:
    dynamodb: Any
    table: str
    settings: RoomSettings
    periodic: bool  # the one consumer of a minute that also publishes on a timer
    pauses: Pauses = field(kw_only=True)  # the retries' (core/retry.py)
    minute_seconds: float = MINUTE_SECONDS  # the room's minute (the shared state's lattice)
    push: StatePush | None = None  # the room's channel (None: none)
    last: float = -math.inf  # when the status was last looked at
    written: float = -math.inf  # and last written
    _published: RoomSnapshot | None = None
    _recent: deque[float] = field(default_factory=deque)

    def tick(self, now: float) -> None:
        if self.periodic and now - self.last >= STATUS_EVERY_SECONDS:
            self.publish(now, only_changes=True)

    def admitted(self, now: float, admitted_total: int | None) -> None:
        """Someone was just admitted: publish now if the room is quiet enough to afford it."""
        while self._recent and self._recent[0] <= now - STATUS_EVERY_SECONDS:
            self._recent.popleft()
        if len(self._recent) < QUIET_BUDGET:
            self._recent.append(now)
            self.publish(now, admitted_total)

    def final(self, now: float, admitted_total: int | None) -> None:
        if self.periodic:
            self.publish(now, admitted_total)

    def publish(
        self, now: float, admitted_total: int | None = None, *, only_changes: bool = False
    ) -> None:
        self.last = now
        try:
            # Consistent: the admitted counter must include the admission just written.
            snapshot = read_snapshot(
                self.dynamodb, self.table, self.settings, pauses=self.pauses, consistent=True
            )
            if admitted_total is not None and admitted_total > snapshot.admitted_total:
                snapshot = snapshot.with_admitted_total(admitted_total)
            if (
                only_changes
                and snapshot == self._published
                and now - self.written < UNCHANGED_REWRITE_SECONDS
            ):
                return  # the ten copies already say this
            publish_status(
                self.dynamodb,
                self.table,
                snapshot,
                now=now,
                pauses=self.pauses,
                minute_seconds=self.minute_seconds,
                push=self.push,
            )
            self._published, self.written = snapshot, now
        except Exception:
            log.exception("could not publish the status")
