"""Run the real producer, trigger and consumers in simulated time and measure what they did.

`simulate(settings, crowd)` runs a room described by its `RoomSettings` through a `Crowd`
(simulator/crowd.py: who comes and when, what fails, for how long). Visitors join through the
producer on a schedule (a burst before the first minute, or evenly over some minutes); the
trigger runs at the start of every minute (twice with the double-trigger fault) and starts the
consumers it plans, each a simulated process, a fraction of a second later; a visitor who joins
a minute without a consumer wakes one the same way. When a place costs work (the room's
`join_work`), a visitor first gets the producer's challenge (its difficulty rises under a flood
as the producer's does), spends the modelled solving time (simulator/solving.py), and joins
when it is done: the solution's single use is spent with the producer's conditional write, then
the place is given. The challenge is the edge's shared copy: one is issued per SHARED_SECONDS
window and every visitor who follows the link in it solves it with a nonce of their own (the
origin's requests for it are counted per edge cache: simulator/pages.py). What is measured
comes from the fakes' own logs (simulator/measure.py), not from the code under test.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import logging
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from beekeeper.core.datamodel import DRAW_KEY, Token
from beekeeper.core.join_work import SHARED_SECONDS, Challenge, Solution, visitor_nonce
from beekeeper.core.schedule import format_starts_at
from beekeeper.core.settings import Mode, RoomSettings
from beekeeper.room.assembly import Effects, Part, assemble
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.room_state import read_number, refresh_status, write_config
from beekeeper.room.wiring import RoomWiring
from beekeeper.simulator import measure
from beekeeper.simulator.capacity import CapacityCrowd
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.crowd import EPOCH, SIMULATED_ROOM, Arrival, Crowd, Visits
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.fake_sqs import FakeQueue
from beekeeper.simulator.faults import FaultLog, Faults, Interleavings
from beekeeper.simulator.measure import History
from beekeeper.simulator.pages import PageCrowd
from beekeeper.simulator.prequeue import prequeue_figures
from beekeeper.simulator.push import RecordingPublisher
from beekeeper.simulator.result import WAITING_STEP_SECONDS, SimulationResult
from beekeeper.simulator.solving import solve_seconds

TABLE = "beekeeper-sim"
QUEUE_URL = "https://sqs.simulated/queue"
# The simulated room's join secret (it signs challenges nobody forges here).
JOIN_SECRET = "simulated-join-secret-" + "0" * 42
# How long an asynchronous Lambda invoke takes to start the function (modelled).
START_LATENCY_SECONDS = (0.05, 0.5)
# Visitors whose shown place is checked against the truth: every one up to this many, a
# sample beyond (every page is simulated; simulator/pages.py).
POLLING_VISITORS = 5_000
# Objects allocated between two of the garbage collector's youngest-generation passes while a
# simulation runs (Python's default is 700). A run allocates millions of objects that live
# until it ends (the store's items, every page, the clock's events) and almost no cycles;
# at the default, collecting took a quarter of a run's time (bench/simulator_gc.py).
GC_YOUNG_THRESHOLD = 100_000

MetricsFactory = Callable[[Callable[[], float]], MetricSink]


def simulated_room(**settings: Any) -> RoomSettings:
    """A room to simulate: `settings` (at least its rate) and the simulated room's identity;
    every other setting is a room's default, as `beekeeper init` would give it."""
    return RoomSettings.from_mapping({**SIMULATED_ROOM, **settings})


class Counted:
    """A fake client seen through one role's eyes: counts the calls that role makes."""

    def __init__(self, target: Any, calls: Counter[str], role: str) -> None:
        self._target = target
        self._calls = calls
        self._role = role
        # Each method wrapped once: the room calls a handful of methods a million times.
        self._counted: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        known = self._counted.get(name)
        if known is not None:
            return known
        method = getattr(self._target, name)
        calls, role = self._calls, self._role

        def counted(**kwargs: Any) -> Any:
            calls[role] += 1
            return method(**kwargs)

        self._counted[name] = counted
        return counted


