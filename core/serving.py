"""The serving number and the waiting page's rule: the one owner of both.

A visitor's *turn* is the serving number at which their turn comes: their ordinal (their place
in the arrival order), or after a scheduled start's draw `prequeue_base + rank`. The *serving
number* is how many places the line has passed (the status copies' `admitted_total`). The
page learns its turn from the marketing link's redirect (`room#turn=<n>`) or its own /polling
answer, and the serving number from the shared state document (core/shared_state.py), which
the edge serves to everyone alike. Its place is turn - serving.

Between documents the serving number is extrapolated on the room's admission lattice: each
minute holds `flow` slots spread evenly over the minute's span (room/pacing.py admits on
exactly these slots while there is a line), so the count of slots fallen due between two
moments is what the line moves by.

The page's rule, which waiting_room_site/page.js applies and the simulator runs (a test holds
the two equal, tests/js/serving_twin.test.mjs against this module's answers):

- *The place shown* is the serving number extrapolated from the newest history point at least
  DISPLAY_DELAY_SECONDS old, the same point in every copy of the document a page fetched
  lately, and bounded by the line that point states (its waiting, and its joins a minute
  since): every page shows the same serving number at the same moment, so no two visitors
  are shown the same place; a place below 1 is shown as "any moment now", not as a number.
- *Its own /polling* comes only at its turn: the margin (`margin_seconds`) after the moment
  the serving number, extrapolated from the newest point, reaches the turn (the margin covers
  the queue's reordering, measured in the simulator: docs/pipeline.md), at once when the page
  loads at the front, then every OWN_POLL_EVERY_SECONDS while the serving number says the turn
  has come, until the answer is the admission. An answer that the turn is still ahead is itself
  a point the page plans from (`with_answer`) until the shared state has a newer one.
- *The document* is fetched every DOCUMENT_EVERY_SECONDS while the page is visible (a hold, a
  close, `off` and a rate change reach the page within STATE_MAX_AGE_SECONDS + that + the
  request), and while hidden at half the time to the predicted own poll, between that and
  HIDDEN_DOCUMENT_MAX_SECONDS (in capacity mode at most half the claim window), timed by the
  turn's predicted moment while the own poll is beyond the extrapolation's reach; a page that
  becomes visible fetches at once.

Standard library only: it ships in the Lambda asset (the producer writes the fragment).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS, Point

# The lattice leaves the first and the last 1/60 of every minute empty (room/pacing.py
# admits on it): consumers started at the minute's turn are ready when the first slot falls
# due, and an admission written a moment late still lands in its own minute.
SPAN_MARGIN_FRACTION = 1 / 60

# The marketing link's redirect tells the page its place without the HttpOnly cookie:
# `room#turn=<ordinal>` (a fragment: never sent to a server, kept by a reload), or
# `room#prequeue` for a place in a scheduled event's pre-queue, whose turn the draw decides.
TURN_FRAGMENT = "turn"
PREQUEUE_FRAGMENT = "prequeue"

# A slot counts as due this long before its time: points are stamped to the millisecond.
SLOT_TOLERANCE_SECONDS = 0.001
# A line at most this fast (a minute) moves less than a place a second: its pages redraw at its
# slots too, not only at whole seconds; a faster one's every FAST_MOMENT_SECONDS
# (`shown_moment`).
SLOT_MOMENTS_AT_MOST = 60
FAST_MOMENT_SECONDS = 0.25
DOCUMENT_EVERY_SECONDS = 6
HIDDEN_DOCUMENT_MAX_SECONDS = 300
# A page of a closed event keeps listening for a resume at this slower pace (hidden: as slowly
# as a hidden page far from its turn), until the visitor leaves it.
CLOSED_DOCUMENT_EVERY_SECONDS = 30
# After this long without an answer to its fetches (the shared state's, or its own /polling
# while it relies on it) a page says the room is out of reach; its place and estimate wait.
OUT_OF_REACH_SECONDS = 15
# The history point the place is extrapolated from is at least this old: every page's copy of
# the document holds it (a copy is at most STATE_MAX_AGE_SECONDS old at the edge and was
# fetched at most DOCUMENT_EVERY_SECONDS ago), plus a second for the request and the clocks.
DISPLAY_DELAY_SECONDS = DOCUMENT_EVERY_SECONDS + STATE_MAX_AGE_SECONDS + 1
OWN_POLL_EVERY_SECONDS = 2
# A hold (`beekeeper hold`) takes effect this long after the command: every waiting page's
# anchor then carries the moment (a point's `until_ms`), so the pages stop their line where the
# consumers stop, and the place a held page shows is the truth, not a prediction that ran on.
HOLD_NOTICE_SECONDS = DISPLAY_DELAY_SECONDS + 1
# Beyond this long after the newest point the serving number is not extrapolated further: the
# room has published nothing new (the status is written every few seconds while anyone is
# admitted, and every minute anyway), so the line is not moving as the lattice says.
EXTRAPOLATE_AT_MOST_SECONDS = 75
# The margin: the page's own /polling comes this long after the moment the serving number is
# predicted to reach its turn, so that a visitor the queue admits a little after the serving
# number passed their place is found admitted at the first ask. A standard queue hands
# messages over out of order: the admission order differs from the turns by up to
# MARGIN_PLACES places (measured in the simulator: docs/pipeline.md, "The margin"), which is
# that many places' time at the line's flow; at least MIN_MARGIN_SECONDS (a busy line's
# counter moves a batch at a time), at most MAX_MARGIN_SECONDS (a slow line: a later
# admission is found at the next ask, 2 s on, rather than every notice waiting longer).
MARGIN_PLACES = 25
MIN_MARGIN_SECONDS = 0.25
MAX_MARGIN_SECONDS = 1.0


def margin_seconds(flow: int, minute_seconds: float) -> float:
    """How long after the predicted moment of its turn a page first asks (see MARGIN_PLACES)."""
    if flow <= 0:
        return MAX_MARGIN_SECONDS
    places = MARGIN_PLACES * minute_seconds / flow
    return min(MAX_MARGIN_SECONDS, max(MIN_MARGIN_SECONDS, places))


def span(minute_seconds: float) -> tuple[float, float]:
    """The admission span's start offset in a minute, and its length."""
    margin = minute_seconds * SPAN_MARGIN_FRACTION
    return margin, minute_seconds - 2 * margin


