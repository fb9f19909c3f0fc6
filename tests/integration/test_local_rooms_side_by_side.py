"""Two local rooms in one process, each bound to its own settings and resources by injection.

Nothing of a room travels through the process environment, so a second room can not change
what the first one's handlers read, and test order does not matter.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from beekeeper.core.settings import ENVIRONMENT_VARIABLE
from beekeeper.local.room import LocalOptions, LocalRoom, local_room
from tests.support.localroom.http import admitted_origin, get

pytestmark = pytest.mark.slow


@pytest.fixture()
def rooms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[LocalRoom]]:
    monkeypatch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path))
    started: list[LocalRoom] = []
    try:
        for name, origin in (
            ("east", "http://localhost:7001/"),
            ("west", "http://localhost:7002/"),
        ):
            room = LocalRoom(
                local_room(rate=600, origin=origin, name=name, display_name=name),
                LocalOptions(port=0, operator_port=0, minute_seconds=1),
            )
            started.append(room)
            room.start()
        yield started
    finally:
        for room in reversed(started):
            room.stop()


def _admitted_origin(room: LocalRoom) -> str:
    assert room.urls is not None
    return admitted_origin(room.urls.marketing_url, room.urls.page_url.replace("/room", "/polling"))


def test_each_room_admits_to_its_own_origin(rooms: list[LocalRoom]) -> None:
    east, west = rooms
    assert _admitted_origin(east).startswith("http://localhost:7001/?beekeeper_token=")
    assert _admitted_origin(west).startswith("http://localhost:7002/?beekeeper_token=")
    assert east.urls is not None and west.urls is not None
    assert "east" in get(east.urls.page_url).text
    assert "west" in get(west.urls.page_url).text
    assert ENVIRONMENT_VARIABLE not in os.environ


def test_a_stopped_room_leaves_the_other_running(rooms: list[LocalRoom]) -> None:
    east, west = rooms
    east.stop()
    assert west.resources is not None
    assert _admitted_origin(west).startswith("http://localhost:7002/")
