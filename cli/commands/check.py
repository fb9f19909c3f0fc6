"""`beekeeper check NAME [--json]`: test visitors through the room's public address, end to end."""

from __future__ import annotations

import json
import secrets
from typing import TYPE_CHECKING

import click

from beekeeper.cli.errors import EXIT_CHECK_FAILED, EXIT_USER_ERROR, UserError
from beekeeper.cli.factory import CliFactory, factory_of
from beekeeper.cli.options import room_argument, where_option
from beekeeper.core import names
from beekeeper.core.settings import Mode

if TYPE_CHECKING:  # the check's code (boto3's types) is imported when it runs, not --help
    from beekeeper.cli.check.run import CheckReport
    from beekeeper.cli.rooms import Deployment
    from beekeeper.core.settings import RoomSettings


@click.command()
@room_argument
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@where_option
@click.pass_context
def check(ctx: click.Context, name: str, as_json: bool, local: bool | None) -> None:
    """Send two test visitors through room NAME as browsers and the shop would, and report
    each step: the marketing link and its work, the cookie, the page, the shared state, their
    place, admission, the ticket verified offline, /client and a redeem (and a leave in
    capacity mode), and the push channel as a page subscribes to it. Test visitors count in
    no figure and are removed at the end; the check sends none while anyone waits. Exit 0
    only when every step passed."""
    factory = factory_of(ctx)
    settings, deployment = factory.store().operated(name, local)
    report = run_check(factory, settings, deployment)
    click.echo(json.dumps(report.to_json(), sort_keys=True) if as_json else report.text())
    exit_with(ctx, report)


def run_check(factory: CliFactory, settings: RoomSettings, deployment: Deployment) -> CheckReport:
    """One check of the room as deployed (or running locally)."""
    from beekeeper.cli.channel import realtime_source
    from beekeeper.cli.check.journey import RoomAddress
    from beekeeper.cli.check.operator_side import OperatorSide
    from beekeeper.cli.check.run import Check

    missing = [
        key
        for key, value in (
            (names.MARKETING_URL_OUTPUT, deployment.marketing_url),
            (names.PAGE_URL_OUTPUT, deployment.page_url),
            (names.CLIENT_CHECK_URL_OUTPUT, deployment.client_check_url),
        )
        if not value
    ]
    if missing:
        raise UserError(
            f"The deployment record of room {settings.name!r} lacks {', '.join(missing)}; run "
            f"`beekeeper deploy {settings.name}` to write it again."
        )
    address = RoomAddress(
        name=settings.name,
        marketing_url=str(deployment.marketing_url),
        page_url=str(deployment.page_url),
        client_check_url=str(deployment.client_check_url),
        shop_origin=settings.origin,
        display_name=settings.display_name,
        capacity=settings.mode is Mode.CAPACITY,
        logo_url=settings.logo_url,
        channel_source=realtime_source(deployment) or "",
    )
    operator = OperatorSide(
        settings=settings,
        deployment=deployment,
        dynamodb=factory.client("dynamodb", settings, deployment),
        sqs=factory.client("sqs", settings, deployment),
        clock=factory.clock,
        pauses=factory.pauses,
        token_bytes=secrets.token_bytes,
        publisher=factory.publisher(settings, deployment),
    )
    return Check(
        operator, address, clock=factory.clock, sleep=factory.sleep, token_bytes=secrets.token_bytes
    ).run()


def exit_with(ctx: click.Context, report: CheckReport) -> None:
    """0 when every step passed; 1 when the room's state kept the check from sending anyone;
    5 when a step failed."""
    if report.refused:
        ctx.exit(EXIT_USER_ERROR)
    if not report.passed:
        ctx.exit(EXIT_CHECK_FAILED)


def offer_check(
    ctx: click.Context,
    factory: CliFactory,
    settings: RoomSettings,
    deployment: Deployment,
    wanted: bool | None,
    *,
    ask: bool,
) -> None:
    """The end of `beekeeper deploy`: the check run (--check), skipped (--no-check), or offered
    (asked at a terminal unless `ask` is off, as with --yes; otherwise the command that runs it
    is named)."""
    if wanted is None and ask and factory.stdin_is_terminal():
        wanted = click.confirm(
            f"Check room {settings.name!r} now, with two test visitors?", default=True, err=True
        )
    if not wanted:
        if wanted is None:
            click.echo(
                "Before the marketing email goes out, prove the room works end to end: "
                f"`beekeeper check {settings.name}`.",
                err=True,
            )
        return
    report = run_check(factory, settings, deployment)
    click.echo(report.text())
    exit_with(ctx, report)
