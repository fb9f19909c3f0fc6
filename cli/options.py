"""Click parameter types that check values with the room settings model's own sentences."""

from __future__ import annotations

import math
from typing import Any

import click

from beekeeper.core.settings import RoomSettings, SettingsError, validate_room_name

# Valid values for the required settings, so one field can be checked on its own through the
# model (with its coercion of typed text and its error sentences).
_PROBE = {
    "name": "probe",
    "display_name": "Probe",
    "region": "us-east-1",
    "origin": "https://example.com",
    "rate": 1,
}
# What a setting that depends on another needs beside it to be checked on its own.
_PROBE_FOR = {"certificate_arn": {"domain": "probe.example"}}


def check_setting(field_name: str, value: Any) -> Any:
    """The value as the model stores it, or SettingsError with the model's sentence."""
    probe = {**_PROBE, **_PROBE_FOR.get(field_name, {}), field_name: value}
    settings = RoomSettings.from_mapping(probe, coerce_strings=True)
    return getattr(settings, field_name)


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


class RoomNameType(click.ParamType):
    name = "room"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return validate_room_name(value)
        except SettingsError as error:
            self.fail(str(error), param, ctx)


ROOM_NAME = RoomNameType()
room_argument = click.argument("name", type=ROOM_NAME, metavar="NAME")
# Which room an operator command works on when NAME is both deployed and running locally.
where_option = click.option(
    "--local/--aws",
    "local",
    default=None,
    help="The room running on this machine (`beekeeper local`) or the one deployed in AWS; "
    "needed only when both exist.",
)


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