def _token_bytes(counter: list[int]) -> Any:
    """Visitor i's token id encodes i: as good as a CSPRNG here (ids only need to differ)."""

    def token_bytes(size: int) -> bytes:
        counter[0] += 1
        return (counter[0] - 1).to_bytes(size, "big")

    return token_bytes


def simulate(
    settings: RoomSettings,
    crowd: Crowd,
    *,
    metrics: MetricsFactory | None = None,
    watch_pages: Callable[[PageCrowd], None] | None = None,
) -> SimulationResult:
    """Run the room of `settings` through `crowd` and measure it (see Simulation).

    `metrics(clock)`: a new sink on the simulated clock for each container, as Lambda gives one
    (the producer's, and each trigger's and consumer's run), to record the room's metrics (none
    by default). `watch_pages`: a test's look at the pages, before the run (it schedules its own
    checks)."""
    with _few_collections():
        simulation = Simulation(settings, crowd, metrics=metrics, watch_pages=watch_pages)
        simulation.schedule()
        simulation.run()
        return simulation.measure()


@contextmanager
def _few_collections() -> Iterator[None]:
    """The garbage collector at GC_YOUNG_THRESHOLD for a run, and as it was after."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), middle, old)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)


class Simulation:
    """One run of the room's real code on the simulated clock, in four phases: set up the room
    (`__init__`: its store, its code, every visitor's page and capacity mode's crowd), put the
    arrivals, the trigger's minutes and the rate changes on the clock (`schedule`), run them to
    the end (`run`) and compute what happened from the fakes' logs (`measure`)."""

    # -- set up the room --------------------------------------------------------------------

    def __init__(
        self,
        settings: RoomSettings,
        crowd: Crowd,
        *,
        metrics: MetricsFactory | None = None,
        watch_pages: Callable[[PageCrowd], None] | None = None,
    ) -> None:
        self.starts_at = crowd.starts_at
        if settings.starts_at and self.starts_at is None:
            raise ValueError(
                "a simulation's scheduled start is its crowd's starts_at_minute (a minute of "
                "the simulated clock), not the room's starts_at"
            )
        if self.starts_at is not None:
            settings = settings.replace(starts_at=format_starts_at(self.starts_at))
        self.settings = settings
        self.crowd = crowd
        self.rng = random.Random(crowd.seed)  # noqa: S311 - a reproducible simulation, not a secret
        self.scheduler = Scheduler(start=EPOCH - 2.0)
        self._metrics = metrics
        self.interleavings = Interleavings()
        self.queue = FakeQueue(
            self.scheduler, self.rng, crowd.faults, QUEUE_URL, self.interleavings
        )
        self.table = FakeTable(self.scheduler, self.rng, crowd.faults, TABLE, self.interleavings)
        self.calls_by_role: Counter[str] = Counter()
        visitors = crowd.visitors
        self.clicked_at = crowd.arrival.times(visitors)  # when each follows the marketing link
        # When each visitor joined the line, in the order they joined (without work: the clicks).
        self.joined_at = list(self.clicked_at)
        self.joined_count = 0
        self.solving_seconds: list[float] = []
        self.admitted_at: list[float | None] = [None] * visitors
        self.lanes: list[tuple[float, float]] = []
        self.lanes_per_minute: dict[int, int] = {}
        self.backlogs: dict[int, int] = {}
        self.skipped = self.refused = self.woken = 0
        self.end = EPOCH + 60 * crowd.minutes
        self.pages = PageCrowd(
            scheduler=self.scheduler,
            table=self.table,
            visitors=visitors,
            rng=random.Random(crowd.seed + 4),  # noqa: S311 - page loads, not a secret
            minute_seconds=60.0,
            origin_time=EPOCH,
            end=self.end,
            sample_every=max(1, visitors // POLLING_VISITORS),
            starts_at=self.starts_at,
            draw_base=lambda: read_number(self.table.items.get(DRAW_KEY), "admitted_base"),
        )
        self.index_of: dict[str, int] = {}  # token id -> visitor
        self._assemble()
        self.shoppers = self._shoppers(crowd.visits)
        self.table.on_admission = self._admitted
        if watch_pages is not None:
            watch_pages(self.pages)
        if self.shoppers is not None:
            self.shoppers.on_passed_over = self.pages.passed
            self.shoppers.on_left_line = self.pages.left
            self.shoppers.on_request = self.pages.origin_request
            self.pages.on_noticed = self.shoppers.noticed
        self.solver_rng = random.Random(crowd.seed + 3)  # noqa: S311 - the visitors' phones
        self.nonce_rng = random.Random(crowd.seed + 4)  # noqa: S311 - the pages' nonces here
        self.flood_factor_max = 1.0
        self.shared_challenge: dict[int, Challenge] = {}  # the edge's copy, by window
        self.extra_deliveries = FaultLog(self.scheduler.clock)
        # The room was deployed before: its status (and the shared state's history) as the
        # last minute's trigger published it, before anyone came.
        refresh_status(self.table, TABLE, settings, now=EPOCH - 60.0, pauses=self.room.pauses)
        self.before_start = self.table.calls  # not the run's

    def _assemble(self) -> None:
        """The room's code on the fakes. Its tokens carry its keys' mark and its joins cost
        the room's proof of work, as every room's do; its consumers sign no tickets (the
        simulator measures admission, not signing)."""
        rng = self.rng
        # The room's writers publish each change to the pages' channel (simulator/push.py).
        self.publishes = RecordingPublisher(self.scheduler.clock)
        self.room = assemble(
            self._wired,
            Effects(
                clock=self.scheduler.clock,
                sleep=self.scheduler.sleep,
                publisher=self.publishes,
                invoke_consumer=self._start_consumer,
                read_join_secret=lambda: JOIN_SECRET,
                producer_metrics=self._new_sink(),
                token_bytes=_token_bytes([0]),
                challenge_bytes=rng.randbytes,
                shard_rng=random.Random(self.crowd.seed + 1),  # noqa: S311 - shard choice
                secret_bytes=rng.randbytes,
                jitter_rng=random.Random(self.crowd.seed + 5),  # noqa: S311 - retries' pauses
            ),
        )
        self.producer = self.room.producer

    def _shoppers(self, visits: Visits) -> CapacityCrowd | None:
        """Capacity mode's visitors, who wait, shop and leave (None in rate mode)."""
        if self.settings.mode is not Mode.CAPACITY:
            return None
        return CapacityCrowd(
            visits=visits,
            settings=self.settings,
            scheduler=self.scheduler,
            table=self.table,
            table_name=TABLE,
            rng=random.Random(self.crowd.seed + 2),  # noqa: S311 - the crowd's choices
            # POST /leave: the producer's route, with the room's keys.
            leaving=self.room.leaving,
        )

    def _new_sink(self) -> MetricSink:
        return self._metrics(self.scheduler.clock) if self._metrics is not None else DISCARD

    def _wired(self, part: Part) -> RoomWiring:
        """The room's code bound to the fakes, its calls counted under its part's name."""
        return RoomWiring(
            settings=self.settings,
            table=TABLE,
            queue_url=QUEUE_URL,
            dynamodb=Counted(self.table, self.calls_by_role, part),
            sqs=Counted(self.queue, self.calls_by_role, part),
        )

    # -- the room's parts, as the clock reaches them -------------------------------------------

    def _start_consumer(self, payload: dict[str, Any]) -> None:
        """An asynchronous invoke: the consumer starts a moment later, a process of its own."""
        minute = int(payload["minute"]) - EPOCH // 60
        self.lanes_per_minute[minute] = self.lanes_per_minute.get(minute, 0) + 1
        self.woken += bool(payload.get("woken"))
        started = self.scheduler.now + self.rng.uniform(*START_LATENCY_SECONDS)
        self.scheduler.spawn(started, functools.partial(self._consume, payload))

    def _consume(self, payload: dict[str, Any]) -> None:
        started = self.scheduler.now
        sink = self._new_sink()
        try:
            report = self.room.run_consumer(payload, metrics=sink)
            self.skipped += report.duplicates
        finally:
            sink.flush()  # the handler's end of run
            self.lanes.append((started, self.scheduler.now))

    def _trigger(self) -> None:
        sink = self._new_sink()
        outcome = self.room.run_trigger(metrics=sink)
        sink.flush()
        if not outcome.claimed:
            self.refused += 1
        else:
            self.backlogs[outcome.minute - EPOCH // 60] = outcome.backlog

    def _trigger_again(self) -> None:
        self.extra_deliveries.add("double-trigger")
        self._trigger()

    def _change_rate(self, new_rate: int) -> None:
        write_config(
            self.table, TABLE, self.settings, now=self.scheduler.now, operator_rate=new_rate
        )

    def _admitted(self, when: float, token_id: str) -> None:
        index = self.index_of[token_id]
        self.admitted_at[index] = when
        self.pages.admitted(index, when)
        if self.shoppers is not None:
            self.shoppers.admitted(token_id, when)

    # -- the visitors ---------------------------------------------------------------------------

    def _join(self, count: int) -> None:
        """`count` visitors join the line now, through the producer."""
        producer, pages, shoppers = self.producer, self.pages, self.shoppers
        for _ in range(count):
            index = self.joined_count
            self.joined_count += 1
            self.joined_at[index] = self.scheduler.now
            token: Token = producer.join_line(producer.snapshot())
            self.index_of[token.id] = index
            prequeue = self.starts_at is not None and self.joined_at[index] < self.starts_at
            pages.joined(index, token.ordinal, token.id, prequeue=prequeue)
            if shoppers is not None:
                shoppers.joined(index, token)
        producer.metrics.flush_ended()  # what the handler does after every request

    def _ask_for_work(self, count: int) -> None:
        """`count` visitors follow the link at once: each gets the edge's copy of the
        producer's challenge (the producer asked when the window has none yet) and joins once
        their phone has solved it with their own nonce (spent as the producer spends it)."""
        producer, scheduler = self.producer, self.scheduler
        assert producer.gate is not None
        for _ in range(count):
            window = math.floor(scheduler.now / SHARED_SECONDS)
            challenge = self.shared_challenge.get(window)
            if challenge is None:
                work_ms = producer.work_ms(producer.snapshot())
                self.flood_factor_max = max(
                    self.flood_factor_max, work_ms / self.settings.join_work
                )
                challenge = producer.gate.challenge(now=scheduler.now, work_ms=work_ms)
                self.shared_challenge.clear()
                self.shared_challenge[window] = challenge
            self.pages.challenge_asked(scheduler.now)
            seconds = solve_seconds(self.solver_rng, challenge)
            self.solving_seconds.append(seconds)
            # The counters are the solving time's to model, not computed: the spend reads the
            # challenge and the nonce only.
            solution = Solution(challenge, (), visitor_nonce(self.nonce_rng.randbytes))
            scheduler.at(scheduler.now + seconds, functools.partial(self._solved, solution))

    def _solved(self, solution: Solution) -> None:
        self.producer.gate.spend(solution)  # type: ignore[union-attr]
        self._join(1)

    # -- schedule, run ----------------------------------------------------------------------

    def schedule(self) -> None:
        """The arrivals, the trigger's minutes (and the double trigger's extra deliveries) and
        the rate changes, on the clock."""
        crowd, scheduler, clicked_at = self.crowd, self.scheduler, self.clicked_at
        step = self._ask_for_work if self.settings.join_work else self._join
        # Visitors who follow the link at the same moment do so in one scheduled step.
        first = 0
        while first < crowd.visitors:
            last = first
            while last < crowd.visitors and clicked_at[last] == clicked_at[first]:
                last += 1
            scheduler.at(clicked_at[first], functools.partial(step, last - first))
            first = last
        for m in range(crowd.minutes):
            start = EPOCH + 60 * m
            scheduler.at(start + self.rng.uniform(0.0, 0.3), self._trigger)
            if crowd.faults.double_trigger:
                scheduler.at(start + self.rng.uniform(0.5, 20.0), self._trigger_again)
        for offset, new_rate in crowd.rate_changes:
            scheduler.at(EPOCH + offset, functools.partial(self._change_rate, new_rate))

    def run(self) -> None:
        # The code under simulation logs every fault it survives: thousands of lines a minute.
        pipeline_log = logging.getLogger("beekeeper")
        level = pipeline_log.level
        pipeline_log.setLevel(logging.CRITICAL)
        try:
            self.scheduler.run_until(self.end)
        finally:
            self.scheduler.stop()
            pipeline_log.setLevel(level)
        self.producer.metrics.flush()
        # Only those who joined are in line; a visitor still solving at the end never joined.
        self.joined_at = self.joined_at[: self.joined_count]
        self.admitted_at = self.admitted_at[: self.joined_count]
        self.solving_seconds.sort()

    # -- measure ------------------------------------------------------------------------------

    def measure(self) -> SimulationResult:
        """Every figure of the run, from the fakes' logs and the pages' own view."""
        crowd, settings = self.crowd, self.settings
        # Visitors who left the line (capacity mode) are out of it: not waiting, not lost.
        left = self.shoppers.left_the_line() if self.shoppers is not None else set()
        in_line = [i for i in range(len(self.joined_at)) if i not in left]
        history = History(
            epoch=EPOCH,
            minutes=crowd.minutes,
            joined=[self.joined_at[i] for i in in_line],
            admitted=[self.admitted_at[i] for i in in_line],
            lanes=self.lanes,
            rate=measure.RateTimeline(
                settings.rate, tuple((EPOCH + t, r) for t, r in crowd.rate_changes)
            ),
            admits_from=self.starts_at if self.starts_at is not None else -math.inf,
        )
        admitted_ids = {self.index_of[token_id] for _, token_id in self.table.admissions}
        waits = measure.waits(history)
        return SimulationResult(
            rate=settings.rate,
            visitors=crowd.visitors,
            arrival=str(crowd.arrival),
            minutes=crowd.minutes,
            faults=crowd.faults.names,
            seed=crowd.seed,
            **self._admissions(history, admitted_ids),
            **self._line(admitted_ids, left),
            **self._waits(history, waits),
            **self._requests(history, len(admitted_ids)),
            **self._calls(len(admitted_ids)),
            **self._series(history, waits),
            capacity=(
                self.shoppers.figures(end=self.end, admission_writes=self.table.admissions)
                if self.shoppers is not None
                else None
            ),
            **self._prequeue(admitted_ids),
            **self._work(),
        )

    def _admissions(self, history: History, admitted_ids: set[int]) -> dict[str, Any]:
        """Who went in, minute by minute, against the rate, and what the faults did."""
        queue, table = self.queue, self.table
        windows = measure.sliding_windows(history)
        smooth = measure.smoothness(history)
        return {
            "admitted_per_minute": measure.admitted_per_minute(history),
            "expected_per_minute": measure.expected_per_minute(history),
            "backlog_per_minute": [self.backlogs.get(m, 0) for m in range(self.crowd.minutes)],
            "consumers_per_minute": [
                self.lanes_per_minute.get(m, 0) for m in range(self.crowd.minutes)
            ],
            "admitted_twice": sum(1 for n in table.writes_per_id.values() if n > 1),
            "peak_second_ratio": smooth.peak_ratio,
            "smooth": smooth.smooth,
            "peak_consumers": self.scheduler.peak_alive,
            "duplicate_deliveries_skipped": self.skipped,
            "interleaved_deliveries": self.interleavings.held,
            "admission_writes_refused": table.admissions_refused,
            "faults_injected": dict(queue.injected.counts() + table.injected.counts()),
            "triggers_refused": self.refused,
            "max_admitted_in_any_60s": windows.max_admitted,
            "max_window_excess": windows.max_excess,
            "late_overtakes": measure.late_overtakes(history),
            "consumers_woken": self.woken,
            "minutes_with_rate_change": measure.minutes_with_rate_change(history),
        }

    def _line(self, admitted_ids: set[int], left: set[int]) -> dict[str, Any]:
        """The queue's messages at the end: lost (deleted, never admitted), still waiting, and
        dead-lettered."""
        states = self.queue.states()
        index_of = self.index_of

        def body_index(body: str) -> int:
            token = Token.parse(body)
            return index_of[token.id] if token else -1

        messages = list(zip(self.queue.messages, states, strict=True))
        lost = sum(
            1
            for message, state in messages
            if state == "deleted"
            and body_index(message.body) not in admitted_ids
            and body_index(message.body) not in left
        )
        if self.starts_at is not None:
            in_prequeue = self._in_prequeue()
            still_waiting = len(
                {
                    body_index(message.body)
                    for message, state in messages
                    if state in ("visible", "inflight")
                    and body_index(message.body) not in admitted_ids
                }
                | {i for i, p in enumerate(in_prequeue) if p and i not in admitted_ids}
            )
        else:
            still_waiting = sum(
                1
                for message, state in messages
                if state in ("visible", "inflight")
                and body_index(message.body) not in admitted_ids
                and body_index(message.body) not in left
            )
        return {
            "lost": lost,
            "still_waiting": still_waiting,
            "dead_lettered": sum(1 for s in states if s == "dead"),
        }

    def _in_prequeue(self) -> list[bool]:
        starts_at = self.starts_at
        return [starts_at is not None and t < starts_at for t in self.joined_at]

    @staticmethod
    def _waits(history: History, waits: list[float]) -> dict[str, Any]:
        median = measure.percentile(waits, 0.5)
        return {
            "wait_seconds_median": _round(median),
            "wait_seconds_p50": _round(median),
            "wait_seconds_p99": _round(measure.percentile(waits, 0.99)),
            "wait_seconds_max": _round(waits[-1] if waits else None),
            "wait_seconds_p90": _round(measure.percentile(waits, 0.9)),
            "wait_seconds_by_arrival_minute": [
                _round(w) for w in measure.median_wait_by_arrival_minute(history)
            ],
            "wait_histogram": measure.wait_histogram(waits).to_json(),
        }

    def _requests(self, history: History, admitted_total: int) -> dict[str, Any]:
        """What the pages sent the origin and the edge, and what they showed."""
        minutes = self.crowd.minutes
        channel = self.pages.channel(self.publishes, random.Random(self.crowd.seed + 6))  # noqa: S311
        pages = self.pages.figures()
        origin_minutes = measure.per_minute_of(pages.origin_per_second, minutes)
        edge_minutes = measure.per_minute_of(pages.edge_per_second, minutes)
        admissions_minutes = measure.admitted_per_minute(history)
        joins_minutes = measure.arrivals_per_minute(self._everyone(history))
        ratios = [
            origin / (joins + admitted)
            for origin, joins, admitted in zip(
                origin_minutes, joins_minutes, admissions_minutes, strict=True
            )
            if joins + admitted > 0
        ]
        total_served = sum(joins_minutes) + sum(admissions_minutes)
        return {
            "positions_checked": pages.places.checked,
            "position_errors": pages.places.wrong,
            "position_error_max": pages.places.largest,
            "position_error_p50": pages.places.percentile(0.5),
            "position_error_p90": pages.places.percentile(0.9),
            "position_error_p99": pages.places.percentile(0.99),
            "positions_unshown": pages.places.unshown,
            "noticed_seconds_p50": _round(measure.percentile(pages.noticed_after, 0.5)),
            "noticed_seconds_p90": _round(measure.percentile(pages.noticed_after, 0.9)),
            "origin_requests_per_minute": origin_minutes,
            "edge_requests_per_minute": edge_minutes,
            "origin_requests_per_second_peak": max(pages.origin_per_second, default=0),
            "origin_requests_per_second_mean": (
                round(sum(origin_minutes) / (60 * minutes), 1) if minutes else 0.0
            ),
            "edge_requests_per_second_peak": max(pages.edge_per_second, default=0),
            "visitor_polls_per_admission": (
                round(pages.own_polls / admitted_total, 3) if admitted_total else None
            ),
            "origin_ratio_max": round(max(ratios), 3) if ratios else None,
            "origin_ratio": (
                round(sum(origin_minutes) / total_served, 3) if total_served else None
            ),
            "push_connection_minutes_per_visitor": channel.connection_minutes,
            "push_operations_per_visitor": channel.operations,
            "push_keepalives_per_visitor": channel.keepalives,
            "state_fetches_per_visitor": channel.state_fetches,
            "change_noticed_seconds_p50": channel.noticed_p50,
            "change_noticed_seconds_p99": channel.noticed_p99,
            "push_connections_refused": channel.refused_attempts,
        }

    def _everyone(self, history: History) -> History:
        """The history with every visitor who joined, those who left the line too."""
        return dataclasses.replace(history, joined=self.joined_at, admitted=self.admitted_at)

    def _calls(self, admitted_total: int) -> dict[str, Any]:
        """The room's AWS calls; the visitors' own requests (capacity mode's /enter, /client,
        /leave) are API Gateway's."""
        calls = (
            self.queue.calls
            + self.table.calls
            - self.before_start
            - (self.shoppers.gateway_calls if self.shoppers is not None else 0)
        )
        joined_total = len(self.index_of)
        by_role = self.calls_by_role
        return {
            "aws_calls": calls,
            "aws_calls_per_admitted": (
                round(calls / admitted_total, 3) if admitted_total else None
            ),
            "calls_per_new_visitor": (
                round(by_role["producer"] / joined_total, 3) if joined_total else None
            ),
            "calls_per_admission": (
                round(by_role["admission"] / admitted_total, 3) if admitted_total else None
            ),
        }

    def _series(self, history: History, waits: list[float]) -> dict[str, Any]:
        """The time series the report's charts draw."""
        table, queue = self.table, self.queue
        return {
            "arrivals_per_minute": measure.arrivals_per_minute(self._everyone(history)),
            "rate_per_minute": measure.rate_per_minute(history),
            "waiting_step_seconds": WAITING_STEP_SECONDS,
            "waiting_over_time": measure.waiting_over_time(history, WAITING_STEP_SECONDS),
            "faults_per_minute": measure.events_per_minute(
                history,
                queue.injected.events + table.injected.events + self.extra_deliveries.events,
            ),
        }

    def _prequeue(self, admitted_ids: set[int]) -> dict[str, Any]:
        """A scheduled start's draw: who was pre-queued, and how fair their order was."""
        # Everyone admitted, in the order of their first admission write.
        order = list(
            dict.fromkeys(self.index_of[token_id] for _, token_id in self.table.admissions)
        )
        drawn = prequeue_figures(self._in_prequeue(), order)
        return {
            "starts_at_minute": self.crowd.starts_at_minute,
            "prequeue_visitors": drawn.visitors,
            "prequeue_order_tau": None if drawn.order_tau is None else round(drawn.order_tau, 4),
            "prequeue_before_later": drawn.before_later,
            "prequeue_exceptions": drawn.exceptions,
        }

    def _work(self) -> dict[str, Any]:
        """The work a place cost: the visitors' solving times, and the flood's factor."""
        solving = self.solving_seconds
        join_work = self.settings.join_work
        return {
            "join_work_ms": join_work,
            "join_work_seconds_p50": _round(measure.percentile(solving, 0.5)),
            "join_work_seconds_p95": _round(measure.percentile(solving, 0.95)),
            "join_work_seconds_max": _round(solving[-1] if solving else None),
            "join_work_flood_factor_max": (round(self.flood_factor_max, 2) if join_work else None),
            "still_solving": self.crowd.visitors - self.joined_count,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


__all__ = [
    "EPOCH",
    "Arrival",
    "Crowd",
    "Faults",
    "Simulation",
    "SimulationResult",
    "Visits",
    "simulate",
    "simulated_room",
]
