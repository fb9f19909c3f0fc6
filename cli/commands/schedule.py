"""`beekeeper schedule`, `hold`, `resume` and `close`: a scheduled event's live controls.

Each writes the room's `config` item like `off` and `rate` do (cli/room_control.py): the
producers and consumers follow within 10 s, waiting pages on their next poll.
"""

from __future__ import annotations

import time

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.operate import room_control
from beekeeper.cli.options import room_argument, where_option
from beekeeper.core.schedule import (
    MAX_DAYS_AHEAD,
    TIME_EXAMPLE,
    ScheduleError,
    check_start,
    format_starts_at,
    parse_starts_at,
    validate_message,
)
from beekeeper.core.words import count


def starts_at_epoch(text: str, now: float) -> int:
    """A start time given by the operator, checked: one sentence when it can not be used."""
    try:
        epoch = parse_starts_at(text)
        if epoch:
            check_start(epoch, now)
    except ScheduleError as error:
        raise UserError(f"--starts-at: {error}.") from error
    if not epoch:
        raise UserError(f"--starts-at: give a time, e.g. {TIME_EXAMPLE} (or --clear).")
    return epoch


@click.command()
@room_argument
@click.option(
    "--starts-at",
    "starts_at",
    metavar="TIME",
    help=f"ISO 8601 with a time zone, e.g. {TIME_EXAMPLE}; ahead of now, at most "
    f"{MAX_DAYS_AHEAD} days.",
)
@click.option("--clear", is_flag=True, help="Remove the schedule (a pre-queue is drawn at once).")
@where_option
@click.pass_context
def schedule(
    ctx: click.Context, name: str, starts_at: str | None, clear: bool, local: bool | None
) -> None:
    """Start room NAME's event at TIME: visitors who come earlier join a pre-queue with a
    countdown and are drawn into a random order at the start, ahead of later arrivals.

    Takes effect within 10 s; waiting pages learn it within a minute. At most a year ahead:
    a visitor's place is kept in their cookie, which browsers keep 400 days at most.
    """
    if clear == (starts_at is not None):
        raise click.UsageError("give --starts-at TIME or --clear")
    factory = factory_of(ctx)
    control = room_control(factory, name, local)
    epoch = 0 if clear else starts_at_epoch(starts_at or "", factory.clock())
    drawn = control.draw()
    config = control.set_schedule(epoch)
    if drawn.drawn:
        click.echo(
            f"Room {name!r}'s pre-queue was drawn already: the new schedule changes nothing for "
            "the line (a room draws once)."
        )
    elif config.starts_at:
        click.echo(
            f"Room {name!r} starts at {format_starts_at(config.starts_at)}: visitors who come "
            "earlier join the pre-queue, drawn into a random order at the start."
        )
    else:
        click.echo(f"Room {name!r} has no schedule: a pre-queue, if any, is drawn within a minute.")


@click.command()
@room_argument
@where_option
@click.pass_context
def hold(ctx: click.Context, name: str, local: bool | None) -> None:
    """Admit nobody from room NAME's line, 10 s from now: the moment is announced to every
    waiting page first, so each stops at the place the room stops. Every place is kept and new
    visitors still join. `beekeeper resume NAME` carries on (and calls off a hold to come)."""
    config = room_control(factory_of(ctx), name, local).hold()
    moment = time.strftime("%H:%M:%S UTC", time.gmtime(config.held_from))
    click.echo(
        f"Room {name!r} is HELD from {moment}: nobody is admitted from then on; "
        f"`beekeeper resume {name}` carries on."
    )


@click.command()
@room_argument
@where_option
@click.pass_context
def resume(ctx: click.Context, name: str, local: bool | None) -> None:
    """Let room NAME's line move again at its rate, within 10 s (after `hold` or `close`)."""
    config = room_control(factory_of(ctx), name, local).resume()
    click.echo(f"Room {name!r} admits again at {count(config.rate, 'visitor')} per minute.")


@click.command()
@room_argument
@click.option(
    "--message", default="", help="One line the waiting visitors read (at most 200 characters)."
)
@where_option
@click.pass_context
def close(ctx: click.Context, name: str, message: str, local: bool | None) -> None:
    """End room NAME's event, within 10 s: nobody more is admitted, and new visitors and the
    line are told it is over (with --message), instead of being sent to the shop as `off`
    does. Visitors already admitted keep their admission. `beekeeper resume NAME` reopens."""
    try:
        text = validate_message(message)
    except ScheduleError as error:
        raise UserError(f"--message: {error}.") from error
    room_control(factory_of(ctx), name, local).close(text)
    click.echo(f"Room {name!r} is CLOSED: the line is told the event is over.")