def due_by(at: float, flow: int, minute_seconds: float) -> int:
    """How many lattice slots at `flow` a minute have fallen due by `at` (epoch seconds),
    counted from the epoch: the minutes before times `flow`, and those of `at`'s minute whose
    time has come (slot k of a minute falls due at span start + k x span / flow), a slot
    counted from SLOT_TOLERANCE_SECONDS before its time (a point stamped the millisecond of an
    admission on a slot counts that slot, whatever the rounding of span / flow)."""
    if flow <= 0:
        return 0
    minute = math.floor(at / minute_seconds)
    start, length = span(minute_seconds)
    offset = at - minute * minute_seconds - start + SLOT_TOLERANCE_SECONDS
    within = 0 if offset < 0 else min(flow, math.floor(offset * flow / length) + 1)
    return minute * flow + within


def slot_time(index: int, flow: int, minute_seconds: float) -> float:
    """When slot `index` (0-based, counted from the epoch as `due_by` counts) falls due."""
    minute = index // flow
    start, length = span(minute_seconds)
    return minute * minute_seconds + start + (index - minute * flow) * length / flow


def anchor(points: Sequence[Point], at: float, delay: float) -> Point | None:
    """The newest point at least `delay` seconds before `at` (the oldest one when none is that
    old yet); None without points."""
    if not points:
        return None
    limit = (at - delay) * 1000
    # The last point in the list's order that is old enough: looked for from the end, where
    # it is (a history is in time order), not through every point.
    for point in reversed(points):
        if point.at_ms <= limit:
            return point
    return points[0]


def extrapolated(point: Point, at: float, *, minute_seconds: float) -> int:
    """`point`'s serving number moved on to `at` on the lattice at its flow: for at most
    EXTRAPOLATE_AT_MOST_SECONDS, and not past the hold it announces (`until_ms`)."""
    since = point.at_ms / 1000
    until = min(at, since + EXTRAPOLATE_AT_MOST_SECONDS)
    if point.until_ms:
        until = min(until, point.until_ms / 1000)
    if until <= since or point.flow <= 0:
        return point.serving
    moved = due_by(until, point.flow, minute_seconds) - due_by(since, point.flow, minute_seconds)
    return point.serving + moved


