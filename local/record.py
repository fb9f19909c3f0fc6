"""A running local room, recorded so the operator CLI finds it: `rooms/<name>.local.json`.

The record holds the room's settings as it runs them (the room file's, with the command
line's overrides), the stack output keys of docs/data-model.md with loopback values, the
operator endpoint (`EndpointUrl`, with its secret path: the file is readable by its owner
alone) and the process id. It is written at start and removed at stop; a room file and an AWS
deployment record of the same name are never written, changed or removed by local mode.
A record whose process has ended is what a killed room leaves: the CLI says the room is not
running (cli/rooms.py), and the next start of the room replaces it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from beekeeper.core import names
from beekeeper.core.config_dir import local_record_file, write_atomically
from beekeeper.core.local_room import (
    LOCAL_OUTPUTS_KEY,
    LOCAL_PID_KEY,
    LOCAL_SETTINGS_KEY,
    process_alive,
)
from beekeeper.core.routes import CLIENT, LEAVE, MARKETING_LINK, ROOM_PAGE
from beekeeper.core.settings import RoomSettings
from beekeeper.core.tickets import jwks_url
from beekeeper.local.emulator import RoomResources


class RecordError(Exception):
    """The room can not be recorded under this name; the message says what to do."""


@dataclass(frozen=True)
class RoomUrls:
    marketing_url: str
    page_url: str
    client_check_url: str
    jwks_url: str
    issuer: str  # the room's base URL, the tickets' `iss`
    leave_url: str  # capacity mode's POST /leave


def room_urls(gateway_base: str) -> RoomUrls:
    return RoomUrls(
        marketing_url=f"{gateway_base}{MARKETING_LINK.path}",
        page_url=f"{gateway_base}{ROOM_PAGE.path}",
        client_check_url=f"{gateway_base}{CLIENT.path}",
        jwks_url=jwks_url(gateway_base),
        issuer=gateway_base,
        leave_url=f"{gateway_base}{LEAVE.path}",
    )


def stack_outputs(
    settings: RoomSettings,
    urls: RoomUrls,
    resources: RoomResources,
    endpoint_url: str,
    minute_seconds: float = 60.0,
) -> dict[str, str]:
    """The deployed stack's outputs (core/names.py), a local room's values, and its endpoint.
    The room's public address is its loopback port (its in-process edge, local/edge.py), and
    so is the origin's: one process answers both. Its push channel's hosts are its loopback
    channel's (local/channel.py); it has no Event API ARN and no key that expires."""
    public = urls.issuer
    channel = resources.channel
    return {
        names.PUBLIC_URL_OUTPUT: public,
        names.EDGE_DOMAIN_OUTPUT: public.split("://", 1)[1],
        names.DISTRIBUTION_ID_OUTPUT: "",  # a local room has no distribution
        names.ORIGIN_URL_OUTPUT: f"{public}/",
        names.MARKETING_URL_OUTPUT: urls.marketing_url,
        names.CLIENT_CHECK_URL_OUTPUT: urls.client_check_url,
        names.PAGE_URL_OUTPUT: urls.page_url,
        names.TABLE_NAME_OUTPUT: resources.table_name,
        names.QUEUE_URL_OUTPUT: resources.queue_url,
        names.DEAD_LETTER_QUEUE_URL_OUTPUT: resources.dead_letter_queue_url,
        **{
            names.function_output(role): settings.names.function(role)
            for role in names.FUNCTION_ROLES
        },
        names.DASHBOARD_NAME_OUTPUT: "",  # a local room has no dashboard
        names.JWKS_URL_OUTPUT: urls.jwks_url,
        names.TICKET_KEYS_SECRET_OUTPUT: resources.ticket_keys_secret,
        names.CHANNEL_HTTP_DOMAIN_OUTPUT: channel.host if channel else "",
        names.CHANNEL_REALTIME_DOMAIN_OUTPUT: (
            urlsplit(channel.realtime_url).netloc if channel else ""
        ),
        names.CHANNEL_API_ARN_OUTPUT: "",
        names.CHANNEL_KEY_EXPIRES_OUTPUT: "",
        names.ENDPOINT_URL_OUTPUT: endpoint_url,
        names.MINUTE_SECONDS_OUTPUT: f"{minute_seconds:g}",
    }


class RoomRecord:
    def __init__(self, name: str) -> None:
        self.path: Path = local_record_file(name)
        self._name = name
        self._written = False

    def check_free(self) -> None:
        """Refuse a name a local room of another running process is recorded under."""
        previous = self._read()
        pid = previous.get(LOCAL_PID_KEY) if previous else None
        if pid != os.getpid() and process_alive(pid):
            raise RecordError(
                f"a local room named {self._name!r} is already running (process {pid}); "
                "stop it, or rehearse under another name with --name"
            )

    def write(self, settings: RoomSettings, outputs: dict[str, str]) -> None:
        record = {
            LOCAL_PID_KEY: os.getpid(),
            LOCAL_SETTINGS_KEY: settings.to_mapping(),
            LOCAL_OUTPUTS_KEY: outputs,
        }
        write_atomically(self.path, json.dumps(record, indent=2) + "\n", private=True)
        self._written = True

    def remove(self) -> None:
        if self._written:
            self.path.unlink(missing_ok=True)
            self._written = False

    def _read(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}
