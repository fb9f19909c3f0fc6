"""`beekeeper status NAME [--watch] [--json]`: how the room is doing, now."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from beekeeper.cli.factory import CliFactory, factory_of
from beekeeper.cli.options import room_argument, where_option

if TYPE_CHECKING:  # the reading (boto3's types) is imported when the command runs, not --help
    from beekeeper.cli.room_status import StatusReport
    from beekeeper.cli.rooms import Deployment
    from beekeeper.core.settings import RoomSettings


@click.command()
@room_argument
@click.option("--watch", is_flag=True, help="Refresh until Ctrl-C.")
@click.option(
    "--interval",
    metavar="SECONDS",
    type=click.IntRange(1, 3600),
    default=5,
    show_default=True,
    help="Seconds between refreshes with --watch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object per refresh).")
@where_option
@click.pass_context
def status(
    ctx: click.Context, name: str, watch: bool, interval: int, as_json: bool, local: bool | None
) -> None:
    """Show room NAME: on/off, rates, governor, queue, the last minute and the last hour."""
    from beekeeper.cli.room_status import render_text

    factory = factory_of(ctx)
    stdout = sys.stdout
    unicode = (stdout.encoding or "").lower().replace("-", "") == "utf8"
    clear = watch and not as_json and stdout.isatty()

    def show(report: StatusReport) -> None:
        if as_json:
            click.echo(json.dumps(report.to_json(), sort_keys=True))
        else:
            if clear:
                click.clear()
            click.echo(render_text(report, unicode=unicode))

    settings, deployment = factory.store().operated(name, local)
    if not deployment.is_local:
        _say_room_file_changes(factory, name, err=as_json)
    take = _reader(factory, settings, deployment)
    show(take())
    from beekeeper.cli.channel import key_warning

    settings, deployment = factory.store().operated(name, local)
    warning = key_warning(settings, deployment, factory.clock())
    if warning:
        click.echo(f"Warning: {warning}", err=True)
    if not watch:
        return
    try:
        while True:
            factory.sleep(interval)
            if not as_json and not clear:
                click.echo("")
            show(take())
    except KeyboardInterrupt:
        return  # Ctrl-C is how a watch ends


def _say_room_file_changes(factory: CliFactory, name: str, *, err: bool) -> None:
    """What the room file changes against the deployed room, which is what runs (and what
    the operator commands act on) until the next deploy; on stderr beside JSON."""
    changed = factory.store().room_file_changes(name)
    if changed:
        click.echo(
            f"Room file changed since deploy: {', '.join(changed)}; run beekeeper deploy {name} "
            "to apply it.",
            err=err,
        )


def _reader(
    factory: CliFactory, settings: RoomSettings, deployment: Deployment
) -> Callable[[], StatusReport]:
    from beekeeper.cli.room_status import read_status

    dynamodb = factory.client("dynamodb", settings, deployment)
    sqs = factory.client("sqs", settings, deployment)

    def take() -> StatusReport:
        return read_status(
            settings=settings,
            deployment=deployment,
            dynamodb=dynamodb,
            sqs=sqs,
            clock=factory.clock,
            pauses=factory.pauses,
        )

    return take
