"""The operator's rooms on disk: settings files and what each deploy recorded.

A room is `rooms/<name>.toml` under the config directory (core/config_dir.py); a deployed room
also has `rooms/<name>.deployed.json`: the stack's outputs (docs/data-model.md "Stack outputs")
under "outputs" and the room's settings as deployed under "settings". Commands that operate a
room read the record, so they never guess a table or queue name, and act on the room as it was
deployed even when its file has been edited since (`beekeeper status` says so). A record
written before the settings were recorded (a flat object of outputs) still works: the room
file stands in for the deployed settings, and the command says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload
from urllib.parse import urlsplit

from beekeeper.cli.errors import UserError
from beekeeper.core import names
from beekeeper.core.config_dir import (
    config_dir,
    deployment_file,
    local_record_file,
    local_state_file,
    room_file,
    write_atomically,
)
from beekeeper.core.local_room import (
    FLAGS_ONLY_NAME,
    LOCAL_OUTPUTS_KEY,
    LOCAL_PID_KEY,
    LOCAL_SETTINGS_KEY,
    process_alive,
)
from beekeeper.core.loopback import is_loopback_host
from beekeeper.core.settings import RoomSettings, SettingsError, changes

# The deployment record's keys: the stack's outputs and the room's settings as deployed.
OUTPUTS_KEY = "outputs"
SETTINGS_KEY = "settings"

# A local room's endpoint path: empty, or one secret segment (local/operator_endpoint.py).
_LOCAL_ENDPOINT_PATH = re.compile(r"(/[A-Za-z0-9_-]{0,64})?/?")
# Outputs every operating command needs; a record without them is unusable.
REQUIRED_OUTPUTS = (names.TABLE_NAME_OUTPUT, names.QUEUE_URL_OUTPUT)


def is_local_endpoint(value: object) -> bool:
    """An http URL of a loopback host with a port and nothing else: what `beekeeper local`
    records. Anything else would point the operator's AWS clients somewhere unexpected."""
    if not isinstance(value, str) or any(ch.isspace() for ch in value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme == "http"
        and port is not None
        and _LOCAL_ENDPOINT_PATH.fullmatch(parts.path) is not None
        and not (parts.query or parts.fragment or parts.username or parts.password)
        and is_loopback_host(parts.hostname or "")
    )


class _Output:
    """A stack output of the record, read as an attribute: None when the record has none."""

    def __init__(self, key: str) -> None:
        self.key = key

    @overload
    def __get__(self, deployment: None, owner: type) -> _Output: ...

    @overload
    def __get__(self, deployment: Deployment, owner: type) -> str | None: ...

    def __get__(self, deployment: Deployment | None, owner: type) -> _Output | str | None:
        if deployment is None:
            return self
        return deployment.outputs.get(self.key) or None


