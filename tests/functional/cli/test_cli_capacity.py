"""`beekeeper capacity` and the capacity figures of `status`, against moto."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from beekeeper.core.datamodel import STATUS_COPIES
from tests.support.cli_testkit import (
    NOW,
    DeployedRoom,
    Invoke,
    create_room_resources,
    local_outputs,
    put_item,
    read_item,
    room_settings,
    write_deployment,
    write_local_record,
    write_room,
)


def capacity_room(config_dir: Path) -> DeployedRoom:
    settings = room_settings("checkout", max_inside=500, session_minutes=15)
    write_room(config_dir, settings)
    outputs = create_room_resources(settings.region, settings.name)
    write_deployment(config_dir, settings.name, outputs)
    return DeployedRoom(settings, outputs)


def test_capacity_sets_the_cap_live_and_republishes_the_status(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = capacity_room(config_dir)
    put_item(room.table, {"pk": "inside", "n": 120, "turnover": 40})
    result = invoke("capacity", "checkout", "200")
    assert result.exit_code == 0, result.output
    assert "at most 200 visitors inside" in result.output
    config = read_item(room.table, "config")
    assert config is not None and config["max_inside"] == 200 and config["version"] == 1
    assert config["updated_at"] == int(NOW)
    for copy in range(STATUS_COPIES):
        status = read_item(room.table, f"status#{copy}")
        assert status is not None
        assert (status["max_inside"], status["inside"], status["turnover"]) == (200, 120, 40)
        # The claim window (2 minutes by default): the waiting pages poll twice in it.
        assert status["claim_seconds"] == 120


def test_capacity_zero_lifts_the_cap(invoke: Invoke, config_dir: Path, aws: None) -> None:
    room = capacity_room(config_dir)
    result = invoke("capacity", "checkout", "0")
    assert result.exit_code == 0, result.output
    assert "by its rate alone" in result.output
    assert read_item(room.table, "config")["max_inside"] == 0  # type: ignore[index]


def test_a_rate_room_is_told_how_to_count_who_is_inside(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    result = invoke("capacity", "sale", "300")
    assert result.exit_code != 0
    assert "deployed without a cap" in result.output
    assert "max_inside = 300" in result.output and "beekeeper deploy sale" in result.output
    assert "Traceback" not in result.output
    assert read_item(deployed_room.table, "config") is None  # nothing was written


@pytest.mark.parametrize(
    ("name", "room_file", "start"),
    [
        ("local", False, "beekeeper local --max-inside 300"),  # the demo's, from flags alone
        ("drill", False, "beekeeper local --name drill --max-inside 300"),
        ("sale", True, "beekeeper local sale --max-inside 300"),
    ],
)
def test_a_local_room_without_a_cap_is_told_to_start_again_with_one(
    invoke: Invoke, config_dir: Path, name: str, room_file: bool, start: str
) -> None:
    settings = room_settings(name)
    if room_file:
        write_room(config_dir, settings)
    write_local_record(config_dir, settings, local_outputs(name), os.getpid())
    result = invoke("capacity", name, "300")
    assert result.exit_code == 1
    said = " ".join(result.stderr.split())
    assert said == (
        f"Error: Room {name!r} runs on this machine without a cap, so it does not count who is "
        f"inside. Stop it (Ctrl-C) and start it again with --max-inside 300 added to its "
        f"command: `{start}`."
    )
    assert "deploy" not in said and "room file" not in said


def test_a_bad_cap_is_refused_before_touching_aws(invoke: Invoke, config_dir: Path) -> None:
    for bad in ("1000001", "many", "2.5"):
        result = invoke("capacity", "checkout", bad)
        assert result.exit_code == 2, (bad, result.output)
        assert "max_inside" in result.output, result.output
    assert invoke("capacity", "checkout", "--", "-1").exit_code == 2


def test_status_shows_inside_the_cap_and_the_turnover(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = capacity_room(config_dir)
    put_item(room.table, {"pk": "inside", "n": 480, "turnover": 25})
    put_item(room.table, {"pk": "admitted", "n": 1000, "skipped": 20})
    put_item(room.table, {"pk": "arrivals#0", "n": 1520})
    report = json.loads(invoke("status", "checkout", "--json").output)
    assert (report["inside"], report["max_inside"], report["turnover"]) == (480, 500, 25)
    assert report["left_line"] == 20
    assert report["admitted_total"] == 1000
    assert report["waiting"] == 500  # 1,520 arrived, 1,000 admitted, 20 left the line
    assert report["estimated_wait_seconds"] == 500 * 60 // 600  # not full: at the rate
    text = invoke("status", "checkout").output
    assert (
        "Inside the shop: 480 / 500; lately 25 visitors a minute went in; 20 visitors left the line"
    ) in text


def test_a_full_shop_estimates_the_wait_from_the_turnover(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = capacity_room(config_dir)
    put_item(room.table, {"pk": "inside", "n": 500, "turnover": 25})
    put_item(room.table, {"pk": "arrivals#0", "n": 100})
    report = json.loads(invoke("status", "checkout", "--json").output)
    assert report["estimated_wait_seconds"] == 100 * 60 // 25


def test_init_takes_the_capacity_flags(invoke: Invoke, config_dir: Path) -> None:
    result = invoke(
        "init", "--yes", "--name", "seats", "--origin", "https://shop.example/", "--rate",
        "300", "--region", "eu-west-1", "--max-inside", "2000", "--session-minutes", "7.5",
        "--claim-minutes", "0.5", "--presence-grace-seconds", "20", "--presence-idle-minutes",
        "4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (config_dir / "rooms" / "seats.toml").read_text(encoding="utf-8")
    assert "max_inside = 2000" in text
    assert "session_minutes = 7.5" in text and "claim_minutes = 0.5" in text
    assert "presence_grace_seconds = 20" in text and "presence_idle_minutes = 4.0" in text
    bad = invoke("init", "--yes", "--name", "x", "--session-minutes", "0")
    assert bad.exit_code == 2 and "session" in bad.output
    bad = invoke("init", "--yes", "--name", "x", "--presence-grace-seconds", "2")
    assert bad.exit_code == 2 and "5 to 600 seconds, or 0 for no presence" in bad.output


def test_capacity_takes_the_choice_of_room_the_other_operator_commands_take(
    invoke: Invoke, config_dir: Path, aws: None
) -> None:
    room = capacity_room(config_dir)
    deployed = invoke("capacity", "checkout", "200", "--aws")
    assert deployed.exit_code == 0, deployed.output
    assert read_item(room.table, "config")["max_inside"] == 200  # type: ignore[index]
    local = invoke("capacity", "checkout", "100", "--local")
    assert local.exit_code == 1
    assert "No local room 'checkout' is running; start one with `beekeeper local checkout`" in (
        local.output
    )
    assert read_item(room.table, "config")["max_inside"] == 200  # type: ignore[index]
