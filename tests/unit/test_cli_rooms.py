"""Room files and deployment records on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beekeeper.cli.errors import UserError
from beekeeper.cli.rooms import RoomStore
from beekeeper.core.settings import RoomSettings

ROOM = RoomSettings(
    name="sale", display_name="Sale", region="eu-west-1", origin="https://s.example", rate=5
)


def store(tmp_path: Path) -> RoomStore:
    return RoomStore({"BEEKEEPER_CONFIG_DIR": str(tmp_path)})


def test_a_saved_room_loads_back_equal_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    path = rooms.save(ROOM)
    assert path == tmp_path / "rooms" / "sale.toml"
    assert rooms.load("sale") == ROOM
    assert sorted(p.name for p in path.parent.iterdir()) == ["sale.toml"]
    assert rooms.names() == ["sale"]


def test_a_room_file_naming_another_room_is_refused(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    rooms.save(ROOM)
    (tmp_path / "rooms" / "sale.toml").rename(tmp_path / "rooms" / "copy.toml")
    with pytest.raises(UserError, match="says name = 'sale'; set it to 'copy'"):
        rooms.load("copy")


def test_the_deployment_record_keeps_the_outputs_and_the_settings_deployed(
    tmp_path: Path,
) -> None:
    rooms = store(tmp_path)
    outputs = {"TableName": "t", "QueueUrl": "q", "MarketingUrl": "https://m.example"}
    path = rooms.record_deployment(ROOM, outputs)
    assert json.loads(path.read_text()) == {"outputs": outputs, "settings": ROOM.to_mapping()}
    deployment = rooms.deployment("sale")
    assert deployment is not None
    assert (deployment.table_name, deployment.queue_url, deployment.is_local) == ("t", "q", False)
    assert deployment.settings == ROOM
    # What was deployed, whatever the room file says now (and without one).
    assert rooms.deployed_settings("sale") == ROOM


def test_a_record_of_flat_outputs_from_before_the_settings_is_read_too(tmp_path: Path) -> None:
    told: list[str] = []
    rooms = RoomStore({"BEEKEEPER_CONFIG_DIR": str(tmp_path)}, say=told.append)
    rooms.save(ROOM.replace(rate=7))
    path = tmp_path / "rooms" / "sale.deployed.json"
    flat = {"TableName": "t", "QueueUrl": "q", "EndpointUrl": "http://127.0.0.1:5000"}
    path.write_text(json.dumps(flat))
    deployment = rooms.deployment("sale")
    assert deployment is not None and deployment.endpoint_url == "http://127.0.0.1:5000"
    assert deployment.settings is None
    # The room file stands in, and the store says so once.
    assert rooms.deployed_settings("sale").rate == 7
    assert rooms.deployed_settings("sale").rate == 7
    assert len(told) == 1 and "predates recorded settings" in told[0]
    assert rooms.room_file_changes("sale") == []


def test_the_room_file_changes_are_named_against_the_deployed_settings(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    rooms.record_deployment(ROOM.replace(max_inside=50), {"TableName": "t", "QueueUrl": "q"})
    rooms.save(ROOM.replace(max_inside=80, display_name="Big sale"))
    assert rooms.room_file_changes("sale") == [
        'display_name "Sale" -> "Big sale"',
        "max_inside 50 -> 80",
    ]


@pytest.mark.parametrize(
    ("settings", "sentence"),
    [
        ("nope", "holds settings that are not a room's"),
        ({**ROOM.to_mapping(), "rate": 0}, "holds settings that are not a room's"),
        ({**ROOM.to_mapping(), "name": "other"}, "is room 'other''s, not 'sale''s"),
    ],
)
def test_a_record_with_broken_settings_says_to_deploy_again(
    tmp_path: Path, settings: object, sentence: str
) -> None:
    rooms = store(tmp_path)
    path = tmp_path / "rooms" / "sale.deployed.json"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps({"outputs": {"TableName": "t", "QueueUrl": "q"}, "settings": settings})
    )
    with pytest.raises(UserError, match=sentence) as refused:
        rooms.deployment("sale")
    assert "run `beekeeper deploy sale` to write it again" in str(refused.value)


def test_an_unreadable_record_says_to_deploy_again(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    path = tmp_path / "rooms" / "sale.deployed.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(UserError, match=r"is unreadable .*run `beekeeper deploy sale`"):
        rooms.deployment("sale")


def test_forget_removes_both_files(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    rooms.save(ROOM)
    rooms.record_deployment(ROOM, {"TableName": "t", "QueueUrl": "q"})
    rooms.forget("sale")
    assert rooms.names() == [] and rooms.deployment("sale") is None
