"""`beekeeper list`: rooms, region, deployed or not, URLs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_testkit import (
    Invoke,
    room_settings,
    stack_outputs,
    write_deployment,
    write_room,
)


def test_no_rooms_says_how_to_make_one(invoke: Invoke, config_dir: Path) -> None:
    result = invoke("list")
    assert result.exit_code == 0
    assert f"No rooms yet in {config_dir}" in result.output
    assert json.loads(invoke("list", "--json").output) == []


def test_lists_deployed_local_and_undeployed_rooms(invoke: Invoke, config_dir: Path) -> None:
    write_room(config_dir, room_settings("alpha"))
    write_room(config_dir, room_settings("beta", region="us-east-2"))
    write_room(config_dir, room_settings("gamma"))
    outputs = stack_outputs("alpha", "t", "https://sqs/q", "https://sqs/dlq")
    write_deployment(config_dir, "alpha", outputs)
    local = {
        **stack_outputs("gamma", "t", "http://127.0.0.1:1/q", "http://127.0.0.1:1/d"),
        "MarketingUrl": "http://127.0.0.1:8080/beekeeper",
        "EndpointUrl": "http://127.0.0.1:5000",
    }
    write_deployment(config_dir, "gamma", local)

    rows = json.loads(invoke("list", "--json").output)
    assert [(r["name"], r["region"], r["deployed"], r["local"]) for r in rows] == [
        ("alpha", "eu-west-1", True, False),
        ("beta", "us-east-2", False, False),
        ("gamma", "eu-west-1", True, True),
    ]
    assert rows[0]["marketing_url"] == outputs["MarketingUrl"]
    assert rows[0]["client_check_url"] == outputs["ClientCheckUrl"]

    text = invoke("list").output
    assert "alpha (eu-west-1): deployed" in text
    assert "beta (us-east-2): not deployed" in text
    assert "gamma (eu-west-1): local" in text
    assert f"client check URL: {outputs['ClientCheckUrl']}" in text


def test_a_broken_room_file_is_reported_not_fatal(invoke: Invoke, config_dir: Path) -> None:
    write_room(config_dir, room_settings("alpha"))
    (config_dir / "rooms" / "broken.toml").write_text('name = "broken"\nrate = 0\n')
    result = invoke("list", "--json")
    assert result.exit_code == 0
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert rows["alpha"]["region"] == "eu-west-1"
    assert "broken.toml" in rows["broken"]["error"]
    assert "display_name" in rows["broken"]["error"]  # the first thing that is wrong
