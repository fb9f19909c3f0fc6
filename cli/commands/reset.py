"""`beekeeper reset NAME [--yes] [--force]`: empty a room for its next event, no redeploy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from beekeeper.cli.answers import yes_or_no
from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument, where_option
from beekeeper.core.settings import capped
from beekeeper.core.words import count

if TYPE_CHECKING:  # the reset itself (boto3's types) is imported when it runs, not for --help
    from beekeeper.cli.room_reset import ResetDone, ResetLook


@click.command()
@room_argument
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (for scripts).")
@click.option(
    "--force",
    is_flag=True,
    help="Reset even while the room is on (visitors arriving meanwhile may lose their place).",
)
@where_option
@click.pass_context
def reset(ctx: click.Context, name: str, yes: bool, force: bool, local: bool | None) -> None:
    """Make room NAME ready for its next event without a redeploy: the line, the admissions
    (tickets issued before no longer redeem), the pre-queue and its draw, the counters and the
    governor's history are emptied; the settings, the ticket keys, the marketing URL and the
    dashboard stay. Asks first (default No) and refuses while the room is on unless --force.
    Make a report first: the metrics stay, the room's last decisions and counters do not."""
    from beekeeper.cli.room_reset import PURGE_SECONDS, RoomReset

    factory = factory_of(ctx)
    settings, deployment = factory.store().operated(name, local)
    room = RoomReset(
        dynamodb=factory.client("dynamodb", settings, deployment),
        sqs=factory.client("sqs", settings, deployment),
        table=deployment.table_name,
        queue_url=deployment.queue_url,
        dead_letter_queue_url=deployment.dead_letter_queue_url,
        settings=settings,
        minute_seconds=deployment.minute_seconds,
        clock=factory.clock,
        pauses=factory.pauses,
        # The local store finishes a purge at once; SQS takes up to a minute.
        purge_seconds=0 if deployment.is_local else PURGE_SECONDS,
    )
    look = room.look()
    where = "local" if deployment.is_local else settings.region
    click.echo(describe(name, where, look), err=True)
    if look.config.enabled and not force:
        raise UserError(
            f"Room {name} is on: visitors are still coming. Switch it off first "
            f"(`beekeeper off {name}`), or reset it anyway with --force."
        )
    if not yes:
        yes_or_no(f"Reset room {name} now?", default=False, abort=True, err=True)
    done = room.run(say=lambda line: click.echo(line, err=True))
    click.echo(finished(name, done))


def describe(name: str, where: str, look: ResetLook) -> str:
    """What the reset empties and keeps, with the figures of the room now."""
    state = "on" if look.config.enabled else "off"
    if look.config.closed:
        state += ", closed"
    elif look.config.held:
        state += ", held"
    admissions = f"{look.admitted:,} let in since the last reset; their tickets no longer redeem"
    if look.inside:
        admissions += (
            f", and the {look.inside:,} inside the shop {'is' if look.inside == 1 else 'are'} "
            "sent away at their next check"
        )
    lines = [
        f"Room {name} ({where}) is {state}. A reset empties it for the next event:",
        f"  - the line: {look.waiting:,} waiting {'loses' if look.waiting == 1 else 'lose'} "
        f"their place ({count(look.queued, 'message')} in the queue)",
        f"  - the admissions: {admissions}",
    ]
    if look.prequeue:
        lines.append(f"  - the pre-queue ({look.prequeue:,} drawn) and its draw")
    else:
        lines.append("  - the pre-queue and its draw, if any")
    lines.append("  - the counters, the minutes' bookkeeping and the governor's history")
    cap = f", at most {look.config.max_inside:,} inside" if capped(look.config.max_inside) else ""
    lines.append(
        f"It keeps the settings (rate {look.config.operator_rate:,} a minute{cap}), the ticket "
        "keys, the marketing URL and the dashboard; the metrics stay in CloudWatch (make a "
        f"report first: beekeeper report {name} --out {name}.html)."
    )
    if look.dead_letters:
        lines.append(
            f"The {count(look.dead_letters, 'message')} in the dead-letter queue "
            f"{'is' if look.dead_letters == 1 else 'are'} kept: look at them."
        )
    return "\n".join(lines)


def finished(name: str, done: ResetDone) -> str:
    from beekeeper.cli.room_reset import deleted_said

    deleted = sum(done.deleted.values())
    kinds = ", ".join(deleted_said(kind, n) for kind, n in sorted(done.deleted.items()))
    purge = "purged" if done.purged else "purged (a purge was already under way)"
    config = done.config
    switch = (
        f"Switch it on for the next event: beekeeper on {name}"
        if config is not None and not config.enabled
        else "It is on: new visitors join an empty line."
    )
    return (
        f"Room {name} is reset: the line {purge}, {count(deleted, 'item')} deleted"
        + (f" ({kinds})" if kinds else "")
        + f". {switch}"
    )
