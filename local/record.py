"""A running local room, recorded like a deployed one so the operator CLI finds it.

The room file (`rooms/<name>.toml`) and the deployment record (`rooms/<name>.deployed.json`,
the stack output keys of docs/data-model.md plus `EndpointUrl`) are written at start and
removed at stop. A deployed room or a room file of the operator's is never overwritten.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from beekeeper.core import names
from beekeeper.core.config_dir import deployment_file, room_file, write_atomically
from beekeeper.core.settings import RoomSettings
from beekeeper.core.tickets import jwks_url
from beekeeper.local.emulator import RoomResources

LOCAL_MARKER = "LocalPid"


class RecordError(Exception):
    """The room can not be recorded under this name; the message says what to do."""


@dataclass(frozen=True)
class RoomUrls:
    marketing_url: str
    page_url: str
    client_check_url: str
    jwks_url: str
    issuer: str  # the room's base URL, the tickets' `iss`


def room_urls(gateway_base: str) -> RoomUrls:
    return RoomUrls(
        marketing_url=f"{gateway_base}/beekeeper",
        page_url=f"{gateway_base}/room",
        client_check_url=f"{gateway_base}/client",
        jwks_url=jwks_url(gateway_base),
        issuer=gateway_base,
    )


def stack_outputs(
    settings: RoomSettings, urls: RoomUrls, resources: RoomResources, endpoint_url: str
) -> dict[str, object]:
    """The deployed stack's outputs (core/names.py), a local room's values, and its own two."""
    return {
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
        names.ENDPOINT_URL_OUTPUT: endpoint_url,
        LOCAL_MARKER: os.getpid(),
    }


def _process_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RoomRecord:
    def __init__(self, name: str) -> None:
        self.room_path: Path = room_file(name)
        self.deployment_path: Path = deployment_file(name)
        self._name = name
        self._written = False

    def check_free(self) -> None:
        """Refuse a name that belongs to a deployed room, a room file or a running local room."""
        previous = self._read_deployment()
        if previous is not None:
            if LOCAL_MARKER not in previous:
                raise RecordError(
                    f"a deployed room is named {self._name!r}; "
                    "give the local room another name with --name"
                )
            if _process_alive(previous[LOCAL_MARKER]):
                raise RecordError(
                    f"a local room named {self._name!r} is already running "
                    f"(process {previous[LOCAL_MARKER]}); stop it or use --name"
                )
            return  # left behind by a local room that was killed: ours to replace
        if self.room_path.exists():
            raise RecordError(
                f"a room file for {self._name!r} already exists ({self.room_path}); "
                "give the local room another name with --name"
            )

    def write(self, settings: RoomSettings, outputs: dict[str, object]) -> None:
        write_atomically(self.room_path, settings.to_toml())
        write_atomically(self.deployment_path, json.dumps(outputs, indent=2) + "\n")
        self._written = True

    def remove(self) -> None:
        if not self._written:
            return
        for path in (self.deployment_path, self.room_path):
            path.unlink(missing_ok=True)
        self._written = False

    def _read_deployment(self) -> dict[str, object] | None:
        try:
            data = json.loads(self.deployment_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):
            return {}
        return data if isinstance(data, dict) else {}
