"""The waiting pages of every simulated visitor, by the page's own rule (core/serving.py, which
waiting_room_site/page.js applies: a test holds the two equal), and the requests they send.

Each visitor's page loads a moment after the marketing link's redirect, fetches the shared
state from the edge at once and every DOCUMENT_EVERY_SECONDS after (a visible page), and calls
its own /polling only at the moment the state predicts (core.serving.first_own_poll), then
every OWN_POLL_EVERY_SECONDS while the state says its turn has come, until the answer is its
admission. The edge (`EdgeCopies`) refreshes its copy of the state every STATE_COPY_SECONDS
from the table's state copy, as CloudFront does with requests arriving all the time.

Exact for the rule, without an event per fetch: a page fetches at load + k x the interval, so
the fetches it makes are counted in aggregate (per second, with a difference array per phase
of the interval), and its own poll is decided only at the fetches near its turn. At each
refresh of the edge's copy, the visitors whose turn the copy could put within one fetch
interval (the copy's prediction is monotone in the turn, so that is every turn up to a
threshold) join the candidates, each at its next fetch; a candidate's own poll is scheduled at
the first fetch whose copy puts it before the next fetch, exactly as the page schedules it.
Pages far from their turn make no decision, as the page makes none.

What the room's origin sees: the joins, the own polls, capacity mode's /enter, /client and
/leave (simulator/capacity.py tells), and the edge's misses: one request per copy lifetime per
edge cache asked in that lifetime for the state (EDGE_CACHES of them at most, an assumption:
core/edge.py), one a page lifetime per cache for the page, one a CHALLENGE_COPY_SECONDS window
per cache for the marketing link's shared challenge (taken as one browser's Accept: each other
browser family's Accept header is a copy of its own); each lifetime is its route's edge rule
(core/routes.py). Rate mode's shop is taken to check
the ticket offline (its signature, core/tickets.py): no /client call.
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from beekeeper.core.datamodel import STATE_KEY, prequeue_key, status_copy_for, status_key
from beekeeper.core.edge import EDGE_CACHES
from beekeeper.core.polling import position
from beekeeper.core.routes import MARKETING_LINK, ROOM_PAGE, STATE
from beekeeper.core.schedule import PREQUEUE_DRAWING_POLL_SECONDS, START_JITTER_SECONDS
from beekeeper.core.serving import (
    DOCUMENT_EVERY_SECONDS,
    OWN_POLL_EVERY_SECONDS,
    ShownLine,
    answer_point,
    document_predates,
    first_own_poll,
    shown_line,
    shown_moment,
    with_answer,
)
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS, Point, parse_history
from beekeeper.room.room_state import read_number
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.push import PushChannelModel, PushFigures, RecordingPublisher
from beekeeper.simulator.true_place import Sample, Verdict, judge

# How long the edge keeps its copy of the shared state, of the page, and of the marketing
# link's shared challenge: their routes' edge rules (core/routes.py).
STATE_COPY_SECONDS = STATE.edge.seconds
PAGE_COPY_SECONDS = ROOM_PAGE.edge.seconds
CHALLENGE_COPY_SECONDS = MARKETING_LINK.edge.seconds
# From the marketing link's redirect to the page's first request: a page load.
PAGE_LOAD_SECONDS = (0.5, 2.0)
_PENDING, _CANDIDATE, _ASKING, _DONE = 0, 1, 2, 3
_EPSILON = 1e-9  # a fetch time computed as phase + k x the interval is the k-th, not the one before


class EdgeCopies:
    """The shared state as the edge serves it: the table's state copy, read every lifetime."""

    def __init__(self, table: FakeTable) -> None:
        self._table = table
        self.times: list[float] = []
        self.copies: list[tuple[Point, ...]] = []
        self._lines: dict[tuple[int, float], ShownLine | None] = {}

    def refresh(self, now: float) -> tuple[Point, ...]:
        item = self._table.items.get(STATE_KEY)
        points = parse_history(str((item or {}).get("history", {}).get("S", "")))
        if not points:
            # A room that published nothing yet: open, nobody served, not moving.
            points = (Point(round(now * 1000), 0, 0),)
        self.times.append(now)
        self.copies.append(points)
        return points

    def at(self, when: float) -> tuple[Point, ...]:
        """The copy a request at `when` gets (the one refreshed last before it)."""
        return self.copies[self._index(when)] if self.copies else ()

    def line_shown(self, fetched: float, at: float, *, minute_seconds: float) -> ShownLine | None:
        """The line a page shows at `at` from the copy its request at `fetched` got: the same
        for every page that shows that copy at that moment, so worked out once for them all."""
        if not self.copies:
            return None
        index = self._index(fetched)
        copy = self.copies[index]
        key = (index, shown_moment(copy, at, minute_seconds=minute_seconds))
        if key not in self._lines:
            self._lines[key] = shown_line(copy, key[1], minute_seconds=minute_seconds)
        return self._lines[key]

    def _index(self, when: float) -> int:
        return max(0, bisect.bisect_right(self.times, when) - 1)


