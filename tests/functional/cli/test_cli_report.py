"""`beekeeper report` of a deployed room, against moto's CloudWatch holding the metrics the real
functions wrote during a simulated event.

The simulator runs the real producer, trigger and consumers on a simulated clock; their EMF
lines (what Lambda hands CloudWatch Logs) are turned into PutMetricData calls on moto, as
CloudWatch Logs turns them into metrics. The report must then tell what the simulator measured
and what the lines hold. moto computes no percentiles: `moto_percentiles` gives it
CloudWatch's definitions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from beekeeper.charts.words import Timeline
from beekeeper.core.settings import RoomSettings
from beekeeper.room.emf import MinuteMetrics
from beekeeper.room.governor import record_check
from beekeeper.room.governor_records import Decision, log_item
from beekeeper.simulator.run import (
    EPOCH,
    Arrival,
    Crowd,
    SimulationResult,
    Visits,
    simulate,
    simulated_room,
)
from beekeeper.store.cloudwatch import metric_data_from_emf, nearest_rank
from tests.support.cli_testkit import (
    REGION,
    Clock,
    Invoke,
    aws_client,
    create_room_resources,
    room_settings,
    table_client,
    write_deployment,
    write_room,
)
from tests.support.html_page import Page, fetches_nothing
from tests.support.moto_percentiles import moto_percentiles as moto_percentiles

MINUTES = 14
ROOM = "sale"


@dataclass(frozen=True)
class Event:
    result: SimulationResult
    lines: list[str]

    def values(self, name: str) -> list[float]:
        """Every value of `name` the lines hold (a distribution's one by one)."""
        found: list[float] = []
        for line in self.lines:
            value = json.loads(line).get(name)
            if isinstance(value, list):
                found += value
            elif value is not None:
                found.append(value)
        return found


def simulated(room: RoomSettings, **crowd: Any) -> Event:
    lines: list[str] = []
    result = simulate(
        room,
        Crowd(**crowd),
        metrics=lambda clock: MinuteMetrics(ROOM, clock=clock, write=lines.append),
    )
    return Event(result, lines)


@pytest.fixture(scope="module")
def event() -> Event:
    """6,000 visitors over 6 minutes at 600 a minute: a line builds, then empties."""
    return simulated(
        simulated_room(rate=600, join_work=0),
        visitors=6000,
        arrival=Arrival.parse("uniform:6"),
        minutes=MINUTES,
        seed=5,
    )


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def deploy(config_dir: Path, **changes: Any) -> dict[str, str]:
    settings = room_settings(ROOM, **changes)
    write_room(config_dir, settings)
    outputs = create_room_resources(settings.region, settings.name)
    return outputs


def record(config_dir: Path, outputs: dict[str, str]) -> None:
    write_deployment(config_dir, ROOM, outputs)


def put_metrics(lines: list[str], region: str = REGION) -> None:
    """What CloudWatch Logs does with the functions' EMF lines."""
    cloudwatch = aws_client("cloudwatch", region)
    for line in lines:
        for namespace, data in metric_data_from_emf(line):
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=data)


def put_counts(namespace: str, name: str, dimensions: dict[str, str], per_minute: list[int],
               region: str = REGION) -> None:  # fmt: skip
    """An AWS service's own count per minute (API Gateway's, CloudFront's)."""
    aws_client("cloudwatch", region).put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": name,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                "Timestamp": EPOCH + 60 * minute,
                "Value": float(n),
                "Unit": "Count",
            }
            for minute, n in enumerate(per_minute)
            if n
        ],
    )


def decision(minute: int, kind: str, before: int, after: int) -> Decision:
    return Decision(
        at=EPOCH + minute * 60 + 31.5, decision=kind, reason=f"{kind} for the test",
        rate_before=before, rate_after=after, samples=60, errors=0, median_ms=120.0,
        p90_ms=180.0, mean_ms=130.0, slow_above_ms=150.0,
    )  # fmt: skip


DECISIONS = [decision(3, "halve", 600, 300), decision(4, "pass", 300, 300),
             decision(5, "raise", 300, 375)]  # fmt: skip


def governor_lines(decisions: list[Decision]) -> list[str]:
    """What the governor's runs write for these decisions (its own record_check)."""
    lines: list[str] = []
    for d in decisions:
        metrics = MinuteMetrics(ROOM, clock=lambda at=d.at: at, write=lines.append)
        record_check(metrics, d)
        metrics.flush()
    return lines


