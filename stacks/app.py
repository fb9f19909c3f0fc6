"""The CDK app: one stack per room, chosen by context.

    cdk synth                          the documented sample room (SAMPLE_ROOM)
    cdk synth -c room=spring-sale      the CLI's room file for 'spring-sale'
    cdk synth -c room_file=PATH        a room file anywhere
    cdk synth -c api_logging=false     no API Gateway logs (the account has no logging role)
    cdk synth -c channel_key_expires=N the pages' channel key expires at N (epoch s; default: a
                                       year from now, as `beekeeper deploy` passes it)

`beekeeper deploy` runs the CDK CLI with `--app "<python> -m beekeeper.stacks.app"`, so this
module works from an installed wheel as well as from the repository's app.py.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from beekeeper.core import config_dir
from beekeeper.core.settings import (
    RoomSettings,
    SettingsError,
    validate_certificate_arn,
    validate_room_name,
)

# What `cdk synth` builds with no context: a room anyone can read the template of.
SAMPLE_ROOM = RoomSettings(
    name="sample",
    display_name="Sample spring sale",
    region="us-east-1",
    origin="https://shop.example.com",
    rate=600,
)

ROOM_CONTEXT = "room"
ROOM_FILE_CONTEXT = "room_file"
API_LOGGING_CONTEXT = "api_logging"
# The domain's certificate, when the room file names none: `beekeeper deploy` finds an issued
# one in us-east-1 (cli/certificates.py) and passes its ARN.
CERTIFICATE_CONTEXT = "certificate_arn"
# When the waiting pages' key to the push channel expires (core/push.py key_expiry): `beekeeper
# deploy` sets it a year ahead on every deploy.
CHANNEL_KEY_EXPIRES_CONTEXT = "channel_key_expires"


class RoomChoiceError(Exception):
    """The room asked for by context can not be used; the message says what to do."""


def _read_room_file(path: Path) -> RoomSettings:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise RoomChoiceError(
            f"no room file at {path}; create it with `beekeeper init` or pass -c room_file=PATH"
        ) from error
    except OSError as error:
        raise RoomChoiceError(f"can not read the room file {path}: {error.strerror}") from error
    try:
        return RoomSettings.from_toml(text)
    except SettingsError as error:
        raise RoomChoiceError(f"{path}: {error}") from error


def room_from_context(
    context: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> RoomSettings:
    """The room the context asks for: room_file, else room (the CLI's file), else the sample."""
    room_file = context.get(ROOM_FILE_CONTEXT)
    room_name = context.get(ROOM_CONTEXT)
    if room_file:
        settings = _read_room_file(Path(str(room_file)).expanduser())
    elif room_name:
        try:
            # Validated before it becomes part of a path: -c room=../x names no room file.
            name = validate_room_name(room_name)
        except SettingsError as error:
            raise RoomChoiceError(f"-c {ROOM_CONTEXT}: {error}") from error
        settings = _read_room_file(config_dir.room_file(name, environ))
    else:
        return SAMPLE_ROOM
    if room_name and settings.name != room_name:
        raise RoomChoiceError(
            f"the room file says name = {settings.name!r} but -c room={room_name}; make them match"
        )
    return settings


def api_logging_from_context(context: Mapping[str, Any]) -> bool:
    """On unless turned off: API Gateway logging needs the account's CloudWatch role."""
    value = context.get(API_LOGGING_CONTEXT, True)
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "on", "1"}:
        return True
    if text in {"false", "no", "off", "0"}:
        return False
    raise RoomChoiceError(f"-c {API_LOGGING_CONTEXT}={value}: use true or false")


def certificate_from_context(settings: RoomSettings, context: Mapping[str, Any]) -> str | None:
    """The domain's certificate: the room file's, else the one `beekeeper deploy` found."""
    if not settings.domain or settings.certificate_arn:
        return None
    given = context.get(CERTIFICATE_CONTEXT)
    if not given:
        raise RoomChoiceError(
            f"the room has the domain {settings.domain} but no certificate_arn: deploy it with "
            f"`beekeeper deploy {settings.name}`, which finds an issued certificate for the "
            f"domain in us-east-1, or pass -c {CERTIFICATE_CONTEXT}=ARN"
        )
    try:
        return validate_certificate_arn(str(given))
    except SettingsError as error:
        raise RoomChoiceError(f"-c {CERTIFICATE_CONTEXT}: {error}") from error


def channel_key_expires_from_context(context: Mapping[str, Any]) -> int | None:
    """The key's expiry the context gives (None: a year from now)."""
    value = context.get(CHANNEL_KEY_EXPIRES_CONTEXT)
    if value is None:
        return None
    try:
        return int(str(value))
    except ValueError:
        raise RoomChoiceError(
            f"-c {CHANNEL_KEY_EXPIRES_CONTEXT}={value}: give a time in epoch seconds"
        ) from None


def main() -> None:
    # Imported here: choosing a room (above) needs no CDK, so the CLI and tests use it cheaply.
    import aws_cdk as cdk

    app = cdk.App()
    context = {
        key: app.node.try_get_context(key)
        for key in (
            ROOM_CONTEXT,
            ROOM_FILE_CONTEXT,
            API_LOGGING_CONTEXT,
            CERTIFICATE_CONTEXT,
            CHANNEL_KEY_EXPIRES_CONTEXT,
        )
    }
    context = {key: value for key, value in context.items() if value is not None}
    try:
        settings = room_from_context(context)
        api_logging = api_logging_from_context(context)
        certificate = certificate_from_context(settings, context)
        key_expires = channel_key_expires_from_context(context)
    except RoomChoiceError as error:
        print(f"Error: {error}", file=sys.stderr)
        sys.exit(1)

    from beekeeper.stacks.lambda_wheels import MissingWheels
    from beekeeper.stacks.room_stack import build_room

    try:
        build_room(
            app,
            settings,
            api_logging=api_logging,
            certificate_arn=certificate,
            channel_key_expires=key_expires,
        )
    except MissingWheels as error:  # a fresh clone before its first deploy: say what to run
        print(f"Error: {error}", file=sys.stderr)
        sys.exit(1)
    app.synth()


if __name__ == "__main__":
    main()
