"""When a consumer may admit, and when it receives: one lane of the room's admission lattice.

Pure, no I/O: `LanePacer` says how many visitors the lane may admit at a moment,
`ReceiveRhythm` when and how it asks the queue for them.


The room admits at most `rate` visitors per minute. Each minute's admission span (from
`span_start` to `span_end`, a little shorter than the minute: see `minute_span`) holds exactly
`rate` admission slots, evenly spaced. Slot k falls due at span_start + k x spacing. The
minute's consumers ("lanes") share the slots round-robin: lane i owns slots i, i + lanes,
i + 2 x lanes, ... Because every minute has the same slots at the same offsets, the slots of
any 60 seconds number exactly `rate`, whichever calendar minutes those seconds touch.

A lane may use a slot only once it is due (never early), and keeps at most BANK due slots it
has not used yet: older ones are forfeited. That bank is what lets a visitor who joins a quiet
room go straight in (the slot that fell due a moment ago is still there), and it is the whole
of what any window can admit beyond the rate: each lane's unused due slots, at most one batch
(docs/pipeline.md derives the bound: rate + BANK per lane in any 60 s).

On top of that, a lane never admits more in one sliding second than its share of 1.25 x the
per-second mean plus one batch, so the room as a whole stays within 1.25 x the mean plus one
receive batch in every second, however its lanes catch up.
"""

from __future__ import annotations

import enum
import math
from collections import deque
from dataclasses import dataclass, field

from beekeeper.core.serving import SPAN_MARGIN_FRACTION

MINUTE_SECONDS = 60.0  # local mode may shorten the scheduler's minute for a rehearsal
RECEIVE_BATCH = 10  # SQS's maximum per ReceiveMessage
# Due slots a lane may keep unused: exactly one receive batch, so a backlogged lane can wait
# for a whole batch to fall due without forfeiting any of it.
BANK = RECEIVE_BATCH
PEAK_FACTOR = 1.25
# The lattice leaves the first and the last second of every minute empty (core/serving.py owns
# it: the waiting page extrapolates the serving number on the same lattice).
# Float slack, in slots: a wake-up computed for exactly a slot's due time must count that
# slot, though epoch seconds carry only about 0.2 microseconds of precision.
_EPSILON = 1e-3


def minute_span(minute: int, minute_seconds: float) -> tuple[float, float]:
    """The admission span of `minute`: the minute without its first and last second."""
    start = minute * minute_seconds
    margin = minute_seconds * SPAN_MARGIN_FRACTION
    return start + margin, start + minute_seconds - margin


def slots_in_lane(slots: int, index: int, lanes: int) -> int:
    """How many of `slots` round-robin slots lane `index` of `lanes` owns."""
    if index >= slots:
        return 0
    return (slots - index + lanes - 1) // lanes


def peak_per_second(rate: int, lanes: int, minute_seconds: float) -> float:
    """The most one lane may admit in any sliding second (its share of the room's bound)."""
    share = rate / lanes / minute_seconds
    return PEAK_FACTOR * share + RECEIVE_BATCH / lanes


