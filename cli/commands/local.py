"""`beekeeper local`: the whole waiting room on this machine, no AWS account needed."""

from __future__ import annotations

import logging
import math
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import (
    ROOM_NAME,
    F,
    FiniteFloatRange,
    given_settings,
    setting_option,
    settings_from_flags,
)
from beekeeper.core.local_room import (
    DEFAULT_DEMO_PORT,
    DEFAULT_OPERATOR_PORT,
    DEFAULT_PORT,
    FLAGS_ONLY_NAME,
    FLAGS_ONLY_RATE,
    FLAGS_ONLY_ROOM,
    LOCAL_REGION,
)
from beekeeper.core.schedule import MAX_SECONDS_AHEAD, format_starts_at
from beekeeper.core.settings import RoomSettings, SettingsError, default_for
from beekeeper.core.words import count

if TYPE_CHECKING:
    from beekeeper.room.governor_sampling import Fetcher

# How long `beekeeper local` waits for the room's origin to answer before it warns.
ORIGIN_CHECK_SECONDS = 3.0


def _port_option(flag: str, default: int, serves: str) -> Callable[[F], F]:
    return click.option(
        flag,
        metavar="PORT",
        default=default,
        show_default=True,
        type=click.IntRange(0, 65535),
        help=f"Port of {serves} (0: any free port).",
    )


