"""The command line's room settings: flags and arguments made from the settings model.

Every flag that sets a room setting is made here from its description in core/settings.py
(`SETTINGS`): its names (a boolean's `--no-` form and any older name, such as `--drt`, included),
its help sentence, its metavar and its check. So `--rate 0` gets the same sentence from
`init`, `local`, `simulate` and `rate`, and a new setting needs no flag code of its own.
`settings_from_flags` is the one place a command's flags become a room's settings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from beekeeper.cli.errors import UserError
from beekeeper.core.settings import SETTINGS, RoomSettings, SettingsError

F = TypeVar("F", bound=Callable[..., Any])


def check_setting(field_name: str, value: Any) -> Any:
    """The value as the model stores it, or SettingsError with the model's sentence."""
    return SETTINGS[field_name].parse(value)


def given_settings(flags: Mapping[str, Any]) -> dict[str, Any]:
    """The room settings among a command's keyword arguments that click received (a flag left
    out is None); the command's other arguments are left out."""
    return {name: value for name, value in flags.items() if name in SETTINGS and value is not None}


def settings_from_flags(
    base: RoomSettings | Mapping[str, Any], flags: Mapping[str, Any]
) -> RoomSettings:
    """The room a command works with: `base` (a room file's settings, or the values a room
    described by flags alone starts from) with every setting flag click received laid over it.

    `flags` is the command's keyword arguments as click passed them; a setting left out (None)
    keeps the base's value, or the setting's default. A combination the model refuses (a
    certificate without a domain, a missing origin) is the model's one sentence."""
    given = given_settings(flags)
    try:
        if isinstance(base, RoomSettings):
            return base.replace(**given) if given else base
        return RoomSettings.from_mapping({**base, **given})
    except SettingsError as error:
        raise UserError(str(error)) from error


class SettingType(click.ParamType):
    """A command-line value for one room setting; a bad one is a usage error (exit 2)."""

    def __init__(self, field_name: str) -> None:
        self.field_name = field_name
        self.name = field_name.replace("_", "-")

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return check_setting(self.field_name, value)
        except SettingsError as error:
            self.fail(str(error), param, ctx)


def setting_option(
    field_name: str,
    *,
    default: Any = None,
    required: bool = False,
    note: str = "",
) -> Callable[[F], F]:
    """The flag of room setting `field_name`, with the setting's help (and `note`, what this
    command does with it); the command receives it under the setting's name.

    `default` is what the command gets when the flag is left out (None: not given, and --help
    shows no default: say in `note` what happens then)."""
    description = SETTINGS[field_name]
    settings: dict[str, Any] = {"help": f"{description.help} {note}".strip()}
    if default is not None:  # click 8.3 takes an explicit None as a default, and then
        settings.update(default=default, show_default=True)  # never asks for a required flag
    if description.kind is bool:
        # Left out, a boolean flag is None (not given), not click's False.
        declarations = [f"{flag}/--no-{flag.removeprefix('--')}" for flag in description.flags]
        return click.option(*declarations, field_name, **{"default": default, **settings})
    return click.option(
        *description.flags,
        field_name,
        type=SettingType(field_name),
        metavar=description.rule.metavar,
        required=required,
        **settings,
    )


def options_in_order(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """One decorator applying `decorators`, so --help lists them in the order given."""

    def apply(command: F) -> F:
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return apply


def setting_argument(field_name: str, metavar: str = "N") -> Callable[[F], F]:
    """A positional argument that sets room setting `field_name` (`beekeeper rate NAME N`)."""
    return click.argument(field_name, type=SettingType(field_name), metavar=metavar)


_NEGATIVE_NUMBER = re.compile(r"-\d[\d,_.]*")


class SettingCommand(click.Command):
    """A command with a setting's number as an argument: a negative number ("-5") is that
    argument's value, refused with the setting's own sentence, where click would read it as an
    option it does not know ("No such option '-5'")."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any(_NEGATIVE_NUMBER.fullmatch(arg) for arg in args):
            ctx.ignore_unknown_options = True
        return super().parse_args(ctx, args)


# A room named on the command line: the `name` setting's rule.
ROOM_NAME = SettingType("name")
room_argument = click.argument("name", type=ROOM_NAME, metavar="NAME")
# Which room an operator command works on when NAME is both deployed and running locally.
where_option = click.option(
    "--local/--aws",
    "local",
    default=None,
    help="The room running on this machine (`beekeeper local`) or the one deployed in AWS; "
    "needed only when both exist.",
)


def operator_command(
    *arguments: Callable[[F], F], cls: type[click.Command] = click.Command
) -> Callable[[Callable[..., Any]], click.Command]:
    """An operator command on one room: `beekeeper COMMAND NAME [ARGUMENTS] [--local/--aws]`.

    The function receives the context, `name`, the `arguments`' values and `local`."""

    def make(function: Callable[..., Any]) -> click.Command:
        for decorator in (click.pass_context, where_option, *reversed(arguments), room_argument):
            function = decorator(function)
        return click.command(cls=cls)(function)

    return make


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that also refuses nan and infinity.

    Every comparison with nan is false, so FloatRange lets `nan` through, and a scheduler
    whose minute lasts nan seconds never waits.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return number
