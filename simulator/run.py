"""Run the real producer, trigger and consumers in simulated time and measure what they did.

Visitors join through the producer on a schedule (a burst before the first minute, or evenly
over some minutes); the trigger runs at the start of every minute (twice with the
double-trigger fault) and starts the consumers it plans, each a simulated process, a fraction
of a second later; a visitor who joins a minute without a consumer wakes one the same way.
With `join_work_ms` a visitor first gets the producer's challenge (its difficulty rises under a
flood as the producer's does), spends the modelled solving time (simulator/solving.py), and
joins when it is done: the solution's single use is spent with the producer's conditional
write, then the place is given. The challenge is the edge's shared copy: one is issued per
SHARED_SECONDS window and every visitor who follows the link in it solves it with a nonce of
their own (the origin's requests for it are counted per edge cache: simulator/pages.py).
What is measured comes from the fakes' own logs (simulator/measure.py), not from the code
under test.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from beekeeper.core.datamodel import DRAW_KEY, Token
from beekeeper.core.join_work import SHARED_SECONDS, Challenge, Solution, visitor_nonce
from beekeeper.core.schedule import format_starts_at
from beekeeper.core.settings import RoomSettings
from beekeeper.room.assembly import Effects, Part, assemble
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.room_state import read_number, refresh_status, write_config
from beekeeper.room.wiring import RoomWiring
from beekeeper.simulator import measure
from beekeeper.simulator.capacity import CapacityCrowd, CapacityFigures, CapacityPlan
from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.fake_sqs import FakeQueue
from beekeeper.simulator.faults import FaultLog, Faults, Interleavings
from beekeeper.simulator.pages import PageCrowd
from beekeeper.simulator.prequeue import prequeue_figures
from beekeeper.simulator.solving import solve_seconds

# A realistic epoch (a whole minute) so epoch minutes and TTLs look like production's.
EPOCH = 1_800_000_000 - 1_800_000_000 % 60
TABLE = "beekeeper-sim"
QUEUE_URL = "https://sqs.simulated/queue"
# The simulated room's join secret (it signs challenges nobody forges here).
JOIN_SECRET = "simulated-join-secret-" + "0" * 42
# How long an asynchronous Lambda invoke takes to start the function (modelled).
START_LATENCY_SECONDS = (0.05, 0.5)
# Visitors whose shown place is checked against the truth: every one up to this many, a
# sample beyond (every page is simulated; simulator/pages.py).
POLLING_VISITORS = 5_000
# How often the line's length is sampled for `waiting_over_time`.
WAITING_STEP_SECONDS = 10


@dataclass(frozen=True)
class Arrival:
    """ "burst": everyone just before the first minute; "uniform:K": evenly over K minutes;
    "at:S": everyone S seconds into the first minute; "over:S" (tests only): evenly over the
    first S seconds of the first minute."""

    kind: str
    minutes: int = 0
    seconds: float = 0

    @classmethod
    def parse(cls, text: str) -> Arrival:
        if text == "burst":
            return cls("burst")
        kind, _, number = text.partition(":")
        if kind == "uniform" and number.isdigit() and int(number) >= 1:
            return cls("uniform", minutes=int(number))
        if kind == "at" and number.isdigit():
            return cls("at", seconds=int(number))
        raise ValueError(
            f"arrival {text!r}: use 'burst', 'uniform:MINUTES' (e.g. uniform:5) "
            "or 'at:SECONDS' (everyone that many seconds into the first minute)"
        )

    def times(self, visitors: int) -> list[float]:
        if self.kind == "burst":
            return [EPOCH - 1.0] * visitors
        if self.kind == "at":
            return [EPOCH + float(self.seconds)] * visitors
        if self.kind == "over":
            return [EPOCH + self.seconds * i / visitors for i in range(visitors)]
        span = self.minutes * 60
        return [EPOCH + span * i / visitors for i in range(visitors)]

    def __str__(self) -> str:
        if self.kind == "uniform":
            return f"uniform:{self.minutes}"
        if self.kind == "over":
            return f"over:{self.seconds:g}"
        return f"at:{self.seconds}" if self.kind == "at" else self.kind


@dataclass
class SimulationResult:
    rate: int
    visitors: int
    arrival: str
    minutes: int
    faults: list[str]
    seed: int
    admitted_per_minute: list[int]
    # min(rate, visitors in line at some moment of the minute's admission span)
    expected_per_minute: list[int]
    backlog_per_minute: list[int]  # the queue's backlog when the trigger claimed the minute
    consumers_per_minute: list[int]  # consumers started for the minute (woken ones included)
    lost: int
    admitted_twice: int
    peak_second_ratio: float  # busiest second / the rate's mean second
    smooth: bool  # every second within 1.25 x the rate's mean second + one receive batch
    peak_consumers: int
    aws_calls: int  # every call the room made: producer, trigger and consumers
    aws_calls_per_admitted: float | None
    still_waiting: int
    dead_lettered: int
    duplicate_deliveries_skipped: int = 0
    # The duplicates fault's interleaving: consumers held between their duplicate check and
    # their admission write while another took the copy, and the admission writes the table
    # refused because the visitor had been admitted meanwhile (each a second ticket avoided).
    interleaved_deliveries: int = 0
    admission_writes_refused: int = 0
    # How often each fault actually struck (a fault switched on but never hit proves nothing).
    faults_injected: dict[str, int] = field(default_factory=dict)
    triggers_refused: int = 0  # duplicate trigger deliveries that found their minute claimed
    # From joining the line to the first admission write, over the visitors admitted.
    wait_seconds_median: float | None = None
    wait_seconds_p50: float | None = None
    wait_seconds_p99: float | None = None
    wait_seconds_max: float | None = None
    # The most admission writes in any [t, t + 60 s), and by how much the worst window
    # exceeded rate + one receive batch per consumer running in it (<= 0: the cap held).
    max_admitted_in_any_60s: int = 0
    max_window_excess: int = 0
    # Admissions that passed a visitor still waiting who had joined at least 10 s earlier.
    late_overtakes: int = 0
    # Places shown by a sample of the pages at their fetches of the shared state, and how many
    # were other than the true one (a place below 1, "at the front", counts as 1).
    positions_checked: int = 0
    position_errors: int = 0
    position_error_max: int = 0
    # |shown - true| over the places checked, in places (None without one).
    position_error_p50: int | None = None
    position_error_p90: int | None = None
    position_error_p99: int | None = None
    # Sampled moments at which the page showed no number yet (its shared state did not know
    # the visitor's turn yet: docs/pipeline.md, "The place shown").
    positions_unshown: int = 0
    # From admission to the page noticing it (its own /polling seeing the admission).
    noticed_seconds_p50: float | None = None
    noticed_seconds_p90: float | None = None
    # What the pages send (simulator/pages.py): every request past the edge reaches the
    # origin (the joins, the pages' own /polling, the edge's misses); every request at all
    # reaches the edge (those, the page loads and the shared state's fetches). Per calendar
    # minute like `admitted_per_minute`, and per second at the busiest and on average.
    origin_requests_per_minute: list[int] = field(default_factory=list)
    edge_requests_per_minute: list[int] = field(default_factory=list)
    origin_requests_per_second_peak: int = 0
    origin_requests_per_second_mean: float = 0.0
    edge_requests_per_second_peak: int = 0
    visitor_polls_per_admission: float | None = None
    # The origin's requests against the joins and admissions of the same minute: the worst
    # minute (minutes with any) and the whole run (issue 26: at most 1.3).
    origin_ratio_max: float | None = None
    origin_ratio: float | None = None
    consumers_woken: int = 0  # consumers started by a visitor joining a minute without one
    # The marketing link's calls per new visitor, and the trigger's and consumers' calls per
    # visitor admitted.
    calls_per_new_visitor: float | None = None
    calls_per_admission: float | None = None
    # Minutes in which the rate was changed: not judged by `exact` (see docs/pipeline.md).
    minutes_with_rate_change: list[int] = field(default_factory=list)
    # Time series for charts (`beekeeper simulate --report`), one value a minute unless named.
    arrivals_per_minute: list[int] = field(default_factory=list)  # a burst counts in minute 1
    rate_per_minute: list[int] = field(default_factory=list)  # in force as the minute starts
    waiting_step_seconds: int = WAITING_STEP_SECONDS
    # Visitors in line every `waiting_step_seconds` from the first minute's start to the end.
    waiting_over_time: list[int] = field(default_factory=list)
    wait_seconds_p90: float | None = None
    # The median wait of those who joined in each minute (None: nobody, or half still waiting).
    wait_seconds_by_arrival_minute: list[float | None] = field(default_factory=list)
    # The waits in bins: {"bin_seconds": width, "counts": [visitors in each bin]}.
    wait_histogram: dict[str, Any] = field(default_factory=dict)
    # Each fault that struck, per minute, by kind; "double-trigger" counts the extra deliveries.
    faults_per_minute: dict[str, list[int]] = field(default_factory=dict)
    # Capacity mode only (simulator/capacity.py): its keys join the JSON's top level.
    capacity: CapacityFigures | None = None
    # A scheduled event (--starts-at-minute K; None: no schedule): who joined the pre-queue,
    # Kendall's tau between their arrival and admission orders (near 0: a fair draw), whether
    # all of them went in before anyone who arrived after the start, and those who did not.
    starts_at_minute: int | None = None
    prequeue_visitors: int = 0
    prequeue_order_tau: float | None = None
    prequeue_before_later: bool = True
    prequeue_exceptions: int = 0
    # The work a place costs (--join-work, ms of a typical phone's time; 0: none modelled):
    # the visitors' solving times from the challenge to joining the line, and the most the
    # work rose by under a flood. Visitors still solving when the run ends never joined.
    join_work_ms: int = 0
    join_work_seconds_p50: float | None = None
    join_work_seconds_p95: float | None = None
    join_work_seconds_max: float | None = None
    join_work_flood_factor_max: float | None = None
    still_solving: int = 0

    @property
    def exact(self) -> bool:
        """Every full minute admitted its expected count."""
        skip = set(self.minutes_with_rate_change)
        return all(
            admitted == expected
            for m, (admitted, expected) in enumerate(
                zip(self.admitted_per_minute, self.expected_per_minute, strict=True)
            )
            if m not in skip
        )

    @property
    def window_cap_held(self) -> bool:
        return self.max_window_excess <= 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["capacity"]
        if self.capacity is not None:
            data.update(self.capacity.to_json())
        data["exact"] = self.exact
        data["window_cap_held"] = self.window_cap_held
        return data


class Counted:
    """A fake client seen through one role's eyes: counts the calls that role makes."""

    def __init__(self, target: Any, calls: Counter[str], role: str) -> None:
        self._target = target
        self._calls = calls
        self._role = role

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)

        def counted(**kwargs: Any) -> Any:
            self._calls[self._role] += 1
            return method(**kwargs)

        return counted


