"""What `beekeeper simulate` reports: every figure of one run, and its `--json` keys.

The keys are the fields' names (capacity mode's and presence's join them at the top level:
simulator/capacity.py), plus `exact` and `window_cap_held`; docs/pipeline.md describes them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from beekeeper.simulator.capacity import CapacityFigures

# How often the line's length is sampled for `waiting_over_time`.
WAITING_STEP_SECONDS = 10


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
    # The pages' push channel (simulator/push.py), per visitor who loaded a page: its
    # connection-minutes, its operations (connection attempts, refused ones too, subscribes,
    # deliveries), the keep-alives it got (their own key: AWS's pages do not settle whether
    # they are billed), its fetches of the shared document; from each change's publish to each
    # open page knowing it; the connection attempts AWS's default rate refused.
    push_connection_minutes_per_visitor: float = 0.0
    push_operations_per_visitor: float = 0.0
    push_keepalives_per_visitor: float = 0.0
    state_fetches_per_visitor: float = 0.0
    change_noticed_seconds_p50: float | None = None
    change_noticed_seconds_p99: float | None = None
    push_connections_refused: int = 0
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
