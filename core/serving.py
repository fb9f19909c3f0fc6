"""The serving number and the waiting page's rule: the one owner of both.

A visitor's *turn* is the serving number at which their turn comes: their ordinal (their place
in the arrival order), or after a scheduled start's draw `prequeue_base + rank`. The *serving
number* is how many places the line has passed (the status copies' `admitted_total`). The
page learns its turn from the marketing link's redirect (`room#turn=<n>`) or its own /polling
answer, and the serving number from the shared state document (core/shared_state.py), which
the edge serves to everyone alike. Its place is turn - serving.

Between documents the serving number is extrapolated on the room's admission lattice: each
minute holds `flow` slots spread evenly over the minute's span (lambdas/pacing.py admits on
exactly these slots while there is a line), so the count of slots fallen due between two
moments is what the line moves by.

The page's rule, which waiting_room_site/page.js applies and the simulator runs (a test holds
the two equal, tests/js/serving_twin.test.mjs against this module's answers):

- *The place shown* is the serving number extrapolated from the newest history point at least
  DISPLAY_DELAY_SECONDS old, the same point in every copy of the document a page fetched
  lately: every page shows the same serving number at the same moment, so no two visitors
  are shown the same place; a place below 1 is shown as "any moment now", not as a number.
- *Its own /polling* comes only near the turn: at the first moment the serving number,
  extrapolated from the newest point, reaches turn - margin (the margin covers the queue's
  reordering, measured in the simulator: docs/pipeline.md), then every OWN_POLL_EVERY_SECONDS
  until the answer is no longer "waiting" near the front.
- *The document* is fetched every DOCUMENT_EVERY_SECONDS while the page is visible (a hold, a
  close, `off` and a rate change reach the page within STATE_MAX_AGE_SECONDS + that + the
  request), and while hidden at half the time to the predicted own poll, between that and
  HIDDEN_DOCUMENT_MAX_SECONDS (in capacity mode at most half the claim window); a page that
  becomes visible fetches at once.

Standard library only: it ships in the Lambda asset (the producer writes the fragment).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS, Point

# The lattice leaves the first and the last 1/60 of every minute empty (lambdas/pacing.py
# admits on it): consumers started at the minute's turn are ready when the first slot falls
# due, and an admission written a moment late still lands in its own minute.
SPAN_MARGIN_FRACTION = 1 / 60

# The marketing link's redirect tells the page its place without the HttpOnly cookie:
# `room#turn=<ordinal>` (a fragment: never sent to a server, kept by a reload), or
# `room#prequeue` for a place in a scheduled event's pre-queue, whose turn the draw decides.
TURN_FRAGMENT = "turn"
PREQUEUE_FRAGMENT = "prequeue"

DOCUMENT_EVERY_SECONDS = 6
HIDDEN_DOCUMENT_MAX_SECONDS = 300
# The history point the place is extrapolated from is at least this old: every page's copy of
# the document holds it (a copy is at most STATE_MAX_AGE_SECONDS old at the edge and was
# fetched at most DOCUMENT_EVERY_SECONDS ago), plus a second for the request and the clocks.
DISPLAY_DELAY_SECONDS = DOCUMENT_EVERY_SECONDS + STATE_MAX_AGE_SECONDS + 1
OWN_POLL_EVERY_SECONDS = 2
# Beyond this long after the newest point the serving number is not extrapolated further: the
# room has published nothing new (the status is written every few seconds while anyone is
# admitted, and every minute anyway), so the line is not moving as the lattice says.
EXTRAPOLATE_AT_MOST_SECONDS = 75
# The margin: the page's first own poll comes when the serving number is predicted to be this
# many seconds of admissions before its turn (at least MIN_MARGIN places), so that a visitor
# the queue admits a little early is noticed at once. Measured: docs/pipeline.md, "The margin".
MARGIN_SECONDS = 0.5
MIN_MARGIN = 1


def span(minute_seconds: float) -> tuple[float, float]:
    """The admission span's start offset in a minute, and its length."""
    margin = minute_seconds * SPAN_MARGIN_FRACTION
    return margin, minute_seconds - 2 * margin


