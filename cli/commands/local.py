"""`beekeeper local`: the whole waiting room on this machine, no AWS account needed."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.options import FiniteFloatRange, SettingType
from beekeeper.core.settings import (
    DEFAULT_CLAIM_MINUTES,
    DEFAULT_SESSION_MINUTES,
    MAX_RATE,
    MIN_RATE,
    SettingsError,
    validate_room_name,
)


def _room_name(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        return validate_room_name(value)
    except SettingsError as error:
        raise click.BadParameter(str(error)) from error


@click.command("local")
@click.option(
    "--origin", help="The shop's URL to let visitors through to (https, or http://localhost)."
)
@click.option(
    "--rate",
    required=True,
    type=click.IntRange(MIN_RATE, MAX_RATE),
    help="Visitors let through per minute.",
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
    default="local",
    show_default=True,
    callback=_room_name,
    help="Room name the operator commands (off, on, rate, status) use.",
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
    "--dynamic-rate-throttling",
    is_flag=True,
    help="Run the governor: slow the rate when the origin slows down.",
)
@click.option(
    "--slow-ms",
    type=SettingType("slow_ms"),
    default=0,
    help="With --dynamic-rate-throttling: a check whose 90th percentile takes longer than "
    "this many ms is slow (0: judge against the shop's own baseline only).",
)
@click.option(
    "--max-inside",
    type=SettingType("max_inside"),
    default=0,
    help="Capacity mode: at most this many visitors inside the shop at once (0: no cap).",
)
@click.option(
    "--session-minutes",
    type=SettingType("session_minutes"),
    default=DEFAULT_SESSION_MINUTES,
    show_default=True,
    help="Capacity mode: a session ends after this many real minutes without a /client check "
    "(fractions such as 0.25 are fine; --minute-seconds does not shorten it).",
)
@click.option(
    "--claim-minutes",
    type=SettingType("claim_minutes"),
    default=DEFAULT_CLAIM_MINUTES,
    show_default=True,
    help="Capacity mode: an admitted visitor who has not arrived within this many real "
    "minutes is a no-show and their place frees.",
)
@click.option(
    "--no-fast-paths",
    "no_fast_paths",
    is_flag=True,
    hidden=True,
    help="Talk to the emulator over HTTP only (to measure the workarounds; see docs/local.md).",
)
def local(
    origin: str | None,
    rate: int,
    port: int,
    minute_seconds: float,
    name: str,
    demo: bool,
    demo_port: int,
    operator_port: int,
    dynamic_rate_throttling: bool,
    slow_ms: int,
    max_inside: int,
    session_minutes: float,
    claim_minutes: float,
    no_fast_paths: bool,
) -> None:
    """Run a waiting room on this machine, with the same code as in AWS.

    An AWS API emulator holds the room's queue and table; the room's routes are served on
    127.0.0.1; the trigger and consumers run on their schedule. Ctrl-C stops it all.
    """
    # Imported here: the emulator and the WSGI server are the `local` extra's dependencies.
    try:
        from beekeeper.local.http_server import PortInUseError
        from beekeeper.local.record import RecordError
        from beekeeper.local.room import LocalOptions, LocalRoom
    except ImportError as error:
        raise UserError(
            f"local mode needs its extra dependencies ({error.name} is missing); "
            "install them with: pip install 'beekeeper-waiting-room[local]'"
        ) from error

    if origin is None and not demo:
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
        name=name,
        dynamic_rate_throttling=dynamic_rate_throttling,
        slow_ms=slow_ms,
        max_inside=max_inside,
        session_minutes=session_minutes,
        claim_minutes=claim_minutes,
        fast_paths=not no_fast_paths,
    )
    room = LocalRoom(options)
    stop_requested = threading.Event()

    def request_stop(_signum: int, _frame: FrameType | None) -> None:
        stop_requested.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            room.start()
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
        assert room.urls is not None and room.settings is not None
        click.echo(
            f"Room {room.settings.name!r} is running at {room.settings.rate} visitors/minute"
        )
        click.echo(f"  marketing URL:    {room.urls.marketing_url}")
        click.echo(f"  page URL:         {room.urls.page_url}")
        click.echo(f"  client check URL: {room.urls.client_check_url}")
        click.echo(f"  origin:           {room.settings.origin}")
        if room.shop_url:
            click.echo(f"  demo shop:        {room.shop_url}")
        click.echo(f"  AWS emulator:     {room.endpoint_url}")
        click.echo(f"  operator view:    {room.operator_url}")
        click.echo(
            f"Operator commands work on it: beekeeper off|on|rate|status {room.settings.name}"
        )
        click.echo("Press Ctrl-C to stop.", nl=True)
        while not stop_requested.wait(0.5):
            pass
        click.echo("Stopping the local room...")
    finally:
        room.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo("Stopped.")


def _quiet_library_logs() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S", force=True
    )
    for name in ("werkzeug", "botocore", "boto3", "urllib3", "moto"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("waitress").setLevel(logging.ERROR)
