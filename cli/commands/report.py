"""`beekeeper report NAME [--since TIME] [--until TIME] --out FILE.html [--json]`: how an event
went, from the room's own metrics."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument, where_option
from beekeeper.cli.pages import write_page
from beekeeper.cli.report_window import TIME_HELP

WHAT = "The event report"


@click.command()
@room_argument
@click.option("--since", metavar="TIME", help=f"Start of the report: {TIME_HELP}.")
@click.option(
    "--until", metavar="TIME", help="End of the report (default: now, or the event's end)."
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.html",
    help="Write the report as one self-contained HTML page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report's figures as JSON.")
@where_option
@click.pass_context
def report(
    ctx: click.Context,
    name: str,
    since: str | None,
    until: str | None,
    out: Path | None,
    as_json: bool,
    local: bool | None,
) -> None:
    """Report how room NAME's event went: arrivals and admissions per minute against the rate,
    the line, the waits (median, p90, p99), who left or never came, the governor's decisions
    and the requests. Without --since and --until: the room's last event, found in its
    metrics of the last 15 days (an hour without arrivals, admissions or a line ends one),
    or the last 24 hours. Times are UTC."""
    if out is None and not as_json:
        raise click.UsageError(
            "Give --out FILE.html for the page, --json for the figures, or both."
        )
    if out is not None:
        _check_writable(out)
    factory = factory_of(ctx)
    settings, deployment = factory.store().operated(name, local)
    cloudwatch = factory.client("cloudwatch", settings, deployment)
    if deployment.is_local and cloudwatch.meta.service_model.resolved_protocol != "json":
        raise UserError(
            "Reading a local room's metrics needs a boto3 that speaks CloudWatch's JSON "
            "protocol: pip install -U boto3, then run again."
        )
    from beekeeper.cli.event_report import read_event

    event = read_event(
        settings=settings,
        deployment=deployment,
        cloudwatch=cloudwatch,
        dynamodb=factory.client("dynamodb", settings, deployment),
        clock=factory.clock,
        pauses=factory.pauses,
        since=since,
        until=until,
        # CloudFront's metrics are kept in us-east-1, whatever the room's region.
        edge_cloudwatch=lambda: factory.aws().client(
            "cloudwatch", settings.replace(region="us-east-1")
        ),
    )
    if out is not None:
        from beekeeper.charts.event_report import event_report

        page = event_report(event, command=command_line(name, event.since, event.until, out))
        write_page(out, page)
    if as_json:
        click.echo(json.dumps(event.to_json(), sort_keys=True))


def _check_writable(path: Path) -> None:
    """Before reading anything: the charts extra is installed and the folder exists."""
    from beekeeper.charts.svg import ChartsUnavailable, check_available

    try:
        check_available(WHAT)
    except ChartsUnavailable as error:
        raise UserError(str(error)) from error
    if not path.parent.is_dir():
        raise UserError(f"--out {path}: the folder {path.parent} does not exist; create it first")


def command_line(name: str, since: float, until: float, out: Path) -> str:
    """The `beekeeper report` command that reports on the same window again."""

    def iso(epoch: float) -> str:
        moment = datetime.fromtimestamp(epoch, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ" if moment.second else "%Y-%m-%dT%H:%MZ")

    return f"beekeeper report {name} --since {iso(since)} --until {iso(until)} --out {out.name}"