def report_json(invoke: Invoke, *args: str) -> tuple[dict[str, Any], Any]:
    result = invoke("report", ROOM, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result


def test_the_report_tells_what_the_simulator_measured(
    aws: None, moto_percentiles: None, config_dir: Path, clock: Clock, invoke: Invoke,
    tmp_path: Path, event: Event,
) -> None:  # fmt: skip
    outputs = deploy(config_dir, dynamic_rate_throttling=True)
    # A room deployed before rooms had an edge: its record names no distribution.
    outputs = {key: value for key, value in outputs.items() if key != "DistributionId"}
    record(config_dir, outputs)
    put_metrics(event.lines + governor_lines(DECISIONS))
    table_client().put_item(TableName=outputs["TableName"], Item=log_item(DECISIONS))
    requests = [900 * (m + 1) for m in range(MINUTES)]
    put_counts("AWS/ApiGateway", "Count", {"ApiName": f"beekeeper-{ROOM}"}, requests)
    clock.now = EPOCH + 3600
    out = tmp_path / "sale.html"
    data, result = report_json(
        invoke, "--since", iso(EPOCH), "--until", iso(EPOCH + MINUTES * 60), "--out", str(out)
    )
    measured = event.result
    assert data["window"] == "given" and data["since"] == EPOCH
    assert data["arrivals_per_minute"] == measured.arrivals_per_minute
    assert data["admitted_per_minute"] == measured.admitted_per_minute
    assert data["waiting_per_minute"] == measured.backlog_per_minute
    assert data["rate_per_minute"] == [600] * MINUTES
    waits = sorted(event.values("Wait"))
    assert len(waits) == data["waits"]["timed"] == 6000
    for key, fraction, simulator in (("p50", 0.5, measured.wait_seconds_p50),
                                     ("p90", 0.9, measured.wait_seconds_p90),
                                     ("p99", 0.99, measured.wait_seconds_p99)):  # fmt: skip
        assert data["waits"][key] == nearest_rank([(w, 1.0) for w in waits], fraction)
        assert simulator is not None and abs(data["waits"][key] - simulator) < 0.5
    assert data["waits"]["longest"] == waits[-1]
    width = data["waits"]["bin_seconds"]
    histogram = [0] * len(data["waits"]["counts"])
    for wait in waits:
        histogram[int(wait // width)] += 1
    assert data["waits"]["counts"] == histogram
    assert data["governor_per_minute"]["halved"][3] == 1
    assert data["governor_per_minute"]["raised"][5] == 1
    assert [d["decision"] for d in data["governor_decisions"]] == ["halve", "pass", "raise"]
    assert data["origin_requests_per_minute"] == requests
    assert data["edge"] is False and data["edge_requests_per_minute"] is None

    document = out.read_text(encoding="utf-8")
    assert fetches_nothing(document) == []
    page = Page(document)
    charts = page.all("svg")
    assert len(charts) >= 6 and all(svg["role"] == "img" for svg in charts)
    assert document.count("<summary>The numbers</summary><table>") == len(charts)
    nine = Timeline(datetime.fromtimestamp(EPOCH, UTC))
    assert (
        f"6,000 came between {nine.at(0)} and {nine.at(6)} UTC; 6,000 were let in, at 600 a "
        "minute." in document
    )
    assert "there is no edge (CloudFront) in front of this room" in document
    assert f"Wrote the report to {out.resolve()} (" in result.stderr


def test_without_times_the_report_finds_the_last_event(
    aws: None, moto_percentiles: None, config_dir: Path, clock: Clock, invoke: Invoke,
    event: Event,
) -> None:  # fmt: skip
    record(config_dir, deploy(config_dir))
    put_metrics(event.lines)
    clock.now = EPOCH + 5 * 3600  # five hours after the event
    data, _ = report_json(invoke)
    last_busy = max(
        m for m, (a, b) in enumerate(zip(event.result.admitted_per_minute,
                                         event.result.backlog_per_minute, strict=True))
        if a or b
    )  # fmt: skip
    assert data["window"] == "last event"
    assert (data["since"], data["until"]) == (EPOCH, EPOCH + (last_busy + 2) * 60)
    assert "last 15 days" in data["window_said"]
    assert sum(data["admitted_per_minute"]) == 6000


def test_a_capacity_room_reports_how_full_the_shop_was_and_who_left(
    aws: None, moto_percentiles: None, config_dir: Path, clock: Clock, invoke: Invoke,
    tmp_path: Path,
) -> None:  # fmt: skip
    room = simulated_room(rate=600, join_work=0, max_inside=150, session_minutes=2,
                          claim_minutes=1)  # fmt: skip
    visits = Visits(visit_minutes=1.5, abandon=0.1, leave=0.5, leave_line=0.05)
    shop = simulated(room, visitors=3000, arrival=Arrival.parse("uniform:5"),
                     minutes=MINUTES, seed=2, visits=visits)  # fmt: skip
    record(config_dir, deploy(config_dir, max_inside=150, session_minutes=2, claim_minutes=1))
    put_metrics(shop.lines)
    clock.now = EPOCH + 3600
    out = tmp_path / "shop.html"
    data, _ = report_json(
        invoke, "--since", iso(EPOCH), "--until", iso(EPOCH + MINUTES * 60), "--out", str(out)
    )
    capacity = data["capacity"]
    assert capacity is not None
    assert set(capacity["max_inside_per_minute"]) == {150}
    assert max(capacity["inside_per_minute"]) <= 150
    assert max(capacity["inside_per_minute"]) >= 140  # 3,000 came for 150 places
    for key, metric in (("left_line_per_minute", "LeftLine"), ("left_shop_per_minute",
                        "LeftShop"), ("no_shows_per_minute", "NoShows"),
                        ("sessions_ended_per_minute", "SessionsEnded")):  # fmt: skip
        assert sum(capacity[key]) == sum(shop.values(metric)), key
    figures = shop.result.capacity
    assert figures is not None
    assert 0 < sum(capacity["left_line_per_minute"]) <= figures.left_line
    assert sum(capacity["no_shows_per_minute"]) > 0 and sum(capacity["left_shop_per_minute"]) > 0
    document = out.read_text(encoding="utf-8")
    assert {"inside", "gone"} <= set(Page(document).ids())
    assert "let in never arrived" in document


def test_the_edge_is_read_where_the_room_has_one(
    aws: None, moto_percentiles: None, config_dir: Path, clock: Clock, invoke: Invoke,
    event: Event,
) -> None:  # fmt: skip
    outputs = deploy(config_dir)
    record(config_dir, {**outputs, "DistributionId": "E2EXAMPLE"})
    put_metrics(event.lines)
    edge = [5000 + m for m in range(MINUTES)]
    # CloudFront's metrics live in us-east-1, whatever the room's region.
    put_counts("AWS/CloudFront", "Requests", {"DistributionId": "E2EXAMPLE", "Region": "Global"},
               edge, region="us-east-1")  # fmt: skip
    clock.now = EPOCH + 3600
    data, _ = report_json(invoke, "--since", iso(EPOCH), "--until", iso(EPOCH + MINUTES * 60))
    assert data["edge"] is True and data["edge_requests_per_minute"] == edge
    assert not any("no edge" in note for note in data["notes"])


def test_a_room_without_metrics_gets_sentences_not_a_crash(
    aws: None, config_dir: Path, clock: Clock, invoke: Invoke, tmp_path: Path
) -> None:
    record(config_dir, deploy(config_dir))
    clock.now = EPOCH
    out = tmp_path / "empty.html"
    data, _ = report_json(invoke, "--since", "2h", "--out", str(out))
    assert data["window"] == "given" and data["until"] - data["since"] == 2 * 3600
    assert data["waits"] is None
    notes = " ".join(data["notes"])
    assert "no arrival and no admission in this window" in notes
    assert "No rate was recorded in this window" in notes
    assert "API Gateway counted no request" in notes
    document = out.read_text(encoding="utf-8")
    assert "Nobody came between" in document and fetches_nothing(document) == []


def test_the_last_24_hours_when_no_event_is_found(
    aws: None, config_dir: Path, clock: Clock, invoke: Invoke
) -> None:
    record(config_dir, deploy(config_dir))
    clock.now = EPOCH
    data, _ = report_json(invoke)
    assert data["window"] == "default"
    assert (data["since"], data["until"]) == (EPOCH - 24 * 3600, EPOCH)
    assert "last 24 hours" in data["window_said"]


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--since", "yesterday", "--json"], 1, "--since 'yesterday' is not a time: use an ISO"),
        (["--since", "1h", "--until", "2h", "--json"], 1, "--since must be before --until"),
        ([], 2, "Give --out FILE.html for the page, --json for the figures, or both."),
        (["--out", "/no/such/folder/r.html"], 1, "the folder /no/such/folder does not exist"),
    ],
)
def test_bad_options_say_what_to_do(
    aws: None, config_dir: Path, clock: Clock, invoke: Invoke, args: list[str], code: int,
    said: str,
) -> None:  # fmt: skip
    record(config_dir, deploy(config_dir))
    clock.now = EPOCH
    result = invoke("report", ROOM, *args)
    assert result.exit_code == code
    assert said in result.output
    assert "Traceback" not in result.output