@dataclass(frozen=True)
class Deployment:
    """A deployed room's recorded stack outputs, and the settings it was deployed with (None
    in a record written before they were recorded)."""

    outputs: Mapping[str, str]
    settings: RoomSettings | None = field(default=None, compare=False)

    @property
    def table_name(self) -> str:
        return self.outputs[names.TABLE_NAME_OUTPUT]

    @property
    def queue_url(self) -> str:
        return self.outputs[names.QUEUE_URL_OUTPUT]

    dead_letter_queue_url = _Output(names.DEAD_LETTER_QUEUE_URL_OUTPUT)
    # The AWS API emulator's address for a local room; None for a room in AWS.
    endpoint_url = _Output(names.ENDPOINT_URL_OUTPUT)
    # The room's public address (its edge), as visitors and shops reach it.
    public_url = _Output(names.PUBLIC_URL_OUTPUT)
    # The distribution's own domain name (where a custom domain's DNS record points).
    edge_domain = _Output(names.EDGE_DOMAIN_OUTPUT)
    marketing_url = _Output(names.MARKETING_URL_OUTPUT)
    client_check_url = _Output(names.CLIENT_CHECK_URL_OUTPUT)
    page_url = _Output(names.PAGE_URL_OUTPUT)
    jwks_url = _Output(names.JWKS_URL_OUTPUT)
    # The secret with the room's private ticket keys; None for a room deployed before tickets.
    ticket_keys_secret = _Output(names.TICKET_KEYS_SECRET_OUTPUT)
    # The push channel's HTTP host (None: a room deployed before it had one), the Event API's
    # ARN and when the page's API key expires (AWS only).
    channel_http_domain = _Output(names.CHANNEL_HTTP_DOMAIN_OUTPUT)
    channel_realtime_domain = _Output(names.CHANNEL_REALTIME_DOMAIN_OUTPUT)
    channel_api_arn = _Output(names.CHANNEL_API_ARN_OUTPUT)
    channel_key_expires = _Output(names.CHANNEL_KEY_EXPIRES_OUTPUT)

    @property
    def is_local(self) -> bool:
        return self.endpoint_url is not None

    @property
    def minute_seconds(self) -> float:
        """The room's minute: 60 s, or a local room's shortened one (`--minute-seconds`)."""
        try:
            seconds = float(self.outputs.get(names.MINUTE_SECONDS_OUTPUT, "60"))
        except ValueError:
            return 60.0
        return seconds if 0 < seconds <= 60 else 60.0

    @property
    def distribution_id(self) -> str | None:
        """The CloudFront distribution in front of the room (an edge), if it has one."""
        return self.outputs.get(names.DISTRIBUTION_ID_OUTPUT) or None


@dataclass(frozen=True)
class LocalRoom:
    """A local room's record: its settings as it runs them, its outputs and its process."""

    settings: RoomSettings
    deployment: Deployment
    pid: int

    @property
    def running(self) -> bool:
        return process_alive(self.pid)


