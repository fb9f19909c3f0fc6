"""`beekeeper simulate`: how the room would admit a crowd, minute by minute, without AWS.

Runs the real trigger and consumer code against the simulator's in-memory queue and table
(beekeeper.simulator), so an operator can see how long people will wait at a given rate.
"""

from __future__ import annotations

import json

import click

from beekeeper.core.settings import MAX_RATE, MIN_RATE
from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, SimulationResult, simulate

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


@click.command("simulate")
@click.option(
    "--rate",
    type=click.IntRange(MIN_RATE, MAX_RATE),
    required=True,
    help="Visitors admitted per minute.",
)
@click.option(
    "--visitors",
    type=click.IntRange(0, MAX_VISITORS),
    required=True,
    help="How many visitors arrive.",
)
@click.option(
    "--arrival",
    default="burst",
    show_default=True,
    callback=_arrival,
    help="'burst' (all at once, before the first minute) or 'uniform:MINUTES'.",
)
@click.option(
    "--minutes",
    type=click.IntRange(1, MAX_MINUTES),
    default=5,
    show_default=True,
    help="Minutes to simulate.",
)
@click.option(
    "--faults",
    default="",
    callback=_faults,
    help="Comma-separated faults to inject: " + ", ".join(FAULT_NAMES) + ".",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def simulate_command(
    rate: int,
    visitors: int,
    arrival: Arrival,
    minutes: int,
    faults: Faults,
    seed: int,
    as_json: bool,
) -> None:
    """Simulate admissions minute by minute, with optional faults, without touching AWS."""
    result = simulate(
        rate=rate, visitors=visitors, arrival=arrival, minutes=minutes, faults=faults, seed=seed
    )
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, default=str))
    else:
        click.echo(render_table(result))


def render_table(result: SimulationResult) -> str:
    faults = ", ".join(result.faults) or "none"
    lines = [
        f"rate {result.rate:,}/min, {result.visitors:,} visitors ({result.arrival}), "
        f"faults: {faults}, seed {result.seed}",
        "",
        f"{'minute':>6}  {'waiting':>10}  {'admitted':>10}  {'planned':>10}  {'consumers':>9}",
    ]
    for minute, admitted in enumerate(result.admitted_per_minute):
        lines.append(
            f"{minute + 1:>6}  {result.backlog_per_minute[minute]:>10,}  {admitted:>10,}  "
            f"{result.expected_per_minute[minute]:>10,}  {result.consumers_per_minute[minute]:>9}"
        )
    total = sum(result.admitted_per_minute)
    lines += [
        "",
        f"admitted {total:,}; still waiting {result.still_waiting:,}; lost {result.lost}; "
        f"admitted twice {result.admitted_twice}",
        f"busiest second: {result.peak_second_ratio:.2f} x the mean"
        f" ({'within' if result.smooth else 'OVER'} 1.25 x mean + one batch); "
        f"peak consumers {result.peak_consumers}; "
        f"AWS calls per admitted visitor {result.aws_calls_per_admitted or 0:.2f}",
    ]
    if result.still_waiting and result.rate:
        lines.append(
            f"the last visitor in line waits about {result.still_waiting / result.rate:.0f} "
            "more minutes at this rate"
        )
    return "\n".join(lines)
