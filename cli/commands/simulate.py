"""`beekeeper simulate`: how the room would admit a crowd, minute by minute, without AWS.

Runs the real trigger and consumer code against the simulator's in-memory queue and table
(beekeeper.simulator), so an operator can see how long people will wait at a given rate.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from beekeeper.cli.commands.simulate_capacity import (
    capacity_options,
    command_words,
    presence_setting,
    table_lines,
    visits,
)
from beekeeper.cli.errors import UserError
from beekeeper.cli.options import setting_option, settings_from_flags
from beekeeper.cli.pages import write_page
from beekeeper.core.settings import default_for
from beekeeper.core.words import count
from beekeeper.simulator.crowd import SIMULATED_ROOM, Arrival, Crowd
from beekeeper.simulator.faults import FAULT_NAMES, Faults

# The simulator itself (the room's code, the in-memory queue and table) is imported when a
# simulation runs: `beekeeper simulate --help` loads none of it (bench/cli_startup.py).
if TYPE_CHECKING:
    from beekeeper.simulator.result import SimulationResult

MAX_VISITORS = 2_000_000
MAX_MINUTES = 120


def _arrival(ctx: click.Context, param: click.Parameter, value: str) -> Arrival:
    try:
        return Arrival.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from error


def _faults(ctx: click.Context, param: click.Parameter, value: str) -> Faults:
    try:
        return Faults.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from error


def _start_time(ctx: click.Context, param: click.Parameter, value: str) -> datetime:
    try:
        return datetime.strptime(value, "%H:%M")
    except ValueError as error:
        raise click.BadParameter(
            f"{value!r} is not a time of day: use HH:MM, e.g. 09:00 or 18:30"
        ) from error


@click.command("simulate")
@setting_option("rate", required=True)
@click.option(
    "--visitors",
    metavar="N",
    type=click.IntRange(0, MAX_VISITORS),
    required=True,
    help="How many visitors arrive.",
)
@click.option(
    "--arrival",
    metavar="HOW",
    default="burst",
    show_default=True,
    callback=_arrival,
    help="'burst' (all at once, before the first minute), 'uniform:MINUTES' (evenly over "
    "that many minutes) or 'at:SECONDS' (all at once, that far into the first minute).",
)
@click.option(
    "--minutes",
    metavar="N",
    type=click.IntRange(1, MAX_MINUTES),
    default=5,
    show_default=True,
    help="Minutes to simulate.",
)
@click.option(
    "--faults",
    metavar="LIST",
    default="",
    callback=_faults,
    help="Comma-separated faults to inject: " + ", ".join(FAULT_NAMES) + ".",
)
@click.option("--seed", metavar="N", type=int, default=1, show_default=True, help="Random seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--report",
    "report_path",
    metavar="FILE.html",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write a self-contained HTML page of charts to this file (needs the charts extra).",
)
@click.option(
    "--start-time",
    metavar="HH:MM",
    default="09:00",
    show_default=True,
    callback=_start_time,
    help="Clock time the first simulated minute starts at, for the report's times (HH:MM).",
)
@capacity_options
@click.option(
    "--starts-at-minute",
    metavar="K",
    type=click.IntRange(0, MAX_MINUTES - 1),
    default=None,
    help="A scheduled event starting at minute K: visitors arriving before it join the "
    "pre-queue and are drawn into a random order at the start.",
)
@setting_option(
    "join_work",
    default=default_for("join_work"),
    note="Each visitor solves the room's challenge (harder under a flood, as in AWS) before "
    "joining the line; 0: no work modelled.",
)
def simulate_command(
    visitors: int,
    arrival: Arrival,
    minutes: int,
    faults: Faults,
    seed: int,
    as_json: bool,
    report_path: Path | None,
    start_time: datetime,
    starts_at_minute: int | None,
    **flags: Any,
) -> None:
    """Simulate admissions minute by minute, with optional faults, without touching AWS."""
    presence_setting(flags)
    settings = settings_from_flags(SIMULATED_ROOM, flags)
    crowd = Crowd(
        visitors=visitors,
        arrival=arrival,
        minutes=minutes,
        faults=faults,
        seed=seed,
        starts_at_minute=starts_at_minute,
        visits=visits(settings, flags),
    )
    from beekeeper.simulator.capacity import TemplatesUnavailable
    from beekeeper.simulator.run import simulate

    if report_path is not None:
        _check_report_possible(report_path)
    try:
        result = simulate(settings, crowd)
    except TemplatesUnavailable as error:
        raise UserError(str(error)) from error
    if report_path is not None:
        _write_report(result, report_path, start_time)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, default=str))
    else:
        click.echo(render_table(result))


def _check_report_possible(path: Path) -> None:
    """Before a simulation that may take a while: the charts extra and the folder exist."""
    from beekeeper.charts.svg import ChartsUnavailable, check_available

    try:
        check_available("The simulation report")
    except ChartsUnavailable as error:
        raise UserError(str(error)) from error
    if not path.parent.is_dir():
        raise UserError(
            f"--report {path}: the folder {path.parent} does not exist; create it first"
        )


def _write_report(result: SimulationResult, path: Path, start_time: datetime) -> None:
    from beekeeper.charts.simulation_report import simulation_report

    write_page(path, simulation_report(result, start=start_time, command=command_line(result)))


def command_line(result: SimulationResult) -> str:
    """The `beekeeper simulate` command that runs this simulation again."""
    words = [
        "beekeeper simulate",
        f"--rate {result.rate}",
        f"--visitors {result.visitors}",
        f"--arrival {result.arrival}",
        f"--minutes {result.minutes}",
    ]
    if result.faults:
        words.append(f"--faults {','.join(result.faults)}")
    words += command_words(result.capacity)
    if result.starts_at_minute is not None:
        words.append(f"--starts-at-minute {result.starts_at_minute}")
    if result.join_work_ms != default_for("join_work"):
        words.append(f"--join-work {result.join_work_ms}")
    words.append(f"--seed {result.seed}")
    return " ".join(words)


def place_lines(result: SimulationResult) -> list[str]:
    """What the sampled pages showed against the true place, in words a newcomer reads."""
    looked = result.positions_checked + result.positions_unshown
    lines = [
        f"places in line: a sample of the waiting pages was looked at {looked:,} times, as "
        "each fetched the shared state, and the place it showed compared with the true place "
        "(1 + the visitors still waiting who go in before them)"
    ]
    if result.positions_checked:
        off = [
            result.position_error_p50,
            result.position_error_p90,
            result.position_error_p99,
            result.position_error_max,
        ]
        said = ", ".join(
            f"{name} {value:,}"
            for name, value in zip(("median", "p90", "p99", "most"), off, strict=True)
        )
        in_time = ", ".join(f"{(value or 0) * 60 / result.rate:.1f} s" for value in off)
        lines.append(
            f"  off by (places): {said}; that is {in_time} of admissions at the rate; "
            f"{result.position_errors:,} of {result.positions_checked:,} not exactly right"
        )
    if result.positions_unshown:
        lines.append(
            f"  no number yet: {result.positions_unshown:,} times, on pages that had just "
            "joined a line every page did not know of yet (they say so until it does)"
        )
    return lines


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def busiest_second(result: SimulationResult) -> str:
    """The busiest second against the rate's mean second and the bound it is held to (1.25 x
    the mean plus one receive batch), both as multiples of the mean: one scale, one verdict."""
    from beekeeper.room.pacing import RECEIVE_BATCH
    from beekeeper.simulator.measure import SMOOTHNESS_FACTOR

    mean = result.rate / 60
    bound = SMOOTHNESS_FACTOR + RECEIVE_BATCH / mean
    verdict = "within" if result.smooth else "OVER"
    return (
        f"busiest second: {result.peak_second_ratio:.2f} x the rate's mean second, {verdict} the "
        f"bound of {bound:.2f} x ({SMOOTHNESS_FACTOR:g} x the mean + one batch of "
        f"{RECEIVE_BATCH}); peak consumers {result.peak_consumers}"
    )


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} x"


def request_lines(result: SimulationResult) -> list[str]:
    """What the pages sent: the origin's and the edge's requests, and the notice time."""
    if not result.origin_requests_per_minute:
        return []
    return [
        f"origin (API Gateway) requests: {result.origin_requests_per_second_mean:,.0f}/s on "
        f"average, {result.origin_requests_per_second_peak:,}/s at the busiest second; "
        f"{_ratio(result.origin_ratio_max)} the joins and admissions in the worst minute "
        f"({_ratio(result.origin_ratio)} over the run)",
        f"edge (CloudFront) requests: {result.edge_requests_per_second_peak:,}/s at the "
        f"busiest second; own /polling per admission: "
        f"{result.visitor_polls_per_admission or 0:.2f}; admission noticed by the page: "
        f"median {_seconds(result.noticed_seconds_p50)}, "
        f"p90 {_seconds(result.noticed_seconds_p90)}",
    ]


def render_table(result: SimulationResult) -> str:
    faults = ", ".join(result.faults) or "none"
    lines = [
        f"rate {result.rate:,}/min, {count(result.visitors, 'visitor')} ({result.arrival}), "
        f"faults: {faults}, seed {result.seed}",
        "",
        f"{'minute':>6}  {'queued':>10}  {'admitted':>10}  {'expected':>10}  {'consumers':>9}",
    ]
    for minute, admitted in enumerate(result.admitted_per_minute):
        lines.append(
            f"{minute + 1:>6}  {result.backlog_per_minute[minute]:>10,}  {admitted:>10,}  "
            f"{result.expected_per_minute[minute]:>10,}  {result.consumers_per_minute[minute]:>9}"
        )
    total = sum(result.admitted_per_minute)
    cap = result.rate + 10 * max(1, result.peak_consumers)
    lines += [
        "",
        f"admitted {total:,}; still waiting {result.still_waiting:,}; lost {result.lost}; "
        f"admitted twice {result.admitted_twice}"
        + (
            f"; every full minute as expected: {'yes' if result.exact else 'NO'}"
            if result.capacity is None
            else ""
        ),
        f"wait from joining to admission: median {_seconds(result.wait_seconds_p50)}, "
        f"p99 {_seconds(result.wait_seconds_p99)}, longest {_seconds(result.wait_seconds_max)}",
        f"most admitted in any 60 s: {result.max_admitted_in_any_60s:,} "
        f"({'within' if result.window_cap_held else 'OVER'} the rate + one batch per consumer"
        f", {cap:,} here); overtaken by 10 s or more: {result.late_overtakes}",
        busiest_second(result),
        f"AWS calls: {result.calls_per_new_visitor or 0:.2f} per new visitor, "
        f"{result.calls_per_admission or 0:.2f} per admission",
    ]
    if result.interleaved_deliveries:
        lines.append(
            f"two deliveries of one message at once: "
            f"{count(result.interleaved_deliveries, 'consumer')} held between a read and a "
            f"write; second admission writes refused: {result.admission_writes_refused:,}"
        )
    if result.capacity is not None:
        lines += table_lines(result.capacity)
    lines += request_lines(result)
    if result.join_work_ms:
        lines.append(
            f"work before joining ({result.join_work_ms:,} ms of a typical phone): median "
            f"{_seconds(result.join_work_seconds_p50)}, p95 "
            f"{_seconds(result.join_work_seconds_p95)}, longest "
            f"{_seconds(result.join_work_seconds_max)}; raised up to "
            f"{result.join_work_flood_factor_max or 1:g} x by a flood; still solving at the end: "
            f"{result.still_solving:,}"
        )
    if result.positions_checked or result.positions_unshown:
        lines += place_lines(result)
    if result.starts_at_minute is not None:
        tau = "-" if result.prequeue_order_tau is None else f"{result.prequeue_order_tau:+.3f}"
        lines.append(
            f"pre-queue: {count(result.prequeue_visitors, 'visitor')} drawn at minute "
            f"{result.starts_at_minute + 1}; Kendall's tau of arrival against admission order "
            f"{tau} (0: no relation); all admitted before later arrivals: "
            f"{'yes' if result.prequeue_before_later else 'no'} "
            f"({count(result.prequeue_exceptions, 'exception')})"
        )
    if result.capacity is not None:
        # Visitors go in as places free: the rate says nothing of the wait left.
        return "\n".join(lines)
    if result.still_waiting >= result.rate:
        lines.append(
            f"the last visitor in line waits about {result.still_waiting / result.rate:.0f} "
            "more minutes at this rate"
        )
    elif result.still_waiting:
        lines.append("the visitors still in line go in within the next minute")
    return "\n".join(lines)
