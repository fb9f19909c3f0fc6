"""`beekeeper simulate` in capacity mode: its flags, and the lines it adds to the table.

`--max-inside N` (N > 0) simulates a room with a cap on the visitors inside the shop and a
crowd that waits, walks away, shops and leaves (simulator/capacity.py); without it, or with 0,
the simulation is rate mode's, unchanged. `--presence` runs the room with presence and puts the
presence script on every shop page: visitors who do not leave with /leave close the tab.
The cap, sessions and presence grace are the room's settings (cli/options.py lays them over the
simulated room); how the visitors wait and shop is the crowd's (`Visits`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from beekeeper.cli.options import options_in_order, setting_option
from beekeeper.core.presence import RECOMMENDED_GRACE_SECONDS
from beekeeper.core.settings import MIN_MINUTES, Mode, RoomSettings, default_for
from beekeeper.simulator.crowd import DEFAULT_VISIT_MINUTES, Visits

if TYPE_CHECKING:  # the simulator is imported when a simulation runs, not for --help
    from beekeeper.simulator.capacity import CapacityFigures

DEFAULT_LEAVE = 0.5
MAX_VISIT_MINUTES = 24 * 60.0
FRACTION = click.FloatRange(0.0, 1.0)

capacity_options: Callable[[Callable[..., Any]], Callable[..., Any]] = options_in_order(
    setting_option(
        "max_inside",
        default=0,
        note="Here 0 simulates rate mode, and the capacity flags below do nothing.",
    ),
    setting_option("session_minutes", default=default_for("session_minutes")),
    setting_option("claim_minutes", default=default_for("claim_minutes")),
    click.option(
        "--visit-minutes",
        metavar="MINUTES",
        type=click.FloatRange(MIN_MINUTES, MAX_VISIT_MINUTES),
        default=DEFAULT_VISIT_MINUTES,
        show_default=True,
        help="Capacity mode: how long visitors stay in the shop (exponential, this mean); they "
        "are checked with /client every 30 s meanwhile.",
    ),
    click.option(
        "--abandon",
        metavar="FRACTION",
        type=FRACTION,
        default=0.0,
        show_default=True,
        help="Capacity mode: fraction of waiting visitors who walk away without a word before "
        "their turn.",
    ),
    click.option(
        "--leave",
        metavar="FRACTION",
        type=FRACTION,
        default=DEFAULT_LEAVE,
        show_default=True,
        help="Capacity mode: fraction of visitors inside who end their visit with /leave; the "
        "others go idle and their session runs out.",
    ),
    click.option(
        "--leave-line",
        metavar="FRACTION",
        type=FRACTION,
        default=0.0,
        show_default=True,
        help="Capacity mode: fraction of waiting visitors who press 'Leave the line' "
        "(POST /leave) during their wait.",
    ),
    click.option(
        "--presence",
        is_flag=True,
        help="Capacity mode: the room runs with presence and every shop page loads the presence "
        "script (heartbeats); visitors who do not leave with /leave close the tab.",
    ),
    setting_option(
        "presence_grace_seconds",
        default=RECOMMENDED_GRACE_SECONDS,
        note="With --presence only.",
    ),
)
"""The capacity flags of `beekeeper simulate`: the room's cap, sessions and presence grace
(settings), how its visitors shop (`visits`), and `--presence`."""

# The flags that describe capacity mode's crowd and room, besides --max-inside.
_CAPACITY_FLAGS = (
    "session_minutes",
    "claim_minutes",
    "visit_minutes",
    "abandon",
    "leave",
    "leave_line",
    "presence",
    "presence_grace_seconds",
)


def presence_setting(flags: dict[str, Any]) -> None:
    """`--presence` gives the room its presence grace (`--presence-grace-seconds`, or the
    recommended one); without it the room has no presence."""
    if not flags["presence"]:
        flags["presence_grace_seconds"] = None  # the room's default: no presence


def visits(settings: RoomSettings, flags: dict[str, Any]) -> Visits:
    """How capacity mode's visitors wait and shop. A capacity flag given for a rate-mode room
    (it would do nothing), or a presence grace without --presence, is a mistake."""
    if settings.mode is not Mode.CAPACITY and not _given("max_inside"):
        given = [name for name in _CAPACITY_FLAGS if _given(name)]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise click.UsageError(
                f"{flag} simulates capacity mode: add --max-inside N (the cap on visitors "
                "inside the shop)"
            )
    if (
        settings.mode is Mode.CAPACITY
        and not flags["presence"]
        and _given("presence_grace_seconds")
    ):
        raise click.UsageError("--presence-grace-seconds is the presence script's: add --presence")
    return Visits(
        visit_minutes=flags["visit_minutes"],
        abandon=flags["abandon"],
        leave=flags["leave"],
        leave_line=flags["leave_line"],
    )


def _given(name: str) -> bool:
    source = click.get_current_context().get_parameter_source(name)
    return source is ParameterSource.COMMANDLINE


def command_words(capacity: CapacityFigures | None) -> list[str]:
    """The flags that simulate `capacity` again (for the report's command line)."""
    if capacity is None:
        return []
    return [
        f"--max-inside {capacity.max_inside}",
        f"--session-minutes {capacity.session_minutes:g}",
        f"--claim-minutes {capacity.claim_minutes:g}",
        f"--visit-minutes {capacity.visit_minutes:g}",
        f"--abandon {capacity.abandon:g}",
        f"--leave {capacity.leave:g}",
        f"--leave-line {capacity.leave_line:g}",
        *(
            [f"--presence --presence-grace-seconds {capacity.presence.presence_grace_seconds}"]
            if capacity.presence is not None
            else []
        ),
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def table_lines(capacity: CapacityFigures) -> list[str]:
    """What the table says about the places inside the shop."""
    ratio = (
        "the shop never filled"
        if capacity.mean_inside_ratio is None
        else f"{capacity.mean_inside_ratio:.0%} of the places, on average, since the shop "
        "first filled"
    )
    within = "within" if capacity.peak_inside <= capacity.max_inside else "OVER"
    return [
        f"inside the shop: at most {capacity.max_inside:,} at once; the most holding a place "
        f"{capacity.peak_inside:,} ({within} the cap); visitors actually at the shop: {ratio}",
        f"places freed with visitors waiting: {capacity.refills:,}, taken again after "
        f"{_seconds(capacity.refill_seconds_p50)} median, {_seconds(capacity.refill_seconds_p99)}"
        " p99",
        f"arrived {capacity.arrived:,}; left with /leave {capacity.left_shop:,}; sessions run "
        f"out {capacity.sessions_expired:,}; no-shows {capacity.no_shows:,}; left the line "
        f"{capacity.left_line:,} (admitted afterwards: {capacity.left_then_admitted}); turned "
        f"away by the shop's check {capacity.turned_away}",
        *([] if capacity.presence is None else [_presence_line(capacity)]),
    ]


def _presence_line(capacity: CapacityFigures) -> str:
    presence = capacity.presence
    assert presence is not None
    return (
        f"presence: {presence.heartbeats:,} heartbeats (every "
        f"{presence.presence_beat_seconds} s); {presence.tabs_closed:,} tabs closed, their "
        f"places taken again {_seconds(presence.tab_refill_seconds_p50)} median, "
        f"{_seconds(presence.tab_refill_seconds_p99)} p99 after the close (grace "
        f"{presence.presence_grace_seconds} s)"
    )