def _token_bytes(counter: list[int]) -> Any:
    """Visitor i's token id encodes i: as good as a CSPRNG here (ids only need to differ)."""

    def token_bytes(size: int) -> bytes:
        counter[0] += 1
        return (counter[0] - 1).to_bytes(size, "big")

    return token_bytes


def simulate(
    *,
    rate: int,
    visitors: int,
    arrival: Arrival,
    minutes: int,
    faults: Faults | None = None,
    seed: int = 1,
    consumer_capacity: int | None = None,
    rate_changes: Sequence[tuple[float, int]] = (),
    capacity: CapacityPlan | None = None,
    starts_at_minute: int | None = None,
    metrics: Callable[[Callable[[], float]], MetricSink] | None = None,
    join_work_ms: int = 0,
    watch_pages: Callable[[PageCrowd], None] | None = None,
) -> SimulationResult:
    """`rate_changes`: (seconds after the first minute starts, new rate) for live changes;
    `capacity`: a cap on the visitors inside, and how visitors wait and shop (capacity mode).
    `starts_at_minute` K: a scheduled event starting at minute K; earlier arrivals join the
    pre-queue and are drawn at the start. `metrics(clock)`: a new sink on the simulated clock for
    each container, as Lambda gives one (the producer's, and each trigger's and consumer's run),
    to record the room's metrics (none by default). `join_work_ms`: the work a place costs
    (see the module)."""
    faults = faults or Faults()
    settings = RoomSettings(
        name="simulated",
        display_name="Simulated room",
        region="us-east-1",
        origin="https://shop.example.com",
        rate=rate,
        join_work=join_work_ms,
    )
    if consumer_capacity:
        settings = settings.replace(consumer_capacity=consumer_capacity)
    if capacity is not None:
        settings = capacity.settings(settings)
    starts_at = EPOCH + 60 * starts_at_minute if starts_at_minute is not None else None
    if starts_at is not None:
        settings = settings.replace(starts_at=format_starts_at(starts_at))
    rng = random.Random(seed)  # noqa: S311 - a reproducible simulation, not a secret
    scheduler = Scheduler(start=EPOCH - 2.0)

    def new_sink() -> MetricSink:
        return metrics(scheduler.clock) if metrics is not None else DISCARD

    interleavings = Interleavings()
    queue = FakeQueue(scheduler, rng, faults, QUEUE_URL, interleavings)
    table = FakeTable(scheduler, rng, faults, TABLE, interleavings)
    calls_by_role: Counter[str] = Counter()
    clicked_at = arrival.times(visitors)  # when each visitor follows the marketing link
    # When each visitor joined the line, in the order they joined (without work: the clicks).
    joined_at = list(clicked_at)
    joined_count = [0]
    solving_seconds: list[float] = []
    admitted_at: list[float | None] = [None] * visitors
    lanes: list[tuple[float, float]] = []
    lanes_per_minute: dict[int, int] = {}
    backlogs: dict[int, int] = {}
    skipped = [0]
    refused = [0]
    woken = [0]
    end = EPOCH + 60 * minutes
    probe = PageCrowd(
        scheduler=scheduler,
        table=table,
        visitors=visitors,
        rng=random.Random(seed + 4),  # noqa: S311 - page loads, not a secret
        minute_seconds=60.0,
        origin_time=EPOCH,
        end=end,
        sample_every=max(1, visitors // POLLING_VISITORS),
        starts_at=starts_at,
        draw_base=lambda: read_number(table.items.get(DRAW_KEY), "admitted_base"),
    )

    index_of: dict[str, int] = {}  # token id -> visitor

    def wired(part: Part) -> RoomWiring:
        """The room's code bound to the fakes, its calls counted under its part's name."""
        return RoomWiring(
            settings=settings,
            table=TABLE,
            queue_url=QUEUE_URL,
            dynamodb=Counted(table, calls_by_role, part),
            sqs=Counted(queue, calls_by_role, part),
        )

    def start_consumer(payload: dict[str, Any]) -> None:
        minute = int(payload["minute"]) - EPOCH // 60
        lanes_per_minute[minute] = lanes_per_minute.get(minute, 0) + 1
        woken[0] += bool(payload.get("woken"))

        def body() -> None:
            started = scheduler.now
            sink = new_sink()
            try:
                report = room.run_consumer(payload, metrics=sink)
                skipped[0] += report.duplicates
            finally:
                sink.flush()  # the handler's end of run
                lanes.append((started, scheduler.now))

        scheduler.spawn(scheduler.now + rng.uniform(*START_LATENCY_SECONDS), body)

    # The room's keys and proof of work: its tokens carry its mark, as every room's do. Its
    # consumers sign no tickets (the simulator measures admission, not signing).
    room = assemble(
        wired,
        Effects(
            clock=scheduler.clock,
            sleep=scheduler.sleep,
            invoke_consumer=start_consumer,
            read_join_secret=lambda: JOIN_SECRET,
            producer_metrics=new_sink(),
            token_bytes=_token_bytes([0]),
            challenge_bytes=rng.randbytes,
            shard_rng=random.Random(seed + 1),  # noqa: S311 - shard choice, not a secret
            secret_bytes=rng.randbytes,
            jitter_rng=random.Random(seed + 5),  # noqa: S311 - retries' pauses, not a secret
        ),
    )
    producer = room.producer
    crowd = (
        CapacityCrowd(
            plan=capacity,
            settings=settings,
            scheduler=scheduler,
            table=table,
            table_name=TABLE,
            rng=random.Random(seed + 2),  # noqa: S311 - the crowd's choices, not a secret
            # POST /leave: the producer's route, with the room's keys.
            leaving=room.leaving,
        )
        if capacity is not None
        else None
    )

    def on_admission(when: float, token_id: str) -> None:
        index = index_of[token_id]
        admitted_at[index] = when
        probe.admitted(index, when)
        if crowd is not None:
            crowd.admitted(token_id, when)

    table.on_admission = on_admission
    if watch_pages is not None:
        watch_pages(probe)  # a test's look at the pages (it schedules its own checks)

    if crowd is not None:
        crowd.on_passed_over = probe.passed
        crowd.on_left_line = probe.left
        crowd.on_request = probe.origin_request
        probe.on_noticed = crowd.noticed

    solver_rng = random.Random(seed + 3)  # noqa: S311 - the visitors' phones, not a secret
    nonce_rng = random.Random(seed + 4)  # noqa: S311 - the pages' nonces, not a secret here
    flood_factor_max = [1.0]
    shared_challenge: dict[int, Challenge] = {}  # the edge's copy, by SHARED_SECONDS window

    def join(count: int) -> None:
        for _ in range(count):
            index = joined_count[0]
            joined_count[0] += 1
            joined_at[index] = scheduler.now
            token: Token = producer.join_line(producer.snapshot())
            index_of[token.id] = index
            prequeue = starts_at is not None and joined_at[index] < starts_at
            probe.joined(index, token.ordinal, token.id, prequeue=prequeue)
            if crowd is not None:
                crowd.joined(index, token)
        producer.metrics.flush_ended()  # what the handler does after every request

    def ask_for_work(count: int) -> None:
        """`count` visitors follow the link at once: each gets the edge's copy of the
        producer's challenge (the producer asked when the window has none yet) and joins once
        their phone has solved it with their own nonce (spent as the producer spends it)."""
        assert producer.gate is not None
        for _ in range(count):
            window = math.floor(scheduler.now / SHARED_SECONDS)
            challenge = shared_challenge.get(window)
            if challenge is None:
                work_ms = producer.work_ms(producer.snapshot())
                flood_factor_max[0] = max(flood_factor_max[0], work_ms / join_work_ms)
                challenge = producer.gate.challenge(now=scheduler.now, work_ms=work_ms)
                shared_challenge.clear()
                shared_challenge[window] = challenge
            probe.challenge_asked(scheduler.now)
            seconds = solve_seconds(solver_rng, challenge)
            solving_seconds.append(seconds)
            # The counters are the solving time's to model, not computed: the spend reads the
            # challenge and the nonce only.
            solution = Solution(challenge, (), visitor_nonce(nonce_rng.randbytes))

            def done(solution: Solution = solution) -> None:
                producer.gate.spend(solution)  # type: ignore[union-attr]
                join(1)

            scheduler.at(scheduler.now + seconds, done)

    def trigger() -> None:
        sink = new_sink()
        outcome = room.run_trigger(metrics=sink)
        sink.flush()
        if not outcome.claimed:
            refused[0] += 1
        else:
            backlogs[outcome.minute - EPOCH // 60] = outcome.backlog

    extra_deliveries = FaultLog(scheduler.clock)

    def trigger_again() -> None:
        extra_deliveries.add("double-trigger")
        trigger()

    def change_rate(new_rate: int) -> None:
        write_config(table, TABLE, settings, now=scheduler.now, operator_rate=new_rate)

    # The room was deployed before: its status (and the shared state's history) as the last
    # minute's trigger published it, before anyone came.
    refresh_status(table, TABLE, settings, now=EPOCH - 60.0, pauses=room.pauses)
    before_start = table.calls  # not the run's
    # Visitors who follow the link at the same moment do so in one scheduled step.
    first = 0
    while first < visitors:
        last = first
        while last < visitors and clicked_at[last] == clicked_at[first]:
            last += 1
        step = ask_for_work if join_work_ms else join
        scheduler.at(clicked_at[first], functools.partial(step, last - first))
        first = last
    for m in range(minutes):
        start = EPOCH + 60 * m
        scheduler.at(start + rng.uniform(0.0, 0.3), trigger)
        if faults.double_trigger:
            scheduler.at(start + rng.uniform(0.5, 20.0), trigger_again)
    for offset, new_rate in rate_changes:
        scheduler.at(EPOCH + offset, functools.partial(change_rate, new_rate))
    # The code under simulation logs every fault it survives: thousands of lines per minute.
    pipeline_log = logging.getLogger("beekeeper")
    level = pipeline_log.level
    pipeline_log.setLevel(logging.CRITICAL)
    try:
        scheduler.run_until(end)
    finally:
        scheduler.stop()
        pipeline_log.setLevel(level)
    producer.metrics.flush()
    # Only those who joined are in line; a visitor still solving at the end never joined.
    joined_at = joined_at[: joined_count[0]]
    admitted_at = admitted_at[: joined_count[0]]
    solving_seconds.sort()

    # Visitors who left the line (capacity mode) are out of it: not waiting, not lost.
    left_the_line = crowd.left_the_line() if crowd is not None else set()
    in_line = [i for i in range(len(joined_at)) if i not in left_the_line]
    history = measure.History(
        epoch=EPOCH,
        minutes=minutes,
        joined=[joined_at[i] for i in in_line],
        admitted=[admitted_at[i] for i in in_line],
        lanes=lanes,
        rate=measure.RateTimeline(rate, tuple((EPOCH + t, r) for t, r in rate_changes)),
        admits_from=starts_at if starts_at is not None else -math.inf,
    )
    states = queue.states()
    admitted_ids = {index_of[token_id] for _, token_id in table.admissions}

    def body_index(body: str) -> int:
        token = Token.parse(body)
        return index_of[token.id] if token else -1

    lost = sum(
        1
        for message, state in zip(queue.messages, states, strict=True)
        if state == "deleted"
        and body_index(message.body) not in admitted_ids
        and body_index(message.body) not in left_the_line
    )
    admitted_total = len(admitted_ids)
    in_prequeue = [starts_at is not None and t < starts_at for t in joined_at]
    # Everyone admitted, in the order of their first admission write.
    order = list(dict.fromkeys(index_of[token_id] for _, token_id in table.admissions))
    drawn = prequeue_figures(in_prequeue, order)
    # The room's calls: the visitors' own requests (capacity mode's /enter, /client, /leave)
    # are API Gateway's.
    calls = (
        queue.calls + table.calls - before_start - (crowd.gateway_calls if crowd is not None else 0)
    )
    joined_total = len(index_of)
    waits = measure.waits(history)
    median = measure.percentile(waits, 0.5)
    pages = probe.figures()
    origin_minutes = measure.per_minute_of(pages.origin_per_second, minutes)
    edge_minutes = measure.per_minute_of(pages.edge_per_second, minutes)
    admissions_minutes = measure.admitted_per_minute(history)
    joins_minutes = measure.arrivals_per_minute(
        dataclasses.replace(history, joined=joined_at, admitted=admitted_at)
    )
    ratios = [
        origin / (joins + admitted)
        for origin, joins, admitted in zip(
            origin_minutes, joins_minutes, admissions_minutes, strict=True
        )
        if joins + admitted > 0
    ]
    total_served = sum(joins_minutes) + sum(admissions_minutes)
    windows = measure.sliding_windows(history)
    smooth = measure.smoothness(history)
    return SimulationResult(
        rate=rate,
        visitors=visitors,
        arrival=str(arrival),
        minutes=minutes,
        faults=faults.names,
        seed=seed,
        admitted_per_minute=measure.admitted_per_minute(history),
        expected_per_minute=measure.expected_per_minute(history),
        backlog_per_minute=[backlogs.get(m, 0) for m in range(minutes)],
        consumers_per_minute=[lanes_per_minute.get(m, 0) for m in range(minutes)],
        lost=lost,
        admitted_twice=sum(1 for n in table.writes_per_id.values() if n > 1),
        peak_second_ratio=smooth.peak_ratio,
        smooth=smooth.smooth,
        peak_consumers=scheduler.peak_alive,
        aws_calls=calls,
        aws_calls_per_admitted=round(calls / admitted_total, 3) if admitted_total else None,
        still_waiting=len(
            {
                body_index(message.body)
                for message, state in zip(queue.messages, states, strict=True)
                if state in ("visible", "inflight") and body_index(message.body) not in admitted_ids
            }
            | {i for i, p in enumerate(in_prequeue) if p and i not in admitted_ids}
        )
        if starts_at is not None
        else sum(
            1
            for message, state in zip(queue.messages, states, strict=True)
            if state in ("visible", "inflight")
            and body_index(message.body) not in admitted_ids
            and body_index(message.body) not in left_the_line
        ),
        dead_lettered=sum(1 for s in states if s == "dead"),
        duplicate_deliveries_skipped=skipped[0],
        interleaved_deliveries=interleavings.held,
        admission_writes_refused=table.admissions_refused,
        faults_injected=dict(queue.injected.counts() + table.injected.counts()),
        triggers_refused=refused[0],
        wait_seconds_median=_round(median),
        wait_seconds_p50=_round(median),
        wait_seconds_p99=_round(measure.percentile(waits, 0.99)),
        wait_seconds_max=_round(waits[-1] if waits else None),
        max_admitted_in_any_60s=windows.max_admitted,
        max_window_excess=windows.max_excess,
        late_overtakes=measure.late_overtakes(history),
        positions_checked=pages.places.checked,
        position_errors=pages.places.wrong,
        position_error_max=pages.places.largest,
        position_error_p50=pages.places.percentile(0.5),
        position_error_p90=pages.places.percentile(0.9),
        position_error_p99=pages.places.percentile(0.99),
        positions_unshown=pages.places.unshown,
        noticed_seconds_p50=_round(measure.percentile(pages.noticed_after, 0.5)),
        noticed_seconds_p90=_round(measure.percentile(pages.noticed_after, 0.9)),
        origin_requests_per_minute=origin_minutes,
        edge_requests_per_minute=edge_minutes,
        origin_requests_per_second_peak=max(pages.origin_per_second, default=0),
        origin_requests_per_second_mean=round(sum(origin_minutes) / (60 * minutes), 1)
        if minutes
        else 0.0,
        edge_requests_per_second_peak=max(pages.edge_per_second, default=0),
        visitor_polls_per_admission=(
            round(pages.own_polls / admitted_total, 3) if admitted_total else None
        ),
        origin_ratio_max=round(max(ratios), 3) if ratios else None,
        origin_ratio=round(sum(origin_minutes) / total_served, 3) if total_served else None,
        consumers_woken=woken[0],
        calls_per_new_visitor=(
            round(calls_by_role["producer"] / joined_total, 3) if joined_total else None
        ),
        calls_per_admission=(
            round(calls_by_role["admission"] / admitted_total, 3) if admitted_total else None
        ),
        minutes_with_rate_change=measure.minutes_with_rate_change(history),
        arrivals_per_minute=measure.arrivals_per_minute(
            dataclasses.replace(history, joined=joined_at, admitted=admitted_at)
        ),
        rate_per_minute=measure.rate_per_minute(history),
        waiting_over_time=measure.waiting_over_time(history, WAITING_STEP_SECONDS),
        wait_seconds_p90=_round(measure.percentile(waits, 0.9)),
        wait_seconds_by_arrival_minute=[
            _round(w) for w in measure.median_wait_by_arrival_minute(history)
        ],
        wait_histogram=measure.wait_histogram(waits).to_json(),
        faults_per_minute=measure.events_per_minute(
            history, queue.injected.events + table.injected.events + extra_deliveries.events
        ),
        capacity=(
            crowd.figures(end=end, admission_writes=table.admissions) if crowd is not None else None
        ),
        starts_at_minute=starts_at_minute,
        prequeue_visitors=drawn.visitors,
        prequeue_order_tau=None if drawn.order_tau is None else round(drawn.order_tau, 4),
        prequeue_before_later=drawn.before_later,
        prequeue_exceptions=drawn.exceptions,
        join_work_ms=join_work_ms,
        join_work_seconds_p50=_round(measure.percentile(solving_seconds, 0.5)),
        join_work_seconds_p95=_round(measure.percentile(solving_seconds, 0.95)),
        join_work_seconds_max=_round(solving_seconds[-1] if solving_seconds else None),
        join_work_flood_factor_max=round(flood_factor_max[0], 2) if join_work_ms else None,
        still_solving=visitors - joined_count[0],
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)
