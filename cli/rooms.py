"""The operator's rooms on disk: settings files and what each deploy recorded.

A room is `rooms/<name>.toml` under the config directory (core/config_dir.py); a deployed room
also has `rooms/<name>.deployed.json`, a flat JSON object of the stack's outputs
(docs/data-model.md "Stack outputs"; a local room adds `EndpointUrl`). Commands that operate a
room read the record, so they never guess a table or queue name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from beekeeper.cli.errors import UserError
from beekeeper.core import names
from beekeeper.core.config_dir import config_dir, deployment_file, room_file, write_atomically
from beekeeper.core.settings import RoomSettings, SettingsError, is_loopback_host

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
        and parts.path in ("", "/")
        and not (parts.query or parts.fragment or parts.username or parts.password)
        and is_loopback_host(parts.hostname or "")
    )


@dataclass(frozen=True)
class Deployment:
    """A deployed room's recorded stack outputs."""

    outputs: Mapping[str, str]

    @property
    def table_name(self) -> str:
        return self.outputs[names.TABLE_NAME_OUTPUT]

    @property
    def queue_url(self) -> str:
        return self.outputs[names.QUEUE_URL_OUTPUT]

    @property
    def dead_letter_queue_url(self) -> str | None:
        return self.outputs.get(names.DEAD_LETTER_QUEUE_URL_OUTPUT)

    @property
    def endpoint_url(self) -> str | None:
        """The AWS API emulator's address for a local room; None for a room in AWS."""
        return self.outputs.get(names.ENDPOINT_URL_OUTPUT) or None

    @property
    def marketing_url(self) -> str | None:
        return self.outputs.get(names.MARKETING_URL_OUTPUT)

    @property
    def client_check_url(self) -> str | None:
        return self.outputs.get(names.CLIENT_CHECK_URL_OUTPUT)

    @property
    def page_url(self) -> str | None:
        return self.outputs.get(names.PAGE_URL_OUTPUT)

    @property
    def jwks_url(self) -> str | None:
        return self.outputs.get(names.JWKS_URL_OUTPUT)

    @property
    def ticket_keys_secret(self) -> str | None:
        """The secret with the room's private ticket keys; None for a room deployed before
        tickets existed."""
        return self.outputs.get(names.TICKET_KEYS_SECRET_OUTPUT) or None

    @property
    def is_local(self) -> bool:
        return self.endpoint_url is not None


class RoomStore:
    """Reads and writes room files and deployment records under one config directory."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

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

    def exists(self, name: str) -> bool:
        return self.room_path(name).exists()

    def load(self, name: str) -> RoomSettings:
        path = self.room_path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            known = ", ".join(self.names()) or "none yet"
            raise UserError(
                f"There is no room named {name!r} (rooms: {known}); "
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
        # Tolerate a record that nests its outputs; the documented shape is flat.
        outputs = data.get("outputs", data) if isinstance(data, dict) else None
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
                "which is not a local room's emulator (http://127.0.0.1:PORT); start the room "
                f"again with `beekeeper local --name {name}`, or delete {path}."
            )
        return Deployment({k: v for k, v in outputs.items() if isinstance(v, str)})

    def require_deployment(self, name: str) -> Deployment:
        deployment = self.deployment(name)
        if deployment is None:
            raise UserError(
                f"Room {name!r} is not deployed yet; run `beekeeper deploy {name}` first "
                f"(or `beekeeper local --name {name}` to try it on this machine)."
            )
        return deployment

    def record_deployment(self, name: str, outputs: Mapping[str, str]) -> Path:
        path = self.deployment_path(name)
        write_atomically(path, json.dumps(dict(outputs), indent=2, sort_keys=True) + "\n")
        return path

    def forget(self, name: str) -> None:
        """Remove the deployment record, then the room file."""
        self.deployment_path(name).unlink(missing_ok=True)
        self.room_path(name).unlink(missing_ok=True)
