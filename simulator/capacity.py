"""Capacity mode's simulated crowd: pages that notice their admission, visits to the shop.

Every visitor of a capacity-mode room's simulation (simulator/run.py) has a page
and, once let in, a visit, and everything they send the room goes through the room's real
mapping templates (`apigateway.room.run_integration` against the simulated table, as local
mode answers them), and a leave through the producer's real /leave (room/leaving.py):

- **waiting**: the page follows the shared state and asks /polling near its turn, as every
  simulated page does (simulator/pages.py, the page's own rule), and tells this crowd when it
  sees the admission. A fraction `abandon` walk away without a word at some moment before
  their turn: the room only learns of it when their claim runs out (a no-show). A fraction
  `leave_line` press "Leave the line" (POST /leave with the cookie) at a moment drawn
  uniformly within the wait their page first estimated.
- **admitted**: the page, seeing the admission (an item that holds a place and has not
  expired, as /polling reads it), sends the visitor through GET /enter, which starts the
  session. The shop checks the visitor with GET /client?token= on
  their first page and then every 30 s while they shop, for an exponentially distributed time
  of mean `visit_minutes`; then a fraction `leave` of them end the visit with POST
  /leave?token= (the shop, server to server), and the others just go idle and their session
  runs out.
- **presence** (`presence_grace_seconds` > 0, `beekeeper simulate --presence`): the room runs
  with presence and every shop page loads the presence script (core/presence.py). Each page
  the shop shows (its first, then one per /client check) beats POST /presence?token= once
  loaded, then every `beat_seconds` the room's answer names, until the next page; the
  visitors who do not leave with /leave close the tab at the end of their visit, which sends
  one last heartbeat (pagehide), and then nothing: their place frees a grace later.

What the figures are computed from is what the visitors saw: the fake table's log of
admission writes, and the answers of their own requests (simulator/occupancy.py), never the
room's counter.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from beekeeper.core.datamodel import (
    COOKIE_NAME,
    HOLDING_STATES,
    PASSED_OVER_ATTRIBUTE,
    STATE_ENDED,
    STATE_LEFT,
    Token,
    status_copy_for,
    status_key,
    visitor_key,
)
from beekeeper.core.page_timing import FIRST_POLL_AFTER_JOIN_SECONDS
from beekeeper.core.polling import admission_flow, eta_seconds, position
from beekeeper.core.presence import BEAT_SECONDS, PRESENT, Presence
from beekeeper.core.routes import CLIENT, ENTER, LEAVE, PRESENCE, Route
from beekeeper.core.settings import RoomSettings
from beekeeper.room.leaving import Leaving
from beekeeper.room.room_state import read_number
from beekeeper.simulator import occupancy
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.crowd import Visits
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.measure import percentile
from beekeeper.store.expressions import Item
from beekeeper.store.wire import TemplateTarget


class TemplatesUnavailable(RuntimeError):
    """The local extra (the Velocity renderer the crowd's requests go through) is missing."""


def _integration() -> Any:
    """API Gateway's emulation (beekeeper.apigateway.room), imported when a capacity
    simulation starts: the base install (what deploys a room) has no Velocity renderer."""
    try:
        from beekeeper.apigateway import room as integration
    except ImportError as error:
        raise TemplatesUnavailable(
            "capacity mode's simulation sends the visitors' requests through the room's "
            f"templates, which needs {error.name or 'the local extra'}: install it with "
            "pip install 'beekeeper-waiting-room[local]'"
        ) from error
    return integration


# From the page noticing its admission to the /enter request, and from arriving to the shop's
# first /client check (the shop's first page).
REDIRECT_SECONDS = (0.05, 0.3)
FIRST_CHECK_SECONDS = (0.1, 0.5)
# The shop checks a visitor inside this often (the scenario).
CHECK_EVERY_SECONDS = 30.0
# From the shop's page view (its /client check) to the presence script's first heartbeat.
PAGE_BEAT_SECONDS = (0.1, 0.5)


@dataclass
class Visitor:
    token: Token
    joined_at: float
    abandons: bool
    leaves_shop: bool
    leave_line_fraction: float | None  # where in their estimated wait they press Leave
    visit_seconds: float
    admitted_at: float | None = None  # the first admission write (the table's log)
    page_done: bool = False  # the page stopped polling (noticed, left or walked away)
    arrived_at: float | None = None
    renewals: list[float] = field(default_factory=list)
    left_at: float | None = None  # a /leave the room answered {"left": true}
    gone_at: float | None = None  # left the shop, went idle, or closed the tab
    turned_away: bool = False  # the shop's check said no while the visitor was shopping
    beats: list[float] = field(default_factory=list)  # heartbeats that held the place
    page: int = 0  # the shop page now open (a heartbeat of an older one is not sent)
    closed_tab: bool = False  # ended the visit by closing the tab (presence)

    def visit(self) -> occupancy.Visit:
        assert self.admitted_at is not None
        return occupancy.Visit(
            admitted_at=self.admitted_at,
            arrived_at=self.arrived_at,
            renewals=tuple(self.renewals),
            left_at=self.left_at,
            gone_at=self.gone_at,
            beats=tuple(self.beats),
        )


@dataclass(frozen=True)
class CapacityFigures:
    """The capacity keys `beekeeper simulate --json` adds (docs/pipeline.md)."""

    max_inside: int
    session_minutes: float
    claim_minutes: float
    visit_minutes: float
    abandon: float
    leave: float
    leave_line: float
    peak_inside: int  # the most visitors holding a place at one instant
    refill_seconds_p50: float | None  # from a place freeing (someone waiting) to its refill
    refill_seconds_p99: float | None
    refills: int
    mean_inside_ratio: float | None  # visitors at the shop, time-averaged, / max_inside
    no_shows: int  # admitted, never arrived, never left: their claim ran out
    abandoned: int  # walked away while waiting, and their claim ran out during the run
    arrived: int
    left_shop: int  # ended the visit with /leave
    left_line: int  # pressed "Leave the line" before their admission
    left_then_admitted: int  # admission writes after the visitor's /leave (must stay 0)
    sessions_expired: int  # went idle (with presence: closed the tab), and the place ran out
    turned_away: int  # a /client check said no while the visitor was still shopping
    client_checks: int
    presence: PresenceFigures | None = None  # with --presence only: its keys join the rest

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        presence = data.pop("presence")
        if presence is not None:
            data.update(presence.__dict__)
        return data


@dataclass(frozen=True)
class PresenceFigures:
    """The keys `beekeeper simulate --presence --json` adds (docs/pipeline.md)."""

    presence_grace_seconds: int
    presence_beat_seconds: int  # how often the room told the pages to beat
    heartbeats: int  # heartbeats sent (each one write of the visitor's own item)
    tabs_closed: int  # visitors who ended their visit by closing the tab
    # From a tab closed (visitors waiting) to the admission that took its place.
    tab_refill_seconds_p50: float | None
    tab_refill_seconds_p99: float | None
    tab_refills: int


@dataclass(kw_only=True, eq=False)
class CapacityCrowd:
    """The pages and visits of a capacity-mode simulation (see the module)."""

    visits: Visits
    settings: RoomSettings
    scheduler: Scheduler
    table: FakeTable
    table_name: str
    rng: random.Random
    leaving: Leaving
    visitors: list[Visitor] = field(default_factory=list, init=False)
    client_checks: int = field(default=0, init=False)
    heartbeats: int = field(default=0, init=False)  # the presence script's, sent
    # Requests the visitors made (API Gateway's, not the room's functions').
    gateway_calls: int = field(default=0, init=False)
    # Told when a visitor who left the line was passed over (the pages), and when a visitor
    # pressed "Leave the line" (their page stops).
    on_passed_over: Callable[[int, float], None] | None = field(default=None, init=False)
    on_left_line: Callable[[int, float], None] | None = field(default=None, init=False)
    # Told of every request a visitor (or the shop, for them) sends the room's API: /enter,
    # /client, /presence, /leave (the pages' origin and edge requests).
    on_request: Callable[[float], None] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._target = TemplateTarget(self.table.database)
        self._integration = _integration()
        self._by_id: dict[str, int] = {}
        self.table.database.observers.append(self._written)
        self._presence = Presence.of(self.settings)
        self._beat_seconds = float(self._presence.beat_seconds(self.settings.session_seconds))

    # -- hooks from the simulation ----------------------------------------------------------

    def joined(self, index: int, token: Token) -> None:
        rng = self.rng
        visits = self.visits
        assert index == len(self.visitors), "visitors join in order"
        leaves_line = rng.random() < visits.leave_line
        self.visitors.append(
            Visitor(
                token=token,
                joined_at=self.scheduler.now,
                abandons=not leaves_line and rng.random() < visits.abandon,
                leaves_shop=rng.random() < visits.leave,
                leave_line_fraction=rng.random() if leaves_line else None,
                visit_seconds=rng.expovariate(1.0 / (visits.visit_minutes * 60)),
            )
        )
        self._by_id[token.id] = index
        if self.visitors[index].leave_line_fraction is not None:
            # The page's first look at the line: leavers press the button within its estimate.
            self._at(FIRST_POLL_AFTER_JOIN_SECONDS, lambda: self._plan_leaving(index))

    def admitted(self, token_id: str, when: float) -> None:
        """The first admission write of a visitor (the fake table's log)."""
        visitor = self.visitors[self._by_id[token_id]]
        if visitor.admitted_at is None:
            visitor.admitted_at = when

    def _written(self, _table: str, pk: str, item: Item | None, _whole: bool) -> None:
        """The consumers passed over a visitor who left the line (they mark the item)."""
        if item is not None and PASSED_OVER_ATTRIBUTE in item and pk.startswith("v#"):
            index = self._by_id.get(pk[2:])
            if index is not None and self.on_passed_over is not None:
                self.on_passed_over(index, self.scheduler.now)

    def left_the_line(self) -> set[int]:
        """Visitors whose leave the room took before any admission of theirs."""
        return {
            i
            for i, v in enumerate(self.visitors)
            if v.left_at is not None and (v.admitted_at is None or v.admitted_at > v.left_at)
        }

    # -- the page ---------------------------------------------------------------------------

    def noticed(self, index: int, _when: float) -> None:
        """The page's own /polling found the visitor's item (simulator/pages.py)."""
        visitor = self.visitors[index]
        if visitor.page_done:
            return
        now = self.scheduler.now
        item = self.table.items.get(visitor_key(visitor.token.id))
        if item is not None:
            # /polling's answer for a visitor with an item (vtl/polling-response.vtl).
            visitor.page_done = True
            state = item.get("state", {}).get("S", "")
            live = read_number(item, "expires_at") * 1000 > int(now * 1000)
            if state in (STATE_LEFT, STATE_ENDED) or not live or state not in HOLDING_STATES:
                return  # left, or expired: the page stops
            if not visitor.abandons:
                self._at(self.rng.uniform(*REDIRECT_SECONDS), lambda: self._enter(index))
            return  # an abandoned page is closed: nobody follows the admission

    def _plan_leaving(self, index: int) -> None:
        """When a leaver presses the button: within the wait the page first estimated."""
        visitor = self.visitors[index]
        status = self.table.items.get(status_key(status_copy_for(visitor.token.ordinal)))
        flow = admission_flow(
            read_number(status, "rate"),
            max_inside=read_number(status, "max_inside"),
            inside=read_number(status, "inside"),
            turnover=read_number(status, "turnover"),
        )
        shown = position(visitor.token.ordinal, read_number(status, "admitted_total"))
        estimate = eta_seconds(shown, flow)
        fraction = visitor.leave_line_fraction or 0.0
        self._at(fraction * estimate, lambda: self._leave_line(index))

    def _leave_line(self, index: int) -> None:
        visitor = self.visitors[index]
        if visitor.page_done:
            return  # the page already went on to the shop (or stopped)
        visitor.page_done = True
        cookie = {"Cookie": f"{COOKIE_NAME}={visitor.token}", "Content-Type": "text/plain"}
        if self._leave({}, cookie) == '{"left": true}':
            visitor.left_at = self.scheduler.now
        if self.on_left_line is not None:
            self.on_left_line(index, self.scheduler.now)

    # -- the visit --------------------------------------------------------------------------

    def _enter(self, index: int) -> None:
        visitor = self.visitors[index]
        entered = self.scheduler.now
        cookie = {"Cookie": f"{COOKIE_NAME}={visitor.token}"}
        self._request(ENTER, {}, cookie)
        end = entered + visitor.visit_seconds

        def first_check() -> None:
            # The shop's first page: the check says whether the session started at /enter.
            if self._check(index):
                visitor.arrived_at = entered
                visitor.renewals.insert(0, entered)
                self._page_shown(index)
                self._shop(index, end)
            else:
                visitor.turned_away = True

        self._at(self.rng.uniform(*FIRST_CHECK_SECONDS), first_check)

    def _shop(self, index: int, end: float) -> None:
        visitor = self.visitors[index]
        next_check = self.scheduler.now + CHECK_EVERY_SECONDS
        if next_check < end:
            self.scheduler.at(next_check, lambda: self._keep_shopping(index, end))
        else:
            self.scheduler.at(end, lambda: self._finish(index))
        del visitor  # only the index is kept in the scheduled steps

    def _keep_shopping(self, index: int, end: float) -> None:
        visitor = self.visitors[index]
        if self._check(index):
            self._page_shown(index)
            self._shop(index, end)
        else:
            visitor.turned_away = True
            visitor.gone_at = self.scheduler.now
            visitor.page += 1

    def _finish(self, index: int) -> None:
        visitor = self.visitors[index]
        now = self.scheduler.now
        visitor.gone_at = now
        if visitor.leaves_shop:
            query = {"token": str(visitor.token)}
            if self._leave(query, {}) == '{"left": true}':
                visitor.left_at = now
        elif self._presence.grace_seconds:
            # The tab closes: the page's last heartbeat (pagehide), then nothing.
            visitor.closed_tab = True
            self._beat(index, visitor.page)
        visitor.page += 1

    # -- the presence script ------------------------------------------------------------------

    def _page_shown(self, index: int) -> None:
        """A shop page the visitor sees (after the shop's check): with presence, its script
        beats once loaded and then as often as the room says, until the next page."""
        if not self._presence.grace_seconds:
            return
        visitor = self.visitors[index]
        visitor.page += 1
        page = visitor.page
        self._at(self.rng.uniform(*PAGE_BEAT_SECONDS), lambda: self._beat(index, page))

    def _beat(self, index: int, page: int) -> None:
        visitor = self.visitors[index]
        if visitor.page != page:
            return  # that page is gone (the next one beats, or the visit ended)
        self.heartbeats += 1
        answer = json.loads(self._request(PRESENCE, {"token": str(visitor.token)}, {}))
        if answer.get(PRESENT) is not True:
            return  # the place is gone: the script stops
        visitor.beats.append(self.scheduler.now)
        if visitor.gone_at is None:
            self._at(float(answer[BEAT_SECONDS]), lambda: self._beat(index, page))

    def _check(self, index: int) -> bool:
        visitor = self.visitors[index]
        self.client_checks += 1
        answer = self._request(CLIENT, {"token": str(visitor.token)}, {})
        if answer == '{"allow": true}':
            visitor.renewals.append(self.scheduler.now)
            return True
        return False

    # -- plumbing ---------------------------------------------------------------------------

    def _at(self, delay: float, action: Callable[[], None]) -> None:
        self.scheduler.at(self.scheduler.now + delay, action)

    def _leave(self, query: dict[str, str], headers: dict[str, str]) -> str:
        """POST /leave's answer body: the producer's route, with a proxy event."""
        if self.on_request is not None:
            self.on_request(self.scheduler.now)
        event = {
            "resource": LEAVE.path,
            "path": LEAVE.path,
            "httpMethod": LEAVE.method,
            "headers": headers,
            "queryStringParameters": query or None,
        }
        return str(self.leaving.handle(event)["body"])

    def _request(self, route: Route, query: dict[str, str], headers: dict[str, str]) -> str:
        """The templated route's answer body, as API Gateway gives it, at the simulated time."""
        if self.on_request is not None:
            self.on_request(self.scheduler.now)
        before = self.table.calls
        integration = self._integration
        response = integration.run_integration(
            route.name,
            integration.HttpRequest(
                method=route.method, path=route.path, query=query, headers=headers
            ),
            dynamodb=self._target,
            table_name=self.table_name,
            origin=self.settings.origin,
            request_time_ms=int(self.scheduler.now * 1000),
            mode=self.settings.mode,
            session_seconds=self.settings.session_seconds,
            presence=self._presence,
        )
        self.gateway_calls += self.table.calls - before
        return response.body.strip()

    # -- the figures ------------------------------------------------------------------------

    def figures(self, *, end: float, admission_writes: list[tuple[float, str]]) -> CapacityFigures:
        settings = self.settings
        claim = float(settings.claim_seconds)
        session = float(self.settings.session_seconds)
        admitted = [v for v in self.visitors if v.admitted_at is not None]
        beat_hold = float(self._presence.hold_seconds(self.settings.session_seconds))
        holding = [
            occupancy.holding(
                v.visit(),
                claim_seconds=claim,
                session_seconds=session,
                beat_hold_seconds=beat_hold,
            )
            for v in admitted
        ]
        at_shop = [
            (v.arrived_at, v.gone_at if v.gone_at is not None else end)
            for v in admitted
            if v.arrived_at is not None
        ]
        frees = [stop for _, stop in holding if stop < end]
        admissions = sorted(v.admitted_at for v in admitted if v.admitted_at is not None)
        pairs = occupancy.refills(frees, admissions, self._line_over_time())
        refills = sorted(taken - freed for freed, taken in pairs)
        full_from = occupancy.first_reaching(holding, settings.max_inside)
        ratio = (
            None
            if full_from is None or full_from >= end
            else occupancy.time_average(at_shop, full_from, end) / settings.max_inside
        )
        left_then_admitted = sum(
            1
            for when, token_id in admission_writes
            if (left := self.visitors[self._by_id[token_id]].left_at) is not None and when > left
        )
        return CapacityFigures(
            max_inside=settings.max_inside,
            session_minutes=settings.session_minutes,
            claim_minutes=settings.claim_minutes,
            visit_minutes=self.visits.visit_minutes,
            abandon=self.visits.abandon,
            leave=self.visits.leave,
            leave_line=self.visits.leave_line,
            peak_inside=occupancy.peak(holding),
            refill_seconds_p50=_round(percentile(refills, 0.5)),
            refill_seconds_p99=_round(percentile(refills, 0.99)),
            refills=len(refills),
            mean_inside_ratio=None if ratio is None else round(ratio, 3),
            no_shows=sum(
                1
                for v in admitted
                if v.arrived_at is None
                and v.left_at is None
                and occupancy.deadline(v.admitted_at or 0.0, claim) <= end
            ),
            # Counted as no-shows are: those whose claim ran out before the run ended.
            abandoned=sum(
                1
                for v in admitted
                if v.abandons and occupancy.deadline(v.admitted_at or 0.0, claim) <= end
            ),
            arrived=len(at_shop),
            left_shop=sum(
                1 for v in admitted if v.arrived_at is not None and v.left_at is not None
            ),
            left_line=len(self.left_the_line()),
            left_then_admitted=left_then_admitted,
            # Places that ran out without a /leave: idle sessions; with presence, closed tabs.
            sessions_expired=sum(
                1
                for v, (_, stop) in zip(admitted, holding, strict=True)
                if v.arrived_at is not None and v.left_at is None and stop <= end
            ),
            turned_away=sum(1 for v in self.visitors if v.turned_away),
            client_checks=self.client_checks,
            presence=(
                self._presence_figures(admitted, holding, pairs, end)
                if self._presence.grace_seconds
                else None
            ),
        )

    def _presence_figures(
        self,
        admitted: list[Visitor],
        holding: list[tuple[float, float]],
        pairs: list[tuple[float, float]],
        end: float,
    ) -> PresenceFigures:
        """From each closed tab to the admission that took its place (the refills' pairing:
        the oldest place freed first; places freed in the same second in closing order)."""
        taken: dict[float, list[float]] = {}
        for freed, admission in sorted(pairs):
            taken.setdefault(freed, []).append(admission)
        closed = sorted(
            (v.gone_at, stop)
            for v, (_, stop) in zip(admitted, holding, strict=True)
            if v.closed_tab and v.gone_at is not None and v.gone_at < end
        )
        waits = [taken[stop].pop(0) - gone for gone, stop in closed if taken.get(stop)]
        waits.sort()
        return PresenceFigures(
            presence_grace_seconds=self._presence.grace_seconds,
            presence_beat_seconds=int(self._beat_seconds),
            heartbeats=self.heartbeats,
            tabs_closed=len(closed),
            tab_refill_seconds_p50=_round(percentile(waits, 0.5)),
            tab_refill_seconds_p99=_round(percentile(waits, 0.99)),
            tab_refills=len(waits),
        )

    def _line_over_time(self) -> list[tuple[float, int]]:
        """The room's line: joined, and neither admitted nor left the line, over time."""
        changes: list[tuple[float, int]] = []
        for v in self.visitors:
            changes.append((v.joined_at, 1))
            out = v.admitted_at
            if v.left_at is not None and (out is None or v.left_at < out):
                out = v.left_at
            if out is not None:
                changes.append((out, -1))
        series: list[tuple[float, int]] = []
        level = 0
        for when, change in sorted(changes):
            level += change
            if series and series[-1][0] == when:
                series[-1] = (when, level)
            else:
                series.append((when, level))
        return series


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
