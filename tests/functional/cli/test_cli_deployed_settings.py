"""Operator commands act on the room as it was deployed (its record's settings), not on a room
file edited since; `status` says what the file changes; a record from before the settings were
recorded still works, on the room file, and says so once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_testkit import (
    DeployedRoom,
    Invoke,
    create_room_resources,
    read_item,
    room_settings,
    write_deployment,
    write_room,
)


def deployed(config_dir: Path, **settings: object) -> DeployedRoom:
    """Room 'sale' deployed with `settings`: its file and its record say the same."""
    room = room_settings("sale", **settings)
    write_room(config_dir, room)
    outputs = create_room_resources(room.region, room.name)
    write_deployment(config_dir, room.name, outputs, room)
    return DeployedRoom(room, outputs)


def test_status_says_what_the_room_file_changes_since_the_deploy(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = deployed(config_dir, max_inside=50)
    assert "changed since deploy" not in invoke("status", "sale").output
    write_room(config_dir, room.settings.replace(max_inside=80, rate=900))
    result = invoke("status", "sale")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "Room file changed since deploy: rate 600 -> 900, max_inside 50 -> 80; run beekeeper "
        "deploy sale to apply it."
    )
    # The room as deployed is what status reads: its cap.
    assert "Inside the shop: 0 / 50" in result.stdout
    # Beside JSON, the sentence goes to stderr and the JSON stays whole.
    as_json = invoke("status", "sale", "--json")
    assert json.loads(as_json.stdout)["room"] == "sale"
    assert "max_inside 50 -> 80" in as_json.stderr


def test_capacity_refuses_by_the_deployed_room_not_an_edited_file(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = deployed(config_dir)  # a rate-mode room
    write_room(config_dir, room.settings.replace(max_inside=500))  # edited, not deployed
    result = invoke("capacity", "sale", "300")
    assert result.exit_code == 1
    assert "was deployed without a cap" in result.output
    assert read_item(room.table, "config") is None  # nothing written


def test_capacity_acts_on_a_deployed_cap_whose_file_was_edited_away(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = deployed(config_dir, max_inside=500)
    write_room(config_dir, room.settings.replace(max_inside=0))
    result = invoke("capacity", "sale", "300")
    assert result.exit_code == 0, result.output
    config = read_item(room.table, "config")
    assert config is not None and config["max_inside"] == 300


def test_a_record_from_before_the_settings_works_on_the_room_file_and_says_so_once(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    settings = room_settings("sale", max_inside=500)
    write_room(config_dir, settings)
    outputs = create_room_resources(settings.region, settings.name)
    (config_dir / "rooms" / "sale.deployed.json").write_text(json.dumps(outputs))  # flat
    # `rate` reads the room twice (its control, then the deployed rate's ceiling).
    result = invoke("rate", "sale", "100000")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("predates recorded settings") == 1
    result = invoke("capacity", "sale", "300")  # the room file's cap stands in
    assert result.exit_code == 0, result.output
    # With nothing recorded to compare with, status says nothing about the file's changes.
    assert "changed since deploy" not in invoke("status", "sale").output
