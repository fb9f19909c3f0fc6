"""`beekeeper check` against a running local room: every step, a failing step, a refusal.

The room is `beekeeper local`'s, in this process (its real code, templates and edge over
HTTP); the command is the installed CLI's, run through click as the operator runs it. What it
prints is the command's own output.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from click.testing import CliRunner, Result

from beekeeper.cli.check.http import send
from beekeeper.cli.errors import EXIT_CHECK_FAILED, EXIT_USER_ERROR
from beekeeper.cli.main import cli
from beekeeper.core.datamodel import TICKET_KEYS_KEY, TICKET_KEYS_PUBLISHED
from beekeeper.local.room import LocalOptions, LocalRoom, local_room

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the check reads redirects
# A step's line: its mark, its name, the time it took and what it saw.
STEP_LINE = re.compile(
    r"  (?P<mark>ok  |FAIL|--  )  (?P<step>.+?) +(?P<seconds>\d+\.\d\d) s  (?P<saw>.+)"
)
RATE_STEPS = [
    "room",
    "marketing link",
    "cookie and redirect",
    "page",
    "shared state",
    "own /polling",
    "admission",
    "ticket",
    "shop's check",
    "redeem",
    "push channel",
    "clean up",
]


def _start(name: str, config_dir: Path, **settings: Any) -> LocalRoom:
    room = LocalRoom(
        local_room(
            **{
                "name": name,
                "display_name": f"Rehearsal {name}",
                "rate": 60,
                "origin": ORIGIN,
                **settings,
            }
        ),
        LocalOptions(port=0, operator_port=0, save_line=False),
    )
    room.start()
    return room


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def rate_room(config_dir: Path) -> Iterator[LocalRoom]:
    room = _start("drop", config_dir)
    try:
        yield room
    finally:
        room.stop()


def beekeeper(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def status(name: str) -> dict[str, Any]:
    done = beekeeper("status", name, "--local", "--json")
    assert done.exit_code == 0, done.output
    data: dict[str, Any] = json.loads(done.output)
    return data


def _dynamodb(room: LocalRoom) -> Any:
    return boto3.client(
        "dynamodb",
        endpoint_url=room.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def _table(room: LocalRoom) -> str:
    assert room.resources is not None
    return room.resources.table_name


def table_keys(room: LocalRoom) -> list[str]:
    items = _dynamodb(room).scan(TableName=_table(room))["Items"]
    return sorted(item["pk"]["S"] for item in items)


def room_items(keys: list[str]) -> list[str]:
    return [key for key in keys if not key.startswith("minute#")]


def test_every_step_passes_and_the_test_visitors_leave_no_trace(rate_room: LocalRoom) -> None:
    before = status("drop")
    keys_before = table_keys(rate_room)
    done = beekeeper("check", "drop", "--local")
    print(done.output)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith("Checking room 'drop' at http://127.0.0.1:")
    # One line per step, each with its time and what it saw.
    steps = lines[1:-1]
    assert [line.split()[0] for line in steps] == ["ok"] * len(RATE_STEPS)
    for line, step in zip(steps, RATE_STEPS, strict=True):
        match = STEP_LINE.fullmatch(line)
        assert match is not None, line
        assert match["step"] == step and match["saw"], line
    assert lines[-1].startswith("Every step passed in ")
    # Counted nowhere the operator looks, and nothing of them left in the table.
    after = status("drop")
    for figure in ("arrivals_total", "admitted_total", "waiting", "last_minute_admitted"):
        assert after[figure] == before[figure] == 0, figure
    # The room's own minute items come every minute whoever visits (the trigger claims each
    # minute), and what they count is held above (last_minute_admitted): the rest is as before.
    assert room_items(table_keys(rate_room)) == room_items(keys_before)
    assert not [key for key in table_keys(rate_room) if key.startswith(("v#", "check#", "work#"))]


def test_json_says_each_step_with_its_time(rate_room: LocalRoom) -> None:
    done = beekeeper("check", "drop", "--local", "--json")
    assert done.exit_code == 0, done.output
    report = json.loads(done.output)
    assert report["passed"] is True and report["refused"] is None
    assert [step["step"] for step in report["steps"]] == RATE_STEPS
    assert all(step["passed"] is True and step["seconds"] >= 0 for step in report["steps"])
    (ticket,) = [step for step in report["steps"] if step["step"] == "ticket"]
    assert "verified offline" in ticket["saw"] and "test: true" in ticket["saw"]


def test_a_capacity_room_s_test_visitors_leave_and_give_their_places_back(
    config_dir: Path,
) -> None:
    room = _start("seats", config_dir, max_inside=3, session_minutes=1, claim_minutes=1)
    try:
        done = beekeeper("check", "seats", "--local", "--json")
        assert done.exit_code == 0, done.output
        report = json.loads(done.output)
        names = [step["step"] for step in report["steps"]]
        assert names == [*RATE_STEPS[:-2], "leave", "push channel", "clean up"]
        after = status("seats")
        assert (after["inside"], after["admitted_total"], after["arrivals_total"]) == (0, 0, 0)
        assert not [key for key in table_keys(room) if key.startswith(("v#", "check#"))]
    finally:
        room.stop()


def test_a_room_whose_ticket_keys_were_retired_fails_at_the_ticket(rate_room: LocalRoom) -> None:
    # Every published key retired (as /jwks.json reads them), while the room still signs.
    _dynamodb(rate_room).update_item(
        TableName=_table(rate_room),
        Key={"pk": {"S": TICKET_KEYS_KEY}},
        UpdateExpression="SET #published = :none",
        ExpressionAttributeNames={"#published": TICKET_KEYS_PUBLISHED},
        ExpressionAttributeValues={":none": {"L": []}},
    )
    done = beekeeper("check", "drop", "--local")
    print(done.output)
    assert done.exit_code == EXIT_CHECK_FAILED, done.output
    lines = done.output.splitlines()
    (failed,) = [line for line in lines if line.split()[0] == "FAIL"]
    assert "ticket" in failed
    # The steps after it are not run; the clean-up is.
    after = lines[lines.index(failed) + 1 : -1]
    assert [line.split()[0] for line in after] == ["--", "--", "--", "ok"]
    assert lines[-1].startswith("The check failed at 'ticket': ")
    assert "is not among the 0 key(s) /jwks.json publishes" in lines[-1]
    assert "`beekeeper keys drop`" in lines[-1]
    assert not [key for key in table_keys(rate_room) if key.startswith(("v#", "check#"))]


def test_a_channel_that_turns_pages_away_fails_at_the_push_channel(rate_room: LocalRoom) -> None:
    assert rate_room.channel is not None
    rate_room.channel.refuse_connections = True  # as AWS throttles a burst of connections
    done = beekeeper("check", "drop", "--local")
    print(done.output)
    assert done.exit_code == EXIT_CHECK_FAILED, done.output
    lines = done.output.splitlines()
    (failed,) = [line for line in lines if line.split()[0] == "FAIL"]
    assert STEP_LINE.fullmatch(failed)["step"] == "push channel"  # type: ignore[index]
    assert lines[-1].startswith(
        "The check failed at 'push channel': A waiting page's subscription failed: the "
        "connection to ws://127.0.0.1:"
    )
    assert "429" in lines[-1] and "in up to 30 s instead of 2 s" in lines[-1]
    assert not [key for key in table_keys(rate_room) if key.startswith(("v#", "check#"))]


def test_the_push_channel_step_sees_the_room_s_own_publish(rate_room: LocalRoom) -> None:
    assert rate_room.channel is not None
    before = dataclasses.replace(rate_room.channel.counts())
    done = beekeeper("check", "drop", "--local", "--json")
    assert done.exit_code == 0, done.output
    (step,) = [s for s in json.loads(done.output)["steps"] if s["step"] == "push channel"]
    assert step["saw"].startswith("subscribed as a page; the room's publish seen after ")
    assert "the pages' key may not publish" in step["saw"]
    # The operator's copy of the shared document, published and delivered to the check's
    # subscriber (the room's own publishes may come too: a full copy is due every 5 minutes).
    after = rate_room.channel.counts()
    assert after.publishes >= before.publishes + 1
    assert after.deliveries >= before.deliveries + 1
    # The check's socket is closed (the server counts it once its handler has ended).
    deadline = time.monotonic() + 30
    while rate_room.channel.counts().subscriptions and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rate_room.channel.counts().subscriptions == 0


def test_an_off_room_is_not_checked_and_the_check_says_what_to_do(rate_room: LocalRoom) -> None:
    assert beekeeper("off", "drop", "--local").exit_code == 0
    keys_before = table_keys(rate_room)
    done = beekeeper("check", "drop", "--local")
    assert done.exit_code == EXIT_USER_ERROR, done.output
    assert "Nothing was sent: Room 'drop' is off" in done.output
    assert "`beekeeper on drop`" in done.output
    assert table_keys(rate_room) == keys_before  # no pass, no visitor


def test_the_check_refuses_while_a_real_visitor_waits(config_dir: Path) -> None:
    # One admission a minute and no work: the second and third real visitors wait.
    room = _start("busy", config_dir, rate=1, join_work=0)
    try:
        assert room.urls is not None
        for _ in range(3):  # real visitors: plain GETs of the marketing link
            _join(room.urls.marketing_url)
        done = beekeeper("check", "busy", "--local", "--json")
        assert done.exit_code == EXIT_USER_ERROR, done.output
        report = json.loads(done.output)
        assert "waiting in room 'busy'" in report["refused"]
        assert [step["step"] for step in report["steps"]] == ["room"]
        assert not [key for key in table_keys(room) if key.startswith("check#")]
    finally:
        room.stop()


def _join(marketing_url: str) -> None:
    answer = send(marketing_url)
    assert answer.status == 302 and answer.header("set-cookie"), answer.shown()