class Bins:
    """Requests per second from `origin` on, and per minute."""

    def __init__(self, origin: float, seconds: int) -> None:
        self.origin = origin
        self.counts = [0] * seconds

    def add(self, when: float, count: int = 1) -> None:
        """Before the first minute counts in its first second (a burst joins just before)."""
        second = math.floor(when - self.origin)
        if second < 0:
            second = 0
        counts = self.counts
        if second < len(counts):
            counts[second] += count

    def per_minute(self, minute_seconds: float, minutes: int) -> list[int]:
        out = [0] * minutes
        for second, count in enumerate(self.counts):
            minute = int(second // minute_seconds)
            if minute < minutes:
                out[minute] += count
        return out


@dataclass
class PageFigures:
    own_polls: int
    noticed_after: list[float]
    origin_per_second: list[int]
    edge_per_second: list[int]
    places: Verdict  # the places the sampled pages showed, against the truth


@dataclass
class PageCrowd:
    scheduler: Scheduler
    table: FakeTable
    visitors: int
    rng: random.Random
    minute_seconds: float
    origin_time: float  # the first minute's start: the series start here
    end: float
    sample_every: int  # visitor i's shown place is checked when i % sample_every == 0
    starts_at: float | None = None
    draw_base: Callable[[], int] = lambda: 0
    # Told when a page's own /polling finds the visitor admitted (capacity mode's crowd sends
    # them through /enter then).
    on_noticed: Callable[[int, float], None] | None = None
    edge: EdgeCopies = field(init=False)
    own_polls: int = 0
    noticed_after: list[float] = field(default_factory=list)
    # What the sampled pages showed, judged against the truth once the run is over.
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.visitors
        self.edge = EdgeCopies(self.table)
        self._load = [0.0] * n
        self._turn = [0] * n
        self._state = [_PENDING] * n
        self._admitted: list[float | None] = [None] * n
        self._joined_at = [math.inf] * n
        self._gone: list[float | None] = [None] * n  # left the line (never admitted)
        self._stop = [math.inf] * n
        self._passed = [False] * n
        self._token_id: list[str] = [""] * n
        # The page's periodic fetches: at phase + k x the interval after its first at load (the
        # load itself when the first document was current; 2 s after it when it predated the
        # visitor: core.serving.document_predates). Decided at the first fetch.
        self._phase: list[float | None] = [None] * n
        # The line as a page's last own /polling answer said it (pages that asked).
        self._answered: dict[int, Point] = {}
        self._pending: list[tuple[int, int]] = []  # (turn, visitor)
        self._candidates: list[tuple[float, int]] = []  # (next fetch, visitor)
        seconds = max(1, math.ceil(self.end - self.origin_time) + 1)
        self._origin = Bins(self.origin_time, seconds)
        self._edge_other = Bins(self.origin_time, seconds)
        self._served = Bins(self.origin_time, seconds)  # joins and admissions
        self._period = DOCUMENT_EVERY_SECONDS
        self._page_loads: dict[int, int] = {}  # page loads per edge lifetime of the page
        self._challenges: dict[int, int] = {}  # the link's shared challenge, per lifetime
        self._refreshing = False
        self._documents: list[int] = []  # the shared document's fetches a second (`channel`)
        self._threshold_now = -1
        self._window_end = -math.inf  # when the edge's copy is next refreshed

    # -- what happens to a visitor --------------------------------------------------------

    def joined(self, index: int, ordinal: int, token_id: str, *, prequeue: bool) -> None:
        now = self.scheduler.now
        self._joined_at[index] = now
        self._origin.add(now)  # the marketing link
        self._served.add(now)
        self._edge_other.add(now)
        load = now + self.rng.uniform(*PAGE_LOAD_SECONDS)
        self._load[index] = load
        self._token_id[index] = token_id
        self._edge_other.add(load)  # the page, from the edge's copy
        window = math.floor(load / PAGE_COPY_SECONDS)
        self._page_loads[window] = self._page_loads.get(window, 0) + 1
        if prequeue:
            # The draw decides the turn: asked at the start, spread over a few seconds.
            assert self.starts_at is not None
            first = max(load, self.starts_at) + self.rng.uniform(0, START_JITTER_SECONDS)
            self.scheduler.at(first, lambda: self._ask_rank(index))
        else:
            self._turn[index] = ordinal
            if ordinal <= self._threshold_now and load < self._window_end:
                # Near its turn, and loading before the next refresh's sweep: it decides at
                # its first fetch, from the copy the edge holds now.
                self._state[index] = _CANDIDATE
                self.scheduler.at(load, lambda: self._decide_if_candidate(index, load))
            else:
                heapq.heappush(self._pending, (ordinal, index))
        if index % self.sample_every == 0:
            self.scheduler.at(load, lambda: self._probe(index, load))
        if not self._refreshing:
            self._refreshing = True
            self.scheduler.at(self.scheduler.now, self._refresh)

    def admitted(self, index: int, when: float) -> None:
        if self._admitted[index] is None and not self._passed[index]:
            self._admitted[index] = when
            self._served.add(when)

    def left(self, index: int, when: float) -> None:
        """The visitor pressed "Leave the line": the page says so and asks nothing more."""
        if self._state[index] != _DONE:
            self._stop[index] = min(self._stop[index], when)
            self._state[index] = _DONE
        if self._admitted[index] is None and self._gone[index] is None:
            self._gone[index] = when

    def passed(self, index: int, when: float) -> None:
        """The line passed over a visitor who left it: no longer ahead of anyone, no page."""
        if self._admitted[index] is None and not self._passed[index]:
            self._passed[index] = True
            if self._gone[index] is None:
                self._gone[index] = when
            self._stop[index] = min(self._stop[index], when)
            self._state[index] = _DONE

    def admissions(self) -> list[tuple[int, float]]:
        """(turn, when admitted) of every visitor admitted, in the order of admission."""
        admitted = [
            (when, self._turn[index])
            for index, when in enumerate(self._admitted)
            if when is not None and self._turn[index]
        ]
        return [(turn, when) for when, turn in sorted(admitted)]

    def served_per_second(self) -> list[int]:
        """Joins and admissions per second (what the origin's requests are compared with)."""
        return list(self._served.counts)

    def challenge_asked(self, when: float) -> None:
        """A browser followed the bare marketing link: the edge's shared copy of the challenge
        (its misses, once a lifetime per edge cache asked, are counted in `figures`)."""
        self._edge_other.add(when)
        window = math.floor(when / CHALLENGE_COPY_SECONDS)
        self._challenges[window] = self._challenges.get(window, 0) + 1

    def origin_request(self, when: float) -> None:
        """Another request past the edge (capacity mode's /enter, /client, /presence and /leave,
        the marketing link's challenge when a place costs work)."""
        self._origin.add(when)
        self._edge_other.add(when)

    # -- the edge's copy and the pages' decisions ------------------------------------------

    def _refresh(self) -> None:
        now = self.scheduler.now
        points = self.edge.refresh(now)
        until = now + STATE_COPY_SECONDS
        self._window_end = until
        self._sweep(points, now, until)
        if until < self.end:
            self.scheduler.at(until, self._refresh)

    def _threshold(self, points: tuple[Point, ...], until: float) -> int:
        """The largest turn a page holding this copy could ask for before its next fetch."""
        horizon = until + DOCUMENT_EVERY_SECONDS

        def due(turn: int) -> bool:
            at = first_own_poll(
                points, turn, until, minute_seconds=self.minute_seconds, loading=True
            )
            return at is not None and at <= horizon

        low = points[-1].serving
        if not due(low):
            return low - 1
        step = 1
        while due(low + step):
            low += step
            step *= 2
        high = low + step
        while high - low > 1:
            middle = (low + high) // 2
            if due(middle):
                low = middle
            else:
                high = middle
        return low

    def _sweep(self, points: tuple[Point, ...], start: float, until: float) -> None:
        threshold = self._threshold(points, until)
        self._threshold_now = threshold
        period = self._period
        # Bound once: a crowd's pages pass through here by the hundred thousand.
        pending, candidates, state, loads = self._pending, self._candidates, self._state, self._load
        heappop, heappush = heapq.heappop, heapq.heappush
        while pending and pending[0][0] <= threshold:
            _, index = heappop(pending)
            if state[index] != _PENDING:
                continue
            state[index] = _CANDIDATE
            load = loads[index]
            if load >= start:
                fetch = load
            else:
                phase = self._phase_of(index)
                fetch = max(load, phase + period * math.ceil((start - phase) / period - _EPSILON))
            heappush(candidates, (fetch, index))
        while candidates and candidates[0][0] < until:
            fetch, index = heappop(candidates)
            if state[index] == _CANDIDATE:
                self._decide(index, fetch)

    # -- a page's fetches ----------------------------------------------------------------------

    def _phase_of(self, index: int) -> float:
        """Where the page's periodic fetches are counted from (the edge holds the copy its
        first fetch got: asked at or after the page's load)."""
        phase = self._phase[index]
        if phase is None:
            load, turn = self._load[index], self._turn[index]
            predates = bool(turn) and document_predates(self.edge.at(load), turn, load)
            phase = load + STATE_MAX_AGE_SECONDS - self._period if predates else load
            self._phase[index] = phase
        return phase

    def _last_fetch(self, index: int, when: float) -> float:
        """The page's last fetch at or before `when` (>= its load)."""
        phase, period = self._phase_of(index), self._period
        return max(
            self._load[index], phase + period * math.floor((when - phase) / period + _EPSILON)
        )

    def _next_fetch(self, index: int, fetch: float) -> float:
        """The page's fetch after the one at `fetch`."""
        phase, period = self._phase_of(index), self._period
        return phase + period * (math.floor((fetch - phase) / period + _EPSILON) + 1)

    def _decide_if_candidate(self, index: int, fetch: float) -> None:
        if self._state[index] == _CANDIDATE:
            self._decide(index, fetch)

    def _decide(self, index: int, fetch: float) -> None:
        """A candidate's fetch: its own poll if the copy puts it before the next fetch."""
        at = first_own_poll(
            self._own_points(index, self.edge.at(fetch)),
            self._turn[index],
            fetch,
            minute_seconds=self.minute_seconds,
            loading=fetch == self._load[index],
        )
        if at is not None and at <= self._next_fetch(index, fetch):
            self._state[index] = _ASKING
            self.scheduler.at(max(fetch, at), lambda: self._ask(index))
        else:
            heapq.heappush(self._candidates, (self._next_fetch(index, fetch), index))

    def _own_poll(self, index: int, now: float) -> bool:
        """The page's own /polling sent: counted at the edge and the origin. True when the
        page is done (gone before it, or the answer is the admission)."""
        if self._state[index] == _DONE:
            return True
        self.own_polls += 1
        self._origin.add(now)
        self._edge_other.add(now)
        return self._notice(index, now)

    def _ask(self, index: int) -> None:
        """The page's own /polling."""
        now = self.scheduler.now
        if self._own_poll(index, now):
            return
        self._answer(index)
        self._after_answer(index, now)

    def _answer(self, index: int) -> None:
        """The waiting answer: its place from the status copy /polling reads, and when that
        copy was written (the page plans from it while its shared state is older)."""
        turn = self._turn[index]
        status = self.table.items.get(status_key(status_copy_for(turn)))
        shown = position(turn, read_number(status, "admitted_total"))
        copy = self.edge.at(self._last_fetch(index, self.scheduler.now))
        point = answer_point(copy, turn, shown, read_number(status, "updated_at"))
        if point is not None:
            self._answered[index] = point

    def _own_points(self, index: int, copy: tuple[Point, ...]) -> tuple[Point, ...]:
        return with_answer(copy, self._answered.get(index))

    def _notice(self, index: int, now: float) -> bool:
        """The answer says admitted: the page goes (capacity mode: through /enter)."""
        admitted = self._admitted[index]
        if admitted is None or admitted > now:
            return False
        self.noticed_after.append(now - admitted)
        self._stop[index] = now
        self._state[index] = _DONE
        if self.on_noticed is not None:
            self.on_noticed(index, now)
        return True

    def _after_answer(self, index: int, now: float) -> None:
        """Not admitted yet: ask again in a moment while the page's copy says the turn has
        come, at the moment it predicts if that is before the next fetch, else decide anew at
        the fetches (a page far from its turn among the pending, as every page starts)."""
        last_fetch = self._last_fetch(index, now)
        next_fetch = self._next_fetch(index, last_fetch)
        copy = self._own_points(index, self.edge.at(last_fetch))
        at = first_own_poll(copy, self._turn[index], now, minute_seconds=self.minute_seconds)
        if at is not None and at <= now:
            self._state[index] = _ASKING
            self.scheduler.at(now + OWN_POLL_EVERY_SECONDS, lambda: self._ask(index))
        elif at is not None and at <= next_fetch:
            self._state[index] = _ASKING
            self.scheduler.at(at, lambda: self._ask(index))
        elif self._turn[index] <= self._threshold_now:
            self._state[index] = _CANDIDATE
            heapq.heappush(self._candidates, (next_fetch, index))
        else:
            self._state[index] = _PENDING
            heapq.heappush(self._pending, (self._turn[index], index))

    def _ask_rank(self, index: int) -> None:
        """A pre-queue page asks /polling for its drawn turn until the rank is written."""
        now = self.scheduler.now
        if self._own_poll(index, now):
            return
        place = self.table.items.get(prequeue_key(self._token_id[index]))
        rank = read_number(place, "rank")
        if rank <= 0:
            self.scheduler.at(now + PREQUEUE_DRAWING_POLL_SECONDS, lambda: self._ask_rank(index))
            return
        self._turn[index] = self.draw_base() + rank
        self._answer(index)
        self._after_answer(index, now)

    # -- the places shown to a sample of pages ---------------------------------------------

    def _probe(self, index: int, fetch: float) -> None:
        """A sampled page's place at its fetch (judged against the truth once the run is over)."""
        if self._state[index] == _DONE or self._admitted[index] is not None:
            return
        if self._turn[index]:
            # As the page shows it once the fetch is answered (the moment it shows: a whole
            # second, or a slow line's slot).
            line = self.edge.line_shown(fetch, fetch, minute_seconds=self.minute_seconds)
            shown = None if line is None else line.place(self._turn[index])
            self.samples.append(Sample(fetch, index, shown))
        following = self._next_fetch(index, fetch)
        self.scheduler.at(following, lambda: self._probe(index, following))

    def place_at(self, index: int, second: float) -> int | None:
        """The place the page of visitor `index` shows at `second` (below 1: "at the front"),
        from the copy it fetched last; None when it shows none (no turn, gone, or no number
        yet)."""
        load = self._load[index]
        if not self._turn[index] or load == 0.0 or second < load or second >= self._stop[index]:
            return None
        line = self.edge.line_shown(
            self._last_fetch(index, second), second, minute_seconds=self.minute_seconds
        )
        return None if line is None else line.place(self._turn[index])

    def turn_of(self, index: int) -> int:
        """The visitor's turn as their page knows it (0 before a pre-queue page learns it)."""
        return self._turn[index]

    def waiting_places(self, second: float) -> dict[int, int]:
        """Every waiting page's place at `second`, by visitor (to check none is shown twice)."""
        places = {}
        for index in range(self.visitors):
            if self._admitted[index] is None and not self._passed[index]:
                place = self.place_at(index, second)
                if place is not None:
                    places[index] = place
        return places

    # -- what the pages sent ------------------------------------------------------------------

    def channel(self, publishes: RecordingPublisher, rng: random.Random) -> PushFigures:
        """The pages' use of the push channel and their fetches of the shared document
        (simulator/push.py): from each page's load to its close."""
        end = self.end
        figures = PushChannelModel(
            loads=self._load,
            stops=[min(stop, end) for stop in self._stop],
            publishes=publishes.times,
            reasons=publishes.reasons,
            rng=rng,
            origin_time=self.origin_time,
            seconds=len(self._origin.counts),
        ).figures()
        self._documents = figures.fetches_per_second
        return figures

    def figures(self) -> PageFigures:
        """What the pages sent, per second (computed anew at each call), their fetches of the
        shared document as `channel` counted them."""
        seconds = len(self._origin.counts)
        documents = self._documents or [0] * seconds
        other = list(self._edge_other.counts)
        origin = list(self._origin.counts)

        def second_of(when: float) -> int:
            return max(0, math.floor(when - self.origin_time))

        edge = [a + b for a, b in zip(other, documents, strict=True)]
        # The edge's misses: each cache asks the origin once a lifetime, if asked itself in it
        # (at most one per request: a quiet room's few pages reach few caches).
        for refreshed in self.edge.times:
            first = second_of(refreshed)
            last = math.floor(refreshed + STATE_COPY_SECONDS - self.origin_time)
            if first < seconds:
                origin[first] += min(EDGE_CACHES, sum(documents[first:last]))
        for window, loads in self._page_loads.items():
            if second_of(window * PAGE_COPY_SECONDS) < seconds:
                origin[second_of(window * PAGE_COPY_SECONDS)] += min(EDGE_CACHES, loads)
        for window, asks in self._challenges.items():
            if second_of(window * CHALLENGE_COPY_SECONDS) < seconds:
                origin[second_of(window * CHALLENGE_COPY_SECONDS)] += min(EDGE_CACHES, asks)
        return PageFigures(
            own_polls=self.own_polls,
            noticed_after=sorted(self.noticed_after),
            origin_per_second=origin,
            edge_per_second=edge,
            places=judge(
                self.samples, joined=self._joined_at, admitted=self._admitted, gone=self._gone
            ),
        )