@click.command("local")
@click.argument("room", required=False, type=ROOM_NAME, metavar="[NAME]")
@setting_option(
    "origin",
    note="Default: the room file's; without NAME, the demo shop (--demo is implied).",
)
@setting_option(
    "rate",
    note="Default: the room file's (or what `beekeeper rate` set in an earlier run); without "
    f"NAME, {FLAGS_ONLY_RATE} (the demo's).",
)
@_port_option("--port", DEFAULT_PORT, "the room's routes on 127.0.0.1")
@click.option(
    "--minute-seconds",
    metavar="SECONDS",
    default=60.0,
    show_default=True,
    type=FiniteFloatRange(0.5, 60.0),
    help="Length of the scheduler's minute, shortened for rehearsals and tests.",
)
@setting_option(
    "name",
    note="Without NAME: the name the operator commands (off, on, rate, status) use; "
    f"default: {FLAGS_ONLY_NAME}.",
)
@click.option(
    "--demo", is_flag=True, help="Also run a demo shop; it is the origin without --origin."
)
@_port_option("--demo-port", DEFAULT_DEMO_PORT, "the demo shop")
@_port_option(
    "--operator-port",
    DEFAULT_OPERATOR_PORT,
    "the live operator view on 127.0.0.1, for your eyes only",
)
@setting_option("dynamic_rate_throttling", note="Default: the room file's, else off.")
@setting_option("slow_ms", note="Default: the room file's, else 0.")
@setting_option("max_inside", note="Default: the room file's, else 0.")
@setting_option(
    "session_minutes",
    note="In real minutes: --minute-seconds does not shorten it. Default: the room file's, "
    f"else {default_for('session_minutes'):g}.",
)
@setting_option(
    "claim_minutes",
    note=f"In real minutes. Default: the room file's, else {default_for('claim_minutes'):g}.",
)
@setting_option(
    "presence_grace_seconds",
    note="In real seconds; the demo shop loads the presence script. Default: the room file's, "
    "else 0.",
)
@setting_option(
    "presence_idle_minutes",
    note="In real minutes. Default: the room file's, else "
    f"{default_for('presence_idle_minutes'):g}.",
)
@setting_option(
    "join_work",
    note=f"Default: the room file's, else {default_for('join_work'):,}, as in AWS.",
)
@click.option(
    "--starts-in",
    metavar="SECONDS",
    type=FiniteFloatRange(0, MAX_SECONDS_AHEAD),
    default=None,
    help="A scheduled event starting this many seconds from now: visitors who come earlier "
    "join the pre-queue and are drawn at the start (overrides the room file's starts_at).",
)
@click.option(
    "--new-line",
    is_flag=True,
    help="Start with an empty line, forgetting the one an earlier run of this room saved.",
)
@click.pass_context
def local(
    ctx: click.Context,
    room: str | None,
    port: int,
    minute_seconds: float,
    demo: bool,
    demo_port: int,
    operator_port: int,
    starts_in: float | None,
    new_line: bool,
    **flags: Any,
) -> None:
    """Rehearse room NAME on this machine, with the same code as in AWS.

    With NAME the room file's settings are used (every one of them); --origin, --rate and the
    other flags override them for this run, and the room file is never changed. Without NAME
    the flags alone describe the room, and what they leave out is the demo's (see --origin
    and --rate). The room's table and queues live in this process (and its line survives a
    restart); its routes are served on 127.0.0.1; the trigger and consumers run on their
    schedule. Ctrl-C stops it all.
    """
    # Imported here: the WSGI server and the Velocity engine are the `local` extra's.
    try:
        from beekeeper.local.http_server import PortInUseError
        from beekeeper.local.record import RecordError
        from beekeeper.local.room import LocalOptions, LocalRoom
    except ImportError as error:
        raise UserError(
            f"local mode needs its extra dependencies ({error.name} is missing); "
            "install them with: pip install 'beekeeper-waiting-room[local]'"
        ) from error

    name = flags["name"]
    if room is not None and name is not None and name != room:
        raise click.UsageError(f"give the room's name once: NAME ({room}) or --name ({name})")
    factory = factory_of(ctx)
    if starts_in is not None:
        flags["starts_at"] = format_starts_at(math.ceil(factory.clock() + starts_in))
    room_file = factory.store().load(room) if room is not None else None
    # Without a room file the flags alone describe the room; without --origin visitors go to
    # the demo shop (and without --rate at the demo's rate).
    origin_is_demo = flags["origin"] is None and (demo or room_file is None)
    demo = demo or origin_is_demo
    fixed_ports = [p for p in (port, demo_port if demo else 0, operator_port) if p != 0]
    if len(fixed_ports) != len(set(fixed_ports)):
        raise click.UsageError("--port, --demo-port and --operator-port must differ")
    settings = local_settings(room_file, flags)

    _quiet_library_logs()
    options = LocalOptions(
        port=port,
        demo=demo,
        demo_port=demo_port,
        origin_is_demo=origin_is_demo,
        operator_port=operator_port,
        minute_seconds=minute_seconds,
        new_line=new_line,
        given=frozenset(given_settings(flags)),
    )
    running = LocalRoom(settings, options)
    stop_requested = threading.Event()

    def request_stop(_signum: int, _frame: FrameType | None) -> None:
        stop_requested.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            running.start()
        except PortInUseError as error:
            raise UserError(str(error)) from error
        except RecordError as error:
            raise UserError(str(error)) from error
        except SettingsError as error:
            raise UserError(str(error)) from error
        except ImportError as error:  # the room code's own dependencies, loaded at start
            raise UserError(
                f"local mode needs {error.name or 'a module'} that is not installed; "
                "install the local extra: pip install 'beekeeper-waiting-room[local]'"
            ) from error
        assert running.urls is not None and running.settings is not None
        click.echo(
            f"Room {running.settings.name!r} is running at "
            f"{count(running.settings.rate, 'visitor')} a minute"
        )
        click.echo(f"  marketing URL:    {running.urls.marketing_url}")
        click.echo(f"  page URL:         {running.urls.page_url}")
        click.echo(f"  client check URL: {running.urls.client_check_url}")
        click.echo(f"  JWKS URL:         {running.urls.jwks_url}")
        click.echo(f"  origin:           {running.settings.origin}")
        if running.settings.starts_at:
            click.echo(f"  starts at:        {running.settings.starts_at} (pre-queue until then)")
        if running.shop_url:
            click.echo(f"  demo shop:        {running.shop_url}")
            # The JSON join's first step, as a native app takes it (docs/apps.md).
            click.echo(
                "  an app joins:     curl -s -H 'Accept: application/json' "
                f"{running.urls.marketing_url}   (the rest: docs/apps.md)"
            )
        click.echo(f"  operator view:    {running.operator_url}")
        deployed = factory.store().deployment(running.settings.name) is not None
        program = factory.operator_command()
        click.echo(
            f"Operate it from another terminal: {program} status {running.settings.name}"
            f"{' --local' if deployed else ''} (and off, on, rate, ...: {program} --help)"
        )
        if running.settings.origin != running.shop_url:
            warn_if_nothing_answers(running.settings.origin, factory.fetch)
        click.echo("Press Ctrl-C to stop.", nl=True)
        while not stop_requested.wait(0.5):
            pass
        click.echo("Stopping the local room...")
    finally:
        running.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo("Stopped.")


def local_settings(room_file: RoomSettings | None, flags: dict[str, Any]) -> RoomSettings:
    """The local room's settings: the room file's (every setting), or the demo's for a room
    described by flags alone (core/local_room.py), with the flags given laid over them; the
    region is the emulator's either way."""
    base = room_file if room_file is not None else FLAGS_ONLY_ROOM
    return settings_from_flags(base, {**flags, "region": LOCAL_REGION})


def warn_if_nothing_answers(origin: str, fetch: Fetcher) -> None:
    """Say so when nothing answers at the room's origin: admitted visitors would be sent to a
    page that does not load. Any HTTP answer counts (a 404 is the shop's own business)."""
    failure = fetch(origin, ORIGIN_CHECK_SECONDS).failure
    if failure and not failure.startswith("HTTP"):
        click.echo(
            f"Warning: nothing answers at the room's origin {origin} ({failure}): admitted "
            "visitors are sent there. Start your shop, or give --origin URL (or --demo for the "
            "demo shop).",
            err=True,
        )


def _quiet_library_logs() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", force=True
    )
    for name in ("botocore", "boto3", "urllib3"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("waitress").setLevel(logging.ERROR)
