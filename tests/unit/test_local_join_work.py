"""`beekeeper local --join-work`: a local room's places cost what a deployed room's do."""

from __future__ import annotations

from beekeeper.core.settings import RoomSettings
from beekeeper.local.room import LocalOptions, local_settings

ROOM_FILE = RoomSettings(
    name="spring",
    display_name="Spring sale",
    region="eu-west-1",
    origin="https://shop.example",
    rate=60,
    join_work=2_500,
)


def test_a_local_room_has_the_deployed_default_and_the_flag_overrides_the_room_file() -> None:
    origin = "http://localhost:9/"
    flags_only = local_settings(LocalOptions(rate=60), origin)
    deployed = RoomSettings(name="x", display_name="x", region="eu-west-1", origin=origin, rate=1)
    assert flags_only.join_work == deployed.join_work > 0
    assert local_settings(LocalOptions(room=ROOM_FILE), origin).join_work == 2_500
    assert local_settings(LocalOptions(room=ROOM_FILE, join_work=0), origin).join_work == 0
    assert local_settings(LocalOptions(rate=60, join_work=40), origin).join_work == 40
