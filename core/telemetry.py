"""The room's custom CloudWatch metrics: the names the Lambdas emit and the dashboard reads.

The functions write them as Embedded Metric Format lines (room/emf.py) into
METRIC_NAMESPACE with one dimension set, [ROOM_DIMENSION] = the room's name; the monitoring
construct (stacks/monitoring.py) graphs and alarms on the very same `Metric` values, so the two
sides can not name a metric differently. Standard library only: the Lambda asset ships it.
"""

from __future__ import annotations

from dataclasses import dataclass

METRIC_NAMESPACE = "Beekeeper"
ROOM_DIMENSION = "Room"
# Every line carries exactly this dimension set: one metric per room, never per visitor.
DIMENSION_SETS: tuple[tuple[str, ...], ...] = ((ROOM_DIMENSION,),)


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str  # a CloudWatch unit (EMF's MetricDefinition.Unit)
    # How a minute's values from several containers combine on a graph or in an alarm: counts
    # add up; a level (a rate, a queue length) is read as the largest value reported; a
    # distribution (one value per visitor) is read by its percentiles, the median first.
    statistic: str
    emitted_by: str  # the function that emits it
    what: str


def _count(name: str, emitted_by: str, what: str) -> Metric:
    return Metric(name, "Count", "Sum", emitted_by, what)


def _level(name: str, unit: str, emitted_by: str, what: str) -> Metric:
    return Metric(name, unit, "Maximum", emitted_by, what)


def _distribution(name: str, unit: str, emitted_by: str, what: str) -> Metric:
    """One value per event, written as EMF value arrays: CloudWatch keeps the raw values, so
    percentiles (pNN) and percentile ranks (PR) can be read from them. A statistic set would
    not do: "CloudWatch needs raw data points to calculate percentile statistics"
    (GetMetricStatistics, Amazon CloudWatch API Reference)."""
    return Metric(name, unit, "p50", emitted_by, what)


ARRIVALS = _count("Arrivals", "producer", "new visitors given a place in line")
REJOINED = _count(
    "Rejoined",
    "producer",
    "returning visitors whose admission expired or whose token the room did not know, "
    "given a new place (also counted in Arrivals)",
)
ADMITTED = _count("Admitted", "consumer", "visitors admitted (a duplicate is never counted)")
DUPLICATES = _count("Duplicates", "consumer", "duplicate deliveries recognised and deleted")
WRITE_RETRIES = _count(
    "WriteRetries", "consumer", "admission writes retried after throttling or unprocessed items"
)
ABANDONED_BATCHES = _count(
    "AbandonedBatches", "consumer", "batches given up on an unexpected error (visitors requeued)"
)
RATE = _level("Rate", "None", "trigger", "the effective rate in visitors/min; 0 while off")
OPERATOR_RATE = _level("OperatorRate", "None", "trigger", "the rate the operator set")
BACKLOG = _level("Backlog", "Count", "trigger", "visitors in the queue when the minute began")
PLANNED = _level("Planned", "Count", "trigger", "visitors the minute plans to admit")
WAIT = _distribution(
    "Wait",
    "Seconds",
    "consumer",
    "one value per visitor admitted from the queue: seconds from joining the line (the "
    "message's SentTimestamp) to the admission; a drawn pre-queue visitor's counts from the "
    "scheduled start",
)
# Capacity mode (a room with max_inside > 0) only.
INSIDE = _level(
    "Inside", "Count", "trigger", "visitors holding a place inside the shop as the minute began"
)
MAX_INSIDE = _level("MaxInside", "Count", "trigger", "the cap on visitors inside (max_inside)")
LEFT_LINE = _count(
    "LeftLine", "consumer", "visitors who left the line before their turn (passed over)"
)
LEFT_SHOP = _count("LeftShop", "consumer", "places freed because their holder left (/leave)")
NO_SHOWS = _count(
    "NoShows", "consumer", "admitted visitors who never arrived before their claim ran out"
)
SESSIONS_ENDED = _count(
    "SessionsEnded", "consumer", "places freed because an arrived visitor's session ran out"
)
GOVERNOR_HALVED = _count("GovernorHalved", "governor", "checks that halved the rate")
GOVERNOR_HELD = _count("GovernorHeld", "governor", "slow checks that held the rate (no raise)")
GOVERNOR_RAISED = _count("GovernorRaised", "governor", "checks that raised the rate again")
GOVERNOR_MEDIAN_MS = _level(
    "GovernorMedian", "Milliseconds", "governor", "the shop's median answer time in a check"
)
GOVERNOR_P90_MS = _level(
    "GovernorP90", "Milliseconds", "governor", "the shop's 90th percentile answer time in a check"
)
# The push channel (core/push.py): what the room's writers published to waiting pages, and what
# the channel refused (each publish goes again with the writer's next status).
PUSHES = _count(
    "Pushes",
    "trigger, consumer, governor",
    "changes and resyncs published to the waiting pages' channel",
)
PUSH_FAILURES = _count(
    "PushFailures",
    "trigger, consumer, governor",
    "publishes the channel refused or that could not reach it (pages fall back to the shared "
    "state)",
)

