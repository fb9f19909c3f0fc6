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


def test_the_deployment_record_is_flat_outputs(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    outputs = {"TableName": "t", "QueueUrl": "q", "MarketingUrl": "https://m.example"}
    path = rooms.record_deployment("sale", outputs)
    assert json.loads(path.read_text()) == outputs
    deployment = rooms.deployment("sale")
    assert deployment is not None
    assert (deployment.table_name, deployment.queue_url, deployment.is_local) == ("t", "q", False)


def test_a_record_with_nested_outputs_is_read_too(tmp_path: Path) -> None:
    rooms = store(tmp_path)
    path = tmp_path / "rooms" / "sale.deployed.json"
    path.parent.mkdir(parents=True)
    nested = {"TableName": "t", "QueueUrl": "q", "EndpointUrl": "http://127.0.0.1:5000"}
    path.write_text(json.dumps({"outputs": nested}))
    deployment = rooms.deployment("sale")
    assert deployment is not None and deployment.endpoint_url == "http://127.0.0.1:5000"


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
    rooms.record_deployment("sale", {"TableName": "t", "QueueUrl": "q"})
    rooms.forget("sale")
    assert rooms.names() == [] and rooms.deployment("sale") is None
