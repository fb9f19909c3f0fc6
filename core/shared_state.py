"""The shared state document: one public answer, the same for every visitor (GET /state).

What a waiting page needs besides its own place in the arrival order (its "turn"): the
serving number (the visitors the line has passed: admitted, and in capacity mode left and
passed over), the rate and the flow the estimate uses, whether the room is open, off, paused
or closed (with the operator's message), a scheduled start and its draw, a capacity room's
inside / max / turnover, when the status was written, and the serving number's recent history.
API Gateway answers it from the status copy `status#0` through the templates
vtl/state-*.vtl (a route of the registry, core/routes.py), and the edge keeps it
STATE_MAX_AGE_SECONDS (core/edge.py), so a million waiting pages cost the origin a handful of
requests a second. docs/pipeline.md, "The shared state", says how the page uses it.

The history: each time the status copies are published, copy 0 gets one more point (when,
the serving number, the flow then, and the line then: the visitors waiting and the joins a
minute lately, which bound how far the place shown may be extrapolated; the least serving
number the pages show from the moment the point is their anchor on, so that a place shown
never goes back up; and when an announced hold stops the flow); points older than
HISTORY_SECONDS are dropped (the newest such one is kept as the anchor) and at most
HISTORY_POINTS are kept. Any copy of the document a page fetched within the last few seconds
therefore holds every point a moment ago, and the place a page shows is a function of those
points and the clock alone (core/serving.py): two pages holding different copies show the same
serving number at the same moment.

The room also pushes the document to subscribed pages (core/push.py): `document` is the
template's answer computed in Python, held equal to it by tests/unit/test_state_document.py,
so a pushed document and a fetched one are the same JSON. Its `seq` is the room's last push's
sequence number (0 before the first): a page keeps whichever document, fetched or pushed, has
the higher `seq` (docs/pipeline.md, "The push channel").

Standard library only: it ships in the Lambda asset.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from beekeeper.core.schedule import MESSAGE_PATTERN
from beekeeper.core.settings import capped

# The edge and browsers keep the document at most this long (issue 26: at most 2 s).
STATE_MAX_AGE_SECONDS = 2

HISTORY_SECONDS = 60
HISTORY_POINTS = 24
# The joins a minute a point states are measured over at least this long (the newest earlier
# point at least this old, else the oldest one).
JOINS_OVER_SECONDS = 1
# "<ms>:<serving>:<flow>:<waiting>:<joins>:<floor>:<until ms>" points (the last four, or the
# last two, may be absent: a point written before they were), space-separated, oldest first:
# what the publisher writes and the template checks again before placing it in the answer (a
# copy that does not match is answered without a history).
_POINT = r"[0-9]{1,15}:[0-9]{1,15}:[0-9]{1,7}(:[0-9]{1,15}:[0-9]{1,9}(:[0-9]{1,15}:[0-9]{1,15})?)?"
HISTORY_PATTERN = rf"^{_POINT}( {_POINT}){{0,{HISTORY_POINTS - 1}}}$"
_HISTORY = re.compile(HISTORY_PATTERN)

# The document's `state`, by priority: the room is off (the page sends the visitor to the
# shop), the event is over, the line is held, a scheduled start is ahead, the start has come
# and the order is being drawn, or the line is open.
OFF = "off"
CLOSED = "closed"
PAUSED = "paused"
PREQUEUE = "prequeue"
DRAWING = "drawing"
OPEN = "open"
STATES = (OFF, CLOSED, PAUSED, PREQUEUE, DRAWING, OPEN)


@dataclass(frozen=True)
class Point:
    """The serving number at a moment, and the flow (visitors a minute) it moved at after it;
    a flow of 0: nobody is being admitted (held, closed, off, or waiting for the draw). The
    line then, when known: the visitors waiting, and the joins a minute lately (the serving
    number can not pass the visitors who have joined: core/serving.py bounds the place shown
    by them). `floor`: the serving number the pages showed by the moment this point became
    their anchor (core.serving.next_floor; None: not stated), below which the pages never go
    again. `until_ms`: an announced hold stops the flow then (0: none announced)."""

    at_ms: int
    serving: int
    flow: int
    waiting: int | None = None
    joins: int = 0
    floor: int | None = None
    until_ms: int = 0

    @property
    def arrivals(self) -> int | None:
        """The visitors who had joined by then (None when the point does not say)."""
        return None if self.waiting is None else self.serving + self.waiting

    def text(self) -> str:
        line = "" if self.waiting is None else f":{self.waiting}:{self.joins}"
        if self.waiting is not None and self.floor is not None:
            line += f":{self.floor}:{self.until_ms}"
        return f"{self.at_ms}:{self.serving}:{self.flow}{line}"


# A status write reads the same history three times (its floor, its joins, its publish), and a
# room's history changes only when it is written: the points of the last few are kept. Points
# are immutable, so a kept tuple can be handed to any caller.
@functools.lru_cache(maxsize=64)
def parse_history(text: str) -> tuple[Point, ...]:
    """The points of a history as written (nothing, when it is not well formed)."""
    if not text or not _HISTORY.fullmatch(text):
        return ()
    points = []
    for part in text.split(" "):
        fields = [int(field) for field in part.split(":")]
        if len(fields) == 7:
            at_ms, serving, flow, waiting, joins, floor, until_ms = fields
            points.append(
                Point(
                    at_ms,
                    serving,
                    flow,
                    waiting=waiting,
                    joins=joins,
                    floor=floor,
                    until_ms=until_ms,
                )
            )
        elif len(fields) == 5:
            at_ms, serving, flow, waiting, joins = fields
            points.append(Point(at_ms, serving, flow, waiting=waiting, joins=joins))
        else:
            at_ms, serving, flow = fields
            points.append(Point(at_ms, serving, flow))
    return tuple(points)


def joins_per_minute(history: str, at_ms: int, arrivals: int) -> int:
    """The joins a minute from the history's newest point at least JOINS_OVER_SECONDS before
    `at_ms` (else its oldest) that states its line, to `arrivals` at `at_ms`; 0 without one."""
    stated = [p for p in parse_history(history) if p.arrivals is not None and p.at_ms < at_ms]
    if not stated:
        return 0
    limit = at_ms - JOINS_OVER_SECONDS * 1000
    base = stated[0]
    for point in stated:
        if point.at_ms <= limit:
            base = point
    joined = max(0, arrivals - (base.arrivals or 0))
    return round(joined * 60_000 / (at_ms - base.at_ms))


def extend_history(text: str, point: Point, *, anchor_age_seconds: float = 0.0) -> str:
    """The history with `point` appended: points older than HISTORY_SECONDS before it dropped
    but the newest of those (the anchor a page extrapolates from), at most HISTORY_POINTS, in
    time order. A point older than the newest is not added (a clock behind another's), nor one
    that would push out the newest point at least `anchor_age_seconds` old (the pages' display
    delay): however often the room publishes, every copy holds the point each page reading it
    anchors on, and a point once given is never taken back from a copy while it may be one."""
    points = list(parse_history(text))
    unchanged = " ".join(p.text() for p in points)
    if points and point.at_ms < points[-1].at_ms:
        return unchanged
    horizon = point.at_ms - HISTORY_SECONDS * 1000
    older = [p for p in [*points, point] if p.at_ms < horizon]
    recent = [p for p in [*points, point] if p.at_ms >= horizon]
    kept = (([older[-1]] if older else []) + recent)[-HISTORY_POINTS:]
    reach_ms = point.at_ms - anchor_age_seconds * 1000
    if any(p.at_ms <= reach_ms for p in points) and kept[0].at_ms > reach_ms:
        return unchanged
    return " ".join(p.text() for p in kept)


def document_state(
    *,
    enabled: bool,
    closed: bool,
    held: bool,
    starts_at: int,
    drawn: bool,
    now: float,
    held_from: int = 0,
) -> str:
    """The document's state, by the priority of STATES (a hold counts from its moment)."""
    if not enabled:
        return OFF
    if closed:
        return CLOSED
    if held and held_from <= now:
        return PAUSED
    if starts_at and not drawn:
        return PREQUEUE if starts_at > now else DRAWING
    return OPEN


_MESSAGE = re.compile(MESSAGE_PATTERN)
_LEADING_DIGITS = re.compile(r"[0-9]*")


def document(
    item: Mapping[str, Mapping[str, Any]] | None, *, now_ms: int, origin: str
) -> dict[str, Any]:
    """The shared state document GET /state answers at `now_ms` from the state copy `item` (as
    DynamoDB returns it; None: no status yet), exactly as vtl/state-response.vtl writes it."""
    if item is None:
        return {
            "state": OPEN,
            "serving": 0,
            "rate": 0,
            "flow": 0,
            "slowed": False,
            "updated_at": 0,
            "history": "",
            "now": now_ms,
            "seq": 0,
        }
    status = item

    def number(name: str) -> int:
        # The template's PARSE_NUMBER: the value's leading decimal digits (0 without any).
        found = _LEADING_DIGITS.match(_text(status, name, "N"))
        return int(found.group()) if found and found.group() else 0

    def flag(name: str) -> str:
        return _text(status, name, "BOOL")

    starts_at = number("starts_at")
    drawn = flag("drawn") == "true"
    state = OPEN
    if flag("enabled") == "false":
        state = OFF
    elif flag("closed") == "true":
        state = CLOSED
    elif flag("held") == "true" and number("held_from") <= now_ms // 1000:
        state = PAUSED  # a hold counts from its moment, announced before it
    elif starts_at > 0 and not drawn:
        state = PREQUEUE if starts_at > now_ms // 1000 else DRAWING
    rate, turnover = number("rate"), number("turnover")
    max_inside, inside = number("max_inside"), number("inside")
    full = capped(max_inside) and inside >= max_inside
    flow = 0
    if state == OPEN:
        flow = max(1, min(turnover, rate)) if full and rate > 0 else rate
    history = _text(status, "history", "S")
    answer: dict[str, Any] = {
        "state": state,
        "serving": number("admitted_total"),
        "rate": rate,
        "flow": flow,
        "slowed": flag("slowed") == "true",
        "updated_at": number("updated_at"),
        "history": history if _HISTORY.fullmatch(history) else "",
        "now": now_ms,
        "seq": number("push_seq"),
    }
    if state == OFF:
        answer["origin"] = origin
    message = _text(status, "message", "S")
    if state == CLOSED and _MESSAGE.fullmatch(message):
        answer["message"] = message
    if starts_at > 0 or drawn:
        answer.update(
            starts_at=starts_at,
            drawn=drawn,
            ranked=flag("prequeue_ranked") == "true",
            prequeue_base=number("prequeue_base"),
        )
    if capped(max_inside):
        answer.update(
            max_inside=max_inside,
            inside=inside,
            turnover=turnover,
            full=full,
            claim_seconds=number("claim_seconds"),
        )
    return answer


def _text(item: Mapping[str, Mapping[str, Any]], name: str, kind: str) -> str:
    """An attribute as the template reads it, "$!status.<name>.<kind>": its value's text, ""
    when it is missing (a BOOL's text is "true" or "false")."""
    value = item.get(name, {}).get(kind)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


__all__ = [
    "CLOSED",
    "DRAWING",
    "HISTORY_PATTERN",
    "HISTORY_POINTS",
    "HISTORY_SECONDS",
    "JOINS_OVER_SECONDS",
    "OFF",
    "OPEN",
    "PAUSED",
    "PREQUEUE",
    "STATES",
    "STATE_MAX_AGE_SECONDS",
    "Point",
    "document",
    "document_state",
    "extend_history",
    "joins_per_minute",
    "parse_history",
]
