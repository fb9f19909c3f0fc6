"""`beekeeper local`: the whole waiting room on this machine, no AWS account needed."""

from __future__ import annotations

import logging
import math
import signal
import threading
from types import FrameType

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import ROOM_NAME, FiniteFloatRange, SettingType
from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS
from beekeeper.core.schedule import MAX_SECONDS_AHEAD, format_starts_at
from beekeeper.core.settings import (
    DEFAULT_CLAIM_MINUTES,
    DEFAULT_SESSION_MINUTES,
    MAX_RATE,
    MIN_RATE,
    SettingsError,
    validate_room_name,
)


def _room_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return validate_room_name(value)
    except SettingsError as error:
        raise click.BadParameter(str(error)) from error


@click.command("local")
@click.argument("room", required=False, type=ROOM_NAME, metavar="[NAME]")
@click.option(
    "--origin", help="The shop's URL to let visitors through to (https, or http://localhost)."
)
@click.option(
    "--rate",
    type=click.IntRange(MIN_RATE, MAX_RATE),
    help="Visitors let through per minute (required without NAME; with NAME it overrides "
    "the room file's).",
)
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of the room's routes on 127.0.0.1 (0: any free port).",
)
@click.option(
    "--minute-seconds",
    default=60.0,
    show_default=True,
    type=FiniteFloatRange(0.5, 60.0),
    help="Length of the scheduler's minute, shortened for rehearsals and tests.",
)
@click.option(
    "--name",
    callback=_room_name,
    help="Room name the operator commands (off, on, rate, status) use, without NAME "
    "[default: local].",
)
@click.option(
    "--demo", is_flag=True, help="Also run a demo shop; it is the origin without --origin."
)
@click.option(
    "--demo-port",
    default=8081,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of the demo shop (0: any free port).",
)
@click.option(
    "--operator-port",
    default=8082,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port of the live operator view on 127.0.0.1, for your eyes only (0: any free port).",
)
@click.option(
    "--dynamic-rate-throttling/--no-dynamic-rate-throttling",
    default=None,
    help="Run the governor: slow the rate when the origin slows down (default: the room "
    "file's setting, else off).",
)
@click.option(
    "--slow-ms",
    type=SettingType("slow_ms"),
    default=None,
    help="With --dynamic-rate-throttling: a check whose 90th percentile takes longer than "
    "this many ms is slow (0: judge against the shop's own baseline only).",
)
@click.option(
    "--max-inside",
    type=SettingType("max_inside"),
    default=None,
    help="Capacity mode: at most this many visitors inside the shop at once (0: no cap; "
    "default: the room file's setting, else 0).",
)
@click.option(
    "--session-minutes",
    type=SettingType("session_minutes"),
    default=None,
    help="Capacity mode: a session ends after this many real minutes without a /client check "
    "(fractions such as 0.25 are fine; --minute-seconds does not shorten it; default: the "
    f"room file's setting, else {DEFAULT_SESSION_MINUTES:g}).",
)
@click.option(
    "--claim-minutes",
    type=SettingType("claim_minutes"),
    default=None,
    help="Capacity mode: an admitted visitor who has not arrived within this many real "
    "minutes is a no-show and their place frees (default: the room file's setting, else "
    f"{DEFAULT_CLAIM_MINUTES:g}).",
)
@click.option(
    "--join-work",
    type=SettingType("join_work"),
    metavar="MS",
    default=None,
    help="The work a new place in line costs, in milliseconds of a typical phone's time (0: "
    f"none; default: the room file's setting, else {DEFAULT_JOIN_WORK_MS:g}, as in AWS).",
)
@click.option(
    "--starts-in",
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
    origin: str | None,
    rate: int | None,
    port: int,
    minute_seconds: float,
    name: str | None,
    demo: bool,
    demo_port: int,
    operator_port: int,
    dynamic_rate_throttling: bool | None,
    slow_ms: int | None,
    max_inside: int | None,
    session_minutes: float | None,
    claim_minutes: float | None,
    join_work: int | None,
    starts_in: float | None,
    new_line: bool,
) -> None:
    """Rehearse room NAME on this machine, with the same code as in AWS.

    With NAME the room file's settings are used (every one of them); --origin, --rate and the
    other flags override them for this run, and the room file is never changed. Without NAME
    the flags alone describe the room. The room's table and queues live in this process (and
    its line survives a restart); its routes are served on 127.0.0.1; the trigger and
    consumers run on their schedule. Ctrl-C stops it all.
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

    if room is not None and name is not None and name != room:
        raise click.UsageError(f"give the room's name once: NAME ({room}) or --name ({name})")
    room_settings = factory_of(ctx).store().load(room) if room is not None else None
    if room is None and rate is None:
        raise click.UsageError(
            "give --rate N (visitors per minute), or rehearse a room file: beekeeper local NAME"
        )
    if origin is None and not demo and room is None:
        raise click.UsageError("give --origin URL, or --demo to let visitors into a demo shop")
    fixed_ports = [p for p in (port, demo_port if demo else 0, operator_port) if p != 0]
    if len(fixed_ports) != len(set(fixed_ports)):
        raise click.UsageError("--port, --demo-port and --operator-port must differ")

    _quiet_library_logs()
    options = LocalOptions(
        rate=rate,
        origin=origin,
        port=port,
        demo=demo,
        demo_port=demo_port,
        operator_port=operator_port,
        minute_seconds=minute_seconds,
        name=room or name or "local",
        dynamic_rate_throttling=dynamic_rate_throttling,
        slow_ms=slow_ms,
        max_inside=max_inside,
        session_minutes=session_minutes,
        claim_minutes=claim_minutes,
        join_work=join_work,
        room=room_settings,
        new_line=new_line,
        starts_at=(
            None
            if starts_in is None
            else format_starts_at(math.ceil(factory_of(ctx).clock() + starts_in))
        ),
    )
    running = LocalRoom(options)
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
            f"Room {running.settings.name!r} is running at {running.settings.rate} visitors/minute"
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
        deployed = factory_of(ctx).store().deployment(running.settings.name) is not None
        click.echo(
            "Operator commands work on it: beekeeper off|on|rate|status "
            f"{running.settings.name}{' --local' if deployed else ''}"
        )
        click.echo("Press Ctrl-C to stop.", nl=True)
        while not stop_requested.wait(0.5):
            pass
        click.echo("Stopping the local room...")
    finally:
        running.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo("Stopped.")


def _quiet_library_logs() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", force=True
    )
    for name in ("botocore", "boto3", "urllib3"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("waitress").setLevel(logging.ERROR)