def serving_at(
    points: Sequence[Point], at: float, *, delay: float, minute_seconds: float
) -> int | None:
    """The serving number at `at`: the anchor's, plus the lattice slots fallen due since it at
    its flow (`extrapolated`); while no point is `delay` old, the oldest point's own, not moved
    (a room's first seconds: every copy holds that point, and a copy fetched before any was
    published has none newer to extrapolate past it). None without points."""
    found = anchor(points, at, delay)
    if found is None:
        return None
    return _served(found, at, delay=delay, minute_seconds=minute_seconds)


def _served(found: Point, at: float, *, delay: float, minute_seconds: float) -> int:
    """`serving_at` from its anchor, `found`."""
    if found.at_ms / 1000 > at - delay:
        return found.serving
    return extrapolated(found, at, minute_seconds=minute_seconds)


def shown_serving(points: Sequence[Point], at: float, *, minute_seconds: float) -> int | None:
    """The serving number every page shows at `at` (the place is turn minus it): extrapolated
    from the anchor, but never past the visitors the anchor's line says have joined by `at`
    (its waiting, plus its joins a minute since): a line that emptied, or a burst into an idle
    room, is not shown moving faster than people came; and never below the anchor's floor, the
    most any page showed before (a prediction that ran ahead holds the places until the line
    catches up)."""
    line = shown_line(points, at, minute_seconds=minute_seconds)
    return None if line is None else line.serving


def next_floor(points: Sequence[Point], at_ms: int, *, minute_seconds: float) -> int | None:
    """The floor of a point published at `at_ms` after `points` (the history so far): the most
    the pages show before it becomes their anchor (the last moment they show before it is
    DISPLAY_DELAY_SECONDS old), from the points before it. None without points."""
    if not points:
        return None
    # The last moment a page shows before then (a whole second, or a slot in a slow line).
    before = at_ms / 1000 + DISPLAY_DELAY_SECONDS - SLOT_TOLERANCE_SECONDS
    moment = shown_moment(points, before, minute_seconds=minute_seconds)
    shown = shown_serving(points, moment, minute_seconds=minute_seconds)
    floors = [shown or 0, *(point.floor or 0 for point in points)]
    return max(floors)


def shown_moment(points: Sequence[Point], at: float, *, minute_seconds: float) -> float:
    """The moment whose place a page shows at `at`, the same for every page whenever it
    redraws: the last quarter second in a line moving a place a second or more (the place
    shown lags the line by at most a quarter second's admissions), the whole second in a
    slower one, or there the anchor's last slot fallen due since it, so that an admission on
    the slot shows at once (the page redraws at each: `next_moment`)."""
    found = anchor(points, at, DISPLAY_DELAY_SECONDS)
    if found is not None and found.flow > SLOT_MOMENTS_AT_MOST:
        return math.floor(at / FAST_MOMENT_SECONDS) * FAST_MOMENT_SECONDS
    whole = float(math.floor(at))
    if found is None or found.flow <= 0:
        return whole
    due = due_by(at, found.flow, minute_seconds)
    if due <= 0:
        return whole
    slot = slot_time(due - 1, found.flow, minute_seconds)
    return max(whole, slot) if slot <= at + SLOT_TOLERANCE_SECONDS else whole


def next_moment(points: Sequence[Point], at: float, *, minute_seconds: float) -> float:
    """When the page redraws next after `at`: the next moment `shown_moment` gives."""
    found = anchor(points, at, DISPLAY_DELAY_SECONDS)
    if found is not None and found.flow > SLOT_MOMENTS_AT_MOST:
        return (math.floor(at / FAST_MOMENT_SECONDS) + 1) * FAST_MOMENT_SECONDS
    whole = float(math.floor(at) + 1)
    if found is None or found.flow <= 0:
        return whole
    slot = slot_time(due_by(at, found.flow, minute_seconds), found.flow, minute_seconds)
    return min(whole, slot) if slot > at else whole


def place_shown(
    points: Sequence[Point], turn: int, at: float, *, minute_seconds: float
) -> int | None:
    """The place the page of `turn` shows at `at` (below 1: "at the front"), or None while it
    shows no number: the line its anchor states ran out before the turn (everyone it knows of
    would have been admitted by now), so the visitor joined after what every page knows, and
    how far the line has moved since is not known to every page alike."""
    line = shown_line(points, at, minute_seconds=minute_seconds)
    return None if line is None else line.place(turn)