class RoomStore:
    """Reads and writes room files and deployment records under one config directory.

    `say` tells the operator something they should know (once per room): that a record
    predates its settings."""

    def __init__(
        self, environ: Mapping[str, str], say: Callable[[str], None] = lambda _text: None
    ) -> None:
        self._environ = environ
        self._say = say
        self._told: set[str] = set()

    @property
    def directory(self) -> Path:
        return config_dir(self._environ)

    def room_path(self, name: str) -> Path:
        return room_file(name, self._environ)

    def deployment_path(self, name: str) -> Path:
        return deployment_file(name, self._environ)

    def names(self) -> list[str]:
        rooms = self.directory / "rooms"
        if not rooms.is_dir():
            return []
        return sorted(p.name.removesuffix(".toml") for p in rooms.glob("*.toml"))

    def local_names(self) -> list[str]:
        """The rooms `beekeeper local` has recorded as running (a killed room's record stays
        until its next start: `LocalRoom.running` says which are)."""
        rooms = self.directory / "rooms"
        if not rooms.is_dir():
            return []
        return sorted(p.name.removesuffix(".local.json") for p in rooms.glob("*.local.json"))

    def exists(self, name: str) -> bool:
        return self.room_path(name).exists()

    def load(self, name: str) -> RoomSettings:
        path = self.room_path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            files = self.names()
            running = [n for n in self.local_names() if n not in files and self._runs_here(n)]
            if name in running:
                raise UserError(
                    f"Room {name!r} has no room file: it runs on this machine from "
                    f"`beekeeper local`'s flags alone; `beekeeper init --name {name}` makes "
                    "one for it."
                ) from None
            known = ", ".join(sorted([*files, *(f"{n} (running locally)" for n in running)]))
            raise UserError(
                f"There is no room named {name!r} (rooms: {known or 'none yet'}); "
                f"create it with `beekeeper init --name {name}`."
            ) from None
        try:
            settings = RoomSettings.from_toml(text)
        except SettingsError as error:
            raise UserError(f"Room file {path}: {error} Fix the file and run again.") from error
        if settings.name != name:
            raise UserError(
                f"Room file {path} says name = {settings.name!r}; "
                f"set it to {name!r} or rename the file."
            )
        return settings

    def _runs_here(self, name: str) -> bool:
        """Whether local room `name` is running now (an unreadable record: not)."""
        try:
            room = self.local_room(name)
        except UserError:
            return False
        return room is not None and room.running

    def save(self, settings: RoomSettings) -> Path:
        path = self.room_path(settings.name)
        write_atomically(path, settings.to_toml())
        return path

    def deployment(self, name: str) -> Deployment | None:
        path = self.deployment_path(name)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (ValueError, OSError, RecursionError) as error:
            reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            raise UserError(
                f"The deployment record {path} is unreadable ({reason}); "
                f"run `beekeeper deploy {name}` to write it again."
            ) from error
        # A record written before the settings were: a flat object of outputs.
        outputs = data.get(OUTPUTS_KEY, data) if isinstance(data, dict) else None
        if not isinstance(outputs, dict) or any(
            not isinstance(outputs.get(key), str) for key in REQUIRED_OUTPUTS
        ):
            raise UserError(
                f"The deployment record {path} lacks {' and '.join(REQUIRED_OUTPUTS)}; "
                f"run `beekeeper deploy {name}` to write it again."
            )
        endpoint = outputs.get(names.ENDPOINT_URL_OUTPUT)
        if endpoint is not None and not is_local_endpoint(endpoint):
            raise UserError(
                f"The deployment record {path} names {names.ENDPOINT_URL_OUTPUT} {endpoint!r}, "
                "which is not a local room's endpoint (http://127.0.0.1:PORT/...); start the "
                f"room again with `beekeeper local {name}`, or delete {path}."
            )
        return Deployment(
            {k: v for k, v in outputs.items() if isinstance(v, str)},
            self._recorded_settings(name, path, data),
        )

    def _recorded_settings(
        self, name: str, path: Path, data: dict[str, object]
    ) -> RoomSettings | None:
        recorded = data.get(SETTINGS_KEY)
        if recorded is None:
            return None
        try:
            if not isinstance(recorded, dict):
                raise SettingsError(
                    SETTINGS_KEY, recorded, "the record keeps the settings as an object"
                )
            settings = RoomSettings.from_mapping(recorded)
        except SettingsError as error:
            raise UserError(
                f"The deployment record {path} holds settings that are not a room's ({error}); "
                f"run `beekeeper deploy {name}` to write it again."
            ) from error
        if settings.name != name:
            raise UserError(
                f"The deployment record {path} is room {settings.name!r}'s, not {name!r}'s; "
                f"run `beekeeper deploy {name}` to write it again."
            )
        return settings

    def deployed_settings(self, name: str, deployment: Deployment | None = None) -> RoomSettings:
        """The settings room `name` was deployed with: its record's, or for a room never
        deployed or a record written before settings were recorded, its room file's (said
        once)."""
        deployment = deployment if deployment is not None else self.deployment(name)
        if deployment is not None and deployment.settings is not None:
            return deployment.settings
        if deployment is not None and name not in self._told:
            self._told.add(name)
            self._say(
                f"Room {name!r}'s deployment record predates recorded settings: its room file "
                f"{self.room_path(name)} stands in for what was deployed. `beekeeper deploy "
                f"{name}` records them."
            )
        return self.load(name)

    def room_file_changes(self, name: str) -> list[str]:
        """What room `name`'s file changes against the settings it was deployed with ("rate
        600 -> 900"); empty when nothing did, the record predates settings, or the room
        file is gone or unreadable (it is no longer what acts)."""
        deployment = self.deployment(name)
        if deployment is None or deployment.settings is None or not self.exists(name):
            return []
        try:
            room_file = self.load(name)
        except UserError:
            return []
        return changes(deployment.settings, room_file)

    def require_deployment(self, name: str) -> Deployment:
        deployment = self.deployment(name)
        if deployment is None:
            raise UserError(
                f"Room {name!r} is not deployed yet; run `beekeeper deploy {name}` first "
                f"(or `beekeeper local {name}` to rehearse it on this machine)."
            )
        return deployment

    def local_room(self, name: str) -> LocalRoom | None:
        """The record `beekeeper local` keeps while room `name` runs on this machine."""
        path = local_record_file(name, self._environ)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (ValueError, OSError, RecursionError):
            data = None
        try:
            settings = RoomSettings.from_mapping(data[LOCAL_SETTINGS_KEY])
            outputs = data[LOCAL_OUTPUTS_KEY]
            pid = data[LOCAL_PID_KEY]
            endpoint = outputs.get(names.ENDPOINT_URL_OUTPUT)
            usable = (
                settings.name == name
                and is_local_endpoint(endpoint)
                and all(isinstance(outputs.get(k), str) for k in REQUIRED_OUTPUTS)
            )
        except (TypeError, KeyError, AttributeError, SettingsError):
            usable = False
        if not usable:
            raise UserError(
                f"The local room record {path} is unreadable; start the room again with "
                f"`beekeeper local {name}` (it replaces the record), or delete the file."
            )
        deployment = Deployment({k: v for k, v in outputs.items() if isinstance(v, str)})
        return LocalRoom(settings, deployment, pid if isinstance(pid, int) else 0)

    def operated(self, name: str, local: bool | None = None) -> tuple[RoomSettings, Deployment]:
        """The room an operator command works on: its settings and its deployment record.

        A running local room (`beekeeper local`) is chosen when the room is not deployed in
        AWS, or with `local=True`; the AWS deployment when there is no running local room, or
        with `local=False`. With both and no choice, the operator is asked to choose.
        """
        rehearsal = self.local_room(name) if local is not False else None
        if rehearsal is not None and not rehearsal.running:
            if local or self.deployment(name) is None:
                raise UserError(
                    f"The local room {name!r} is not running (its process {rehearsal.pid} has "
                    f"ended, and its line with it unless it was saved); start it again with "
                    f"`{self.local_start_command(name)}`."
                )
            rehearsal = None
        if local and rehearsal is None:
            raise UserError(
                f"No local room {name!r} is running; start one with "
                f"`{self.local_start_command(name)}`."
            )
        if rehearsal is not None:
            if local is None and self.deployment(name) is not None:
                raise UserError(
                    f"Room {name!r} is deployed in AWS and also running locally (process "
                    f"{rehearsal.pid}); add --aws for the deployed room or --local for the "
                    "local one."
                )
            return rehearsal.settings, rehearsal.deployment
        if not self.exists(name):
            # No room file: a room `beekeeper local` ran from flags alone (the demo's), if any.
            kept = local_state_file(name, self._environ).exists()
            if kept or name == FLAGS_ONLY_NAME:
                raise UserError(
                    f"The local room {name!r} is not running"
                    + (" (its line is kept for its next start)" if kept else "")
                    + f"; start it with `{self.local_start_command(name)}`."
                )
        deployment = self.deployment(name)
        if deployment is None:
            self.load(name)  # a room that does not exist, or whose file is broken, says so
            deployment = self.require_deployment(name)
        return self.deployed_settings(name, deployment), deployment

    def local_start_command(self, name: str) -> str:
        """How the operator starts local room `name`: from its room file, or from flags alone
        (without --origin, with the demo shop)."""
        if self.exists(name):
            return f"beekeeper local {name}"
        if name == FLAGS_ONLY_NAME:
            return "beekeeper local"
        return f"beekeeper local --name {name}"

    def record_deployment(self, settings: RoomSettings, outputs: Mapping[str, str]) -> Path:
        """What a deploy made: the stack's outputs, and the settings it was made from."""
        path = self.deployment_path(settings.name)
        record = {OUTPUTS_KEY: dict(outputs), SETTINGS_KEY: settings.to_mapping()}
        write_atomically(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
        return path

    def forget(self, name: str) -> None:
        """Remove the deployment record, then the room file."""
        self.deployment_path(name).unlink(missing_ok=True)
        self.room_path(name).unlink(missing_ok=True)