METRICS: tuple[Metric, ...] = (
    ARRIVALS,
    REJOINED,
    ADMITTED,
    DUPLICATES,
    WRITE_RETRIES,
    ABANDONED_BATCHES,
    RATE,
    OPERATOR_RATE,
    BACKLOG,
    PLANNED,
    GOVERNOR_HALVED,
    GOVERNOR_HELD,
    GOVERNOR_RAISED,
    GOVERNOR_MEDIAN_MS,
    GOVERNOR_P90_MS,
    WAIT,
    INSIDE,
    MAX_INSIDE,
    LEFT_LINE,
    LEFT_SHOP,
    NO_SHOWS,
    SESSIONS_ENDED,
    PUSHES,
    PUSH_FAILURES,
)
assert len({metric.name for metric in METRICS}) == len(METRICS), "one name per metric"
# Emitted by a capacity-mode room only (max_inside > 0); its dashboard graphs them.
CAPACITY_METRICS: tuple[Metric, ...] = (
    INSIDE,
    MAX_INSIDE,
    LEFT_LINE,
    LEFT_SHOP,
    NO_SHOWS,
    SESSIONS_ENDED,
)

# The governor's decisions (room/governor.py) that are counted, by decision name.
GOVERNOR_DECISIONS = {"halve": GOVERNOR_HALVED, "hold": GOVERNOR_HELD, "raise": GOVERNOR_RAISED}

# The percentiles of a distribution the dashboard graphs and `beekeeper report` reads.
PERCENTILES = ("p50", "p90", "p99")

# AWS's own metrics the report reads beside the room's. The origin: API Gateway's request
# count, by the REST API's name (the stack names it `beekeeper-<room>`; stacks/api.py).
API_GATEWAY_NAMESPACE = "AWS/ApiGateway"
API_GATEWAY_REQUESTS = "Count"
API_NAME_DIMENSION = "ApiName"
# The edge, for a room deployed behind CloudFront: the distribution's viewer requests, read in
# us-east-1 under the dimensions DistributionId and Region=Global ("Types of metrics for
# CloudFront", Amazon CloudFront Developer Guide).
CLOUDFRONT_NAMESPACE = "AWS/CloudFront"
CLOUDFRONT_REQUESTS = "Requests"
CLOUDFRONT_METRICS_REGION = "us-east-1"
DISTRIBUTION_DIMENSION = "DistributionId"
CLOUDFRONT_REGION_DIMENSION = ("Region", "Global")

# How long CloudWatch keeps data at each period ("Amazon CloudWatch retains metric data as
# follows", GetMetricStatistics; MetricStat's Period, Amazon CloudWatch API Reference): a query
# whose start is older than a resolution is kept must ask for a coarser period, or it gets no
# data points. High-resolution data (StorageResolution 1) can be read by the second for 3 hours.
RETENTION: tuple[tuple[int, int], ...] = (
    (3 * 3600, 1),  # (start at most this many seconds ago, shortest period)
    (15 * 86_400, 60),
    (63 * 86_400, 300),
    (455 * 86_400, 3600),
)
HIGH_RESOLUTION_PERIODS = (1, 5, 10, 20, 30)
REGULAR_PERIOD = 60


def shortest_period(age_seconds: float, *, high_resolution: bool = False) -> int | None:
    """The shortest period CloudWatch answers for data whose start is `age_seconds` old (None:
    the data is gone)."""
    for within, period in RETENTION:
        if age_seconds <= within:
            return period if high_resolution or period >= REGULAR_PERIOD else REGULAR_PERIOD
    return None


def valid_period(period: int) -> bool:
    """1, 5, 10, 20, 30 (high-resolution data) or a multiple of 60 seconds."""
    return period in HIGH_RESOLUTION_PERIODS or (period > 0 and period % REGULAR_PERIOD == 0)