@dataclass(frozen=True)
class ShownLine:
    """What every page shows of the line at one moment, whatever its turn: `place` gives a
    turn's (one copy and one moment answer every page's place alike)."""

    serving: int  # the serving number shown (`shown_serving`)
    lattice: int  # the anchor's serving number moved on the lattice (`serving_at`)
    joined: int | None  # the visitors the anchor's line says have joined by then

    def place(self, turn: int) -> int | None:
        """`place_shown` for `turn`."""
        if self.joined is not None and self.joined < self.lattice and turn > self.serving:
            return None
        return turn - self.serving


def shown_line(points: Sequence[Point], at: float, *, minute_seconds: float) -> ShownLine | None:
    """The line as pages show it at `at` from `points` (None without points): `shown_serving`
    and `serving_at` from the one anchor both take."""
    found = anchor(points, at, DISPLAY_DELAY_SECONDS)
    if found is None:
        return None
    lattice = _served(found, at, delay=DISPLAY_DELAY_SECONDS, minute_seconds=minute_seconds)
    serving = max(_within_line(found, lattice, at), found.floor or 0)
    return ShownLine(serving, lattice, _joined_by(found, at))


def first_own_poll(
    points: Sequence[Point],
    turn: int,
    now: float,
    *,
    minute_seconds: float,
    loading: bool = False,
) -> float | None:
    """When the page calls its own /polling: now when the serving number, extrapolated from
    the newest point, has reached its turn (or, as the page loads, is one place short: a
    visitor let straight in is noticed at once); else the margin after the moment it is
    predicted to reach it; None when the line is not moving (no flow) or that moment is beyond
    the extrapolation's reach (a later document will say)."""
    newest = anchor(points, now, 0.0)
    if newest is None:
        return None
    serving = _served(newest, now, delay=0.0, minute_seconds=minute_seconds)
    serving = _within_line(newest, serving, now)
    if serving >= turn or (loading and serving >= turn - 1):
        return now
    if newest.flow <= 0:
        return None
    since = newest.at_ms / 1000
    index = due_by(since, newest.flow, minute_seconds) + (turn - newest.serving) - 1
    reached = slot_time(index, newest.flow, minute_seconds)
    when = reached + margin_seconds(newest.flow, minute_seconds)
    arrivals = newest.arrivals
    if arrivals is not None and turn > arrivals:
        # The line the point states reaches the turn only as people join.
        if newest.joins <= 0:
            return None
        joined = since + (turn - arrivals) * 60 / newest.joins
        reached, when = max(reached, joined), max(when, joined)
    # The reach is the serving number's, not the margin's: a turn the extrapolation reaches
    # just inside its limit is asked for the margin after it, as any other; a turn beyond an
    # announced hold is not reached before it.
    if reached > since + EXTRAPOLATE_AT_MOST_SECONDS or _held_before(newest, reached):
        return None
    return max(now, when)


def turn_due_at(
    points: Sequence[Point], turn: int, now: float, *, minute_seconds: float
) -> float | None:
    """When the newest point's flow brings the serving number to `turn`, however far ahead
    (no extrapolation limit, no margin): what a hidden page times its next document by while
    its own /polling is still beyond the extrapolation's reach. None when the line is not
    moving."""
    newest = anchor(points, now, 0.0)
    if newest is None or newest.flow <= 0:
        return None
    since = newest.at_ms / 1000
    index = due_by(since, newest.flow, minute_seconds) + (turn - newest.serving) - 1
    reached = slot_time(index, newest.flow, minute_seconds)
    return None if _held_before(newest, reached) else reached


def _held_before(point: Point, moment: float) -> bool:
    """`point` announces a hold that stops its line before `moment`."""
    return bool(point.until_ms) and moment > point.until_ms / 1000 + SLOT_TOLERANCE_SECONDS


def _joined_by(point: Point, at: float) -> int | None:
    """The visitors `point`'s line says have joined by `at` (None when it does not say)."""
    arrivals = point.arrivals
    if arrivals is None:
        return None
    elapsed = min(max(0.0, at - point.at_ms / 1000), EXTRAPOLATE_AT_MOST_SECONDS)
    return arrivals + math.floor(point.joins * elapsed / 60)