def due_by(at: float, flow: int, minute_seconds: float) -> int:
    """How many lattice slots at `flow` a minute have fallen due by `at` (epoch seconds),
    counted from the epoch: the minutes before times `flow`, and those of `at`'s minute whose
    time has come (slot k of a minute falls due at span start + k x span / flow)."""
    if flow <= 0:
        return 0
    minute = math.floor(at / minute_seconds)
    start, length = span(minute_seconds)
    offset = at - minute * minute_seconds - start
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
    found = points[0]
    for point in points:
        if point.at_ms <= limit:
            found = point
    return found


def serving_at(
    points: Sequence[Point], at: float, *, delay: float, minute_seconds: float
) -> int | None:
    """The serving number at `at`: the anchor's, plus the lattice slots fallen due since it at
    its flow (for at most EXTRAPOLATE_AT_MOST_SECONDS). None without points."""
    found = anchor(points, at, delay)
    if found is None:
        return None
    since = found.at_ms / 1000
    until = min(at, since + EXTRAPOLATE_AT_MOST_SECONDS)
    if until <= since or found.flow <= 0:
        return found.serving
    moved = due_by(until, found.flow, minute_seconds) - due_by(since, found.flow, minute_seconds)
    return found.serving + moved


def shown_serving(points: Sequence[Point], at: float, *, minute_seconds: float) -> int | None:
    """The serving number every page shows at `at` (the place is turn minus it)."""
    return serving_at(points, at, delay=DISPLAY_DELAY_SECONDS, minute_seconds=minute_seconds)


def margin(flow: int, minute_seconds: float) -> int:
    """Places before its turn at which a page starts asking for itself."""
    return max(MIN_MARGIN, math.ceil(flow * MARGIN_SECONDS / minute_seconds))


def first_own_poll(
    points: Sequence[Point], turn: int, now: float, *, minute_seconds: float
) -> float | None:
    """When the page first calls its own /polling: the first moment from `now` at which the
    serving number, extrapolated from the newest point, reaches turn - margin; `now` when it
    already has; None when the line is not moving (no flow) or the moment is beyond the
    extrapolation's reach (a later document will say)."""
    newest = anchor(points, now, 0.0)
    if newest is None:
        return None
    target = turn - margin(newest.flow, minute_seconds)
    serving = serving_at(points, now, delay=0.0, minute_seconds=minute_seconds)
    if serving is not None and serving >= target:
        return now
    if newest.flow <= 0:
        return None
    since = newest.at_ms / 1000
    needed = target - newest.serving  # slots after the newest point
    index = due_by(since, newest.flow, minute_seconds) + needed - 1
    when = slot_time(index, newest.flow, minute_seconds)
    if when > since + EXTRAPOLATE_AT_MOST_SECONDS:
        return None
    return max(now, when)


def document_delay(
    *, visible: bool, now: float, own_poll_at: float | None, claim_seconds: int = 0
) -> float:
    """Seconds until the page fetches the document again."""
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
    "DISPLAY_DELAY_SECONDS",
    "DOCUMENT_EVERY_SECONDS",
    "EXTRAPOLATE_AT_MOST_SECONDS",
    "HIDDEN_DOCUMENT_MAX_SECONDS",
    "MARGIN_SECONDS",
    "MIN_MARGIN",
    "OWN_POLL_EVERY_SECONDS",
    "PREQUEUE_FRAGMENT",
    "SPAN_MARGIN_FRACTION",
    "TURN_FRAGMENT",
    "anchor",
    "document_delay",
    "due_by",
    "first_own_poll",
    "margin",
    "room_fragment",
    "serving_at",
    "shown_serving",
    "slot_time",
    "span",
]
