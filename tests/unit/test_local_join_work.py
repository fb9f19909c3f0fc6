"""`beekeeper local --join-work`: a local room's places cost what a deployed room's do."""

from __future__ import annotations

from beekeeper.cli.commands.local import local_settings
from beekeeper.core.settings import RoomSettings

ROOM_FILE = RoomSettings(
    name="spring",
    display_name="Spring sale",
    region="eu-west-1",
    origin="https://shop.example",
    rate=60,
    join_work=2_500,
)


def flags(**given: object) -> dict[str, object]:
    """The local command's flags as click passes them: every setting flag, None when left out."""
    return {"origin": None, "rate": None, "name": None, "join_work": None, **given}


def test_a_local_room_has_the_deployed_default_and_the_flag_overrides_the_room_file() -> None:
    origin = "http://localhost:9/"
    flags_only = local_settings(None, flags(rate=60, origin=origin))
    deployed = RoomSettings(name="x", display_name="x", region="eu-west-1", origin=origin, rate=1)
    assert flags_only.join_work == deployed.join_work > 0
    assert local_settings(ROOM_FILE, flags()).join_work == 2_500
    assert local_settings(ROOM_FILE, flags(join_work=0)).join_work == 0
    assert local_settings(None, flags(rate=60, join_work=40)).join_work == 40