def _within_line(point: Point, serving: int, at: float) -> int:
    """`serving` bounded by the visitors `point`'s line says have joined by `at`."""
    joined = _joined_by(point, at)
    return serving if joined is None else max(point.serving, min(serving, joined))


def answer_point(
    points: Sequence[Point], turn: int, position: int, updated_at: int
) -> Point | None:
    """What the page's own /polling answer says of the line: the serving number its status
    copy held (turn - position) when it was written (`updated_at`, whole seconds), moving at
    the shared state's newest flow. None without a shared state."""
    if not points or updated_at <= 0:
        return None
    return Point(updated_at * 1000, turn - position, points[-1].flow)


def with_answer(points: Sequence[Point], answered: Point | None) -> tuple[Point, ...]:
    """The points the page plans its own /polling from: the shared state's, and its last own
    answer's when that is newer than their newest (a burst the copy it holds has not shown
    yet: the answer, not the copy, says the turn is still ahead). The place shown comes from
    the shared state's points alone (every page shows the same)."""
    if answered is None or (points and answered.at_ms <= points[-1].at_ms):
        return tuple(points)
    return (*points, answered)


def document_predates(points: Sequence[Point], turn: int, now: float) -> bool:
    """The document was published before this visitor came: its newest point's line (the
    visitors joined, and joining) does not reach the turn the page holds (a burst into an
    idle room, before the edge's copy shows it). The page fetches it again sooner."""
    newest = anchor(points, now, 0.0)
    joined = None if newest is None else _joined_by(newest, now)
    return joined is not None and turn > joined


def document_delay(
    *,
    visible: bool,
    now: float,
    own_poll_at: float | None,
    claim_seconds: int = 0,
    predates: bool = False,
    closed: bool = False,
) -> float:
    """Seconds until the page fetches the document again: at once renewed when the document
    predates the visitor (at the page's first, `document_predates`). `own_poll_at`: the
    predicted own /polling, or while that is beyond the extrapolation's reach the turn's
    predicted moment (`turn_due_at`): a hidden page halves the time to it, so that a fetch
    comes within the reach before the turn does."""
    if closed:
        # The event is over: listening for a resume, slowly.
        return float(CLOSED_DOCUMENT_EVERY_SECONDS if visible else HIDDEN_DOCUMENT_MAX_SECONDS)
    if predates:
        return float(STATE_MAX_AGE_SECONDS)
    if visible:
        return float(DOCUMENT_EVERY_SECONDS)
    most = float(HIDDEN_DOCUMENT_MAX_SECONDS)
    if claim_seconds > 0:
        most = min(most, max(DOCUMENT_EVERY_SECONDS, claim_seconds / 2))
    if own_poll_at is None:
        return most
    return min(most, max(float(DOCUMENT_EVERY_SECONDS), (own_poll_at - now) / 2))


def room_fragment(turn: int | None) -> str:
    """The fragment of the marketing link's redirect to the page: the turn, or `prequeue`."""
    return PREQUEUE_FRAGMENT if turn is None else f"{TURN_FRAGMENT}={turn}"


__all__ = [
    "CLOSED_DOCUMENT_EVERY_SECONDS",
    "DISPLAY_DELAY_SECONDS",
    "DOCUMENT_EVERY_SECONDS",
    "EXTRAPOLATE_AT_MOST_SECONDS",
    "FAST_MOMENT_SECONDS",
    "HIDDEN_DOCUMENT_MAX_SECONDS",
    "HOLD_NOTICE_SECONDS",
    "MARGIN_PLACES",
    "MAX_MARGIN_SECONDS",
    "MIN_MARGIN_SECONDS",
    "OUT_OF_REACH_SECONDS",
    "OWN_POLL_EVERY_SECONDS",
    "PREQUEUE_FRAGMENT",
    "SLOT_MOMENTS_AT_MOST",
    "SLOT_TOLERANCE_SECONDS",
    "SPAN_MARGIN_FRACTION",
    "TURN_FRAGMENT",
    "anchor",
    "answer_point",
    "document_delay",
    "document_predates",
    "due_by",
    "extrapolated",
    "first_own_poll",
    "margin_seconds",
    "next_floor",
    "next_moment",
    "place_shown",
    "room_fragment",
    "serving_at",
    "shown_moment",
    "shown_serving",
    "slot_time",
    "span",
    "turn_due_at",
    "with_answer",
]