@dataclass
class LanePacer:
    """The slots one lane owns in one span, and which of them it has used.

    `used` counts the lane's slots from the start of the current segment that are spent:
    admitted, or forfeited because they stayed unused longer than the bank allows. A live rate
    change starts a new segment at the moment of the change, with an empty bank.
    """

    span_start: float
    span_end: float
    rate: int
    index: int
    lanes: int
    minute_seconds: float = MINUTE_SECONDS
    # The current segment: its first slot's time, slot spacing and how many slots the room
    # has in it (this lane owns every lanes-th).
    segment_start: float = field(init=False)
    spacing: float = field(init=False)
    segment_slots: int = field(init=False)
    used: int = field(init=False, default=0)
    # Due slots that stayed unused past the bank (nobody was waiting, or the lane stalled).
    forfeited: int = field(init=False, default=0)
    ceiling: float = field(init=False)
    _recent: deque[tuple[float, int]] = field(init=False, default_factory=deque)
    _in_last_second: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.lanes < 1 or not 0 <= self.index < self.lanes:
            raise ValueError(f"lane {self.index} of {self.lanes} does not exist")
        if self.span_end < self.span_start:
            raise ValueError("the span ends before it starts")
        self._segment(self.span_start, self.rate)

    # -- the lattice ----------------------------------------------------------------------------

    def _segment(self, start: float, rate: int) -> None:
        span = self.span_end - self.span_start
        self.rate = rate
        # `rate` slots per span, so the spacing is the span over the rate.
        self.spacing = span / rate if rate > 0 else math.inf
        self.segment_start = start
        remaining = max(0.0, self.span_end - start)
        self.segment_slots = 0 if rate <= 0 else math.ceil(remaining / self.spacing - _EPSILON)
        self.used = 0
        self.ceiling = peak_per_second(max(rate, 0), self.lanes, self.minute_seconds)

    @property
    def slots(self) -> int:
        """The slots this lane owns in the current segment."""
        return slots_in_lane(self.segment_slots, self.index, self.lanes)

    def slot_time(self, j: int) -> float:
        """When this lane's j-th slot (0-based) of the current segment falls due."""
        return self.segment_start + (self.index + j * self.lanes) * self.spacing

    def due(self, now: float) -> int:
        """How many of this lane's slots have fallen due by `now`."""
        if self.slots == 0 or now < self.slot_time(0) - _EPSILON * self.spacing:
            return 0
        k = math.floor((now - self.segment_start) / self.spacing + _EPSILON)
        return min(self.slots, (k - self.index) // self.lanes + 1)

    def change_rate(self, now: float, rate: int) -> None:
        """A live rate change: from `now` on, the new rate's lattice, with an empty bank."""
        if rate != self.rate:
            self._segment(max(now, self.span_start), rate)

    def restart(self, now: float) -> None:
        """Admitting again after a pause (a hold, a close, `off`): from `now` on, a new
        lattice at the same rate with an empty bank, its first slot due at once."""
        self._segment(max(now, self.span_start), self.rate)

    # -- what may be admitted -------------------------------------------------------------------

    def _forfeit(self, now: float) -> int:
        due = self.due(now)
        if due - self.used > BANK:
            self.forfeited += due - BANK - self.used
            self.used = due - BANK
        return due

    def _forget(self, now: float) -> None:
        while self._recent and self._recent[0][0] <= now - 1.0:
            self._in_last_second -= self._recent.popleft()[1]

    def allowance(self, now: float) -> int:
        """How many visitors this lane may admit at `now`."""
        due = self._forfeit(now)
        self._forget(now)
        under_ceiling = math.floor(self.ceiling - self._in_last_second + _EPSILON)
        return max(0, min(due - self.used, under_ceiling))

    def take(self, count: int, now: float) -> None:
        """`count` visitors were admitted at `now` (count <= the allowance at `now`).

        The allowance is settled at `now`, not when the receive was asked for: a long poll
        that waited must not bring its old bank on top of the bank that built up meanwhile.
        """
        if count <= 0:
            return
        self._forfeit(now)
        self.used += count
        self._recent.append((now, count))
        self._in_last_second += count

    def when_available(self, count: int, now: float) -> float:
        """The earliest time at which `count` admissions are allowed (inf: not in this span)."""
        self._forfeit(now)
        needed = self.used + count
        if needed > self.slots:
            return math.inf
        due_at = self.slot_time(needed - 1)
        self._forget(now)
        if self._in_last_second + count > self.ceiling and self._recent:
            # Wait until enough of the last second's admissions have slid out of it.
            excess = self._in_last_second + count - self.ceiling
            for when, admitted in self._recent:
                excess -= admitted
                if excess <= _EPSILON:
                    due_at = max(due_at, when + 1.0)
                    break
        return max(due_at, now)

    def interval(self, count: int) -> float:
        """How long this lane's lattice takes to bring `count` more slots."""
        return count * self.lanes * self.spacing

    @property
    def exhausted(self) -> bool:
        return self.used >= self.slots


class Flow(enum.Enum):
    """What the queue's last answers say about the line."""

    IDLE = "idle"  # nobody came: long-poll for the next visitor
    BACKLOG = "backlog"  # the last receive came back full: take whole batches as they fall due
    SHORT = "short"  # fewer than asked, just now: a line running dry, or SQS's sampling
    TRICKLE = "trickle"  # the line runs dry between receives: visitors come one by one


# Short receives that go on this long mean the queue runs dry between them: a trickle.
TRICKLE_SECONDS = 0.05
# While visitors trickle in, let a few gather for up to this long before the next receive.
GATHER_SECONDS = 0.25
# A backlogged lane receives once this many of its slots are due (fewer at low rates, where a
# whole batch would take longer than BATCH_FILL_SECONDS to fall due).
BATCH_FILL_SECONDS = 2.0


@dataclass(frozen=True)
class NextReceive:
    want: int  # receive once this many admissions are allowed
    at: float  # and not before this time
    long_poll: bool  # wait on the queue (False: a short receive of whatever is there now)


@dataclass
class ReceiveRhythm:
    """When a lane receives next, and how, from the queue's last answers. Pure.

    - A backlog is taken in whole batches as its slots fall due: few calls per visitor.
    - After a short receive the lane looks again at once without waiting (SQS returns fewer
      than asked from a full queue now and then); if the queue is dry, or the short receives
      go on, visitors are trickling in.
    - A trickle is gathered: a short receive every GATHER_SECONDS at most (a few visitors per
      call, a fraction of a second later), never longer than the lattice takes to bring a
      batch of slots (visitors gathered beyond that could only wait) and never into the
      span's last moments (whoever joins then goes in within the minute).
    - An empty queue is long-polled, so the next visitor is received the moment they join.
    """

    deadline: float
    flow: Flow = Flow.IDLE
    short_since: float = -math.inf
    gather_until: float = -math.inf

    def next(self, pacer: LanePacer, now: float) -> NextReceive:
        if self.flow is Flow.BACKLOG:
            want = max(1, min(largest_batch(pacer), pacer.slots - pacer.used))
            return NextReceive(want, pacer.when_available(want, now), long_poll=True)
        ready = pacer.when_available(1, now)
        if self.flow is Flow.SHORT:
            return NextReceive(1, ready, long_poll=False)
        if self.flow is Flow.TRICKLE:
            return NextReceive(1, max(ready, self.gather_until), long_poll=False)
        return NextReceive(1, ready, long_poll=True)

    def received(self, asked: int, got: int, now: float, pacer: LanePacer) -> None:
        if got >= asked:
            self.flow = Flow.BACKLOG
        elif got == 0:
            self._gather(now, pacer) if self.flow is Flow.SHORT else self._idle()
        elif self.flow in (Flow.SHORT, Flow.TRICKLE):
            if now - self.short_since >= TRICKLE_SECONDS or self.flow is Flow.TRICKLE:
                self._gather(now, pacer)
        else:
            self.flow = Flow.SHORT
            self.short_since = now

    def _idle(self) -> None:
        self.flow = Flow.IDLE

    def _gather(self, now: float, pacer: LanePacer) -> None:
        self.flow = Flow.TRICKLE
        pause = min(GATHER_SECONDS, pacer.interval(largest_batch(pacer)))
        self.gather_until = min(now + pause, self.deadline - GATHER_SECONDS)


def largest_batch(pacer: LanePacer) -> int:
    """How many slots a backlogged lane lets fall due before it receives them at once."""
    per_second = pacer.slots / max(0.001, pacer.span_end - pacer.segment_start)
    return max(1, min(RECEIVE_BATCH, int(pacer.ceiling), int(per_second * BATCH_FILL_SECONDS)))
