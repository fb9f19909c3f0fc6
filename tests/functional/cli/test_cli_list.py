"""`beekeeper list`: rooms, region, deployed or not, URLs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.cli_testkit import (
    Invoke,
    local_outputs,
    room_settings,
    stack_outputs,
    write_deployment,
    write_local_record,
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


def test_a_running_local_room_is_listed_as_running_the_demo_too(
    invoke: Invoke, config_dir: Path
) -> None:
    # The demo's room has no room file; a rehearsed room has one; a deployed room runs too.
    demo = room_settings("local", region="us-east-1", origin="http://127.0.0.1:8081/")
    write_local_record(config_dir, demo, local_outputs("local"), os.getpid())
    write_room(config_dir, room_settings("spring"))
    write_local_record(
        config_dir, room_settings("spring"), local_outputs("spring", 9000), os.getpid()
    )
    write_room(config_dir, room_settings("summer"))
    outputs = stack_outputs("summer", "t", "https://sqs/q", "https://sqs/dlq")
    write_deployment(config_dir, "summer", outputs)
    write_local_record(
        config_dir, room_settings("summer"), local_outputs("summer", 9100), os.getpid()
    )

    rows = {row["name"]: row for row in json.loads(invoke("list", "--json").output)}
    assert [(r["region"], r["deployed"], r["local"], r["local_pid"]) for r in rows.values()] == [
        ("us-east-1", True, True, os.getpid()),
        ("eu-west-1", True, True, os.getpid()),
        ("eu-west-1", True, False, os.getpid()),
    ]
    assert rows["local"]["marketing_url"] == "http://127.0.0.1:8080/beekeeper"
    assert rows["summer"]["marketing_url"] == outputs["MarketingUrl"]
    assert rows["summer"]["local_marketing_url"] == "http://127.0.0.1:9100/beekeeper"

    text = invoke("list").output
    running = f"running under `beekeeper local` (process {os.getpid()})"
    block = text.split(f"local (us-east-1): {running}\n", 1)[1].split("\n\n")[0]
    assert "  marketing URL:    http://127.0.0.1:8080/beekeeper" in block.split("spring (")[0]
    assert f"spring (eu-west-1): {running}" in text
    assert f"summer (eu-west-1): deployed; also {running}" in text
    assert "local marketing URL: http://127.0.0.1:9100/beekeeper" in text


def ended_process_id() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_a_local_room_that_ended_is_not_running(invoke: Invoke, config_dir: Path) -> None:
    pid = ended_process_id()
    write_local_record(config_dir, room_settings("local"), local_outputs("local"), pid)
    write_room(config_dir, room_settings("spring"))
    write_local_record(config_dir, room_settings("spring"), local_outputs("spring"), pid)
    rows = json.loads(invoke("list", "--json").output)
    # The demo's ended room is gone; the rehearsed room is its room file's again.
    assert [(r["name"], r["deployed"], r["local"]) for r in rows] == [("spring", False, False)]
