"""`off`, `on` and `rate` against moto: the config item, the governor, the status copies."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.awsrequest import AWSResponse

from beekeeper.cli.errors import AwsError
from beekeeper.cli.factory import CliFactory
from beekeeper.cli.room_control import RoomControl
from beekeeper.core.datamodel import CONFIG_IN_EFFECT_SECONDS, STATE_KEY, STATUS_COPIES
from beekeeper.core.retry import Pauses
from beekeeper.room.room_state import UNPROCESSED_ATTEMPTS, UNPROCESSED_BACKOFF
from tests.support.cli_testkit import (
    NOW,
    DeployedRoom,
    Invoke,
    aws_client,
    local_outputs,
    put_item,
    read_item,
    room_settings,
    write_deployment,
    write_local_record,
    write_room,
)
from tests.support.push_double import RecordingPublisher


def status_copies(room: DeployedRoom) -> list[dict]:
    return [read_item(room.table, f"status#{d}") for d in range(STATUS_COPIES)]  # type: ignore[misc]


def test_off_writes_the_config_item_and_every_status_copy(
    invoke: Invoke, deployed_room: DeployedRoom, channel: RecordingPublisher
) -> None:
    put_item(deployed_room.table, {"pk": "arrivals#0", "n": 7})
    put_item(deployed_room.table, {"pk": "arrivals#3", "n": 5})
    put_item(deployed_room.table, {"pk": "admitted", "n": 4})

    result = invoke("off", "sale")

    assert result.exit_code == 0, result.output
    assert "is OFF" in result.output
    assert f"within about {CONFIG_IN_EFFECT_SECONDS:g} seconds" in result.output
    assert read_item(deployed_room.table, "config") == {
        "pk": "config",
        "enabled": False,
        "operator_rate": 600,  # the settings' rate: the item did not exist before
        "rate": 600,
        "updated_at": int(NOW),
        "version": 1,
    }
    for copy in status_copies(deployed_room):
        # The state copy also carries the serving number's history: off, no paced line; 8
        # wait, nobody joined since a point before (there was none); the pages' floor is the
        # serving number, no hold is announced and the line stands still; and the publish to the
        # room's push channel that told waiting pages (core/push.py).
        history = (
            {
                "history": f"{int(NOW) * 1000}:4:0:8:0:4:0",
                "push_seq": int(NOW * 1000),
                "push_told": '["off",600,false,null,null,null,null,null,null,0,0]',
            }
            if copy["pk"] == STATE_KEY
            else {}
        )
        assert copy == {
            "pk": copy["pk"],
            "enabled": False,
            "rate": 600,
            "operator_rate": 600,
            "slowed": False,
            "updated_at": int(NOW),
            "arrivals_total": 12,  # whole copies, with totals from the counters
            "admitted_total": 4,
            **history,
        }
    # The room's first publish: a full copy of the shared state, which says the room is off.
    (message,) = channel.messages
    assert (message["reason"], message["seq"]) == ("resync", int(NOW * 1000))
    assert message["doc"]["state"] == "off"
    assert message["doc"]["origin"] == deployed_room.settings.origin


def test_on_after_off_bumps_the_version_and_keeps_the_rates(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    put_item(
        deployed_room.table,
        {"pk": "config", "enabled": False, "operator_rate": 800, "rate": 400, "version": 6,
         "updated_at": 1},
    )  # fmt: skip
    put_item(
        deployed_room.table,
        {"pk": "status#3", "enabled": False, "rate": 400, "operator_rate": 800, "slowed": True,
         "updated_at": 1, "arrivals_total": 99, "admitted_total": 50},
    )  # fmt: skip
    put_item(deployed_room.table, {"pk": "arrivals#2", "n": 120})
    put_item(deployed_room.table, {"pk": "admitted", "n": 70})

    result = invoke("on", "sale")

    assert result.exit_code == 0, result.output
    assert "is ON: new visitors queue at 400 per minute" in result.output
    config = read_item(deployed_room.table, "config")
    assert config is not None
    assert (config["enabled"], config["version"], config["rate"], config["operator_rate"]) == (
        True,
        7,
        400,
        800,
    )
    copy = read_item(deployed_room.table, "status#3")
    assert copy is not None
    assert copy["enabled"] is True
    assert copy["slowed"] is True  # the governor still holds the rate down
    # Republished whole from the counters: one way to build a status copy, CLI and Lambdas.
    assert (copy["arrivals_total"], copy["admitted_total"]) == (120, 70)


def test_rate_sets_both_rates_resets_the_governor_and_updates_the_estimates(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    put_item(
        deployed_room.table,
        {"pk": "config", "enabled": True, "operator_rate": 600, "rate": 150, "version": 3,
         "updated_at": 1},
    )  # fmt: skip
    put_item(
        deployed_room.table,
        {"pk": "governor", "state": "throttled", "baseline_mean_ms": 120, "baseline_std_ms": 9,
         "baseline_at": 5, "updated_at": 5},
    )  # fmt: skip
    for d in range(STATUS_COPIES):
        put_item(
            deployed_room.table,
            {"pk": f"status#{d}", "enabled": True, "rate": 150, "operator_rate": 600,
             "slowed": True, "updated_at": 1, "arrivals_total": 1000, "admitted_total": 300},
        )  # fmt: skip

    result = invoke("rate", "sale", "2,500")

    assert result.exit_code == 0, result.output
    assert "now lets 2,500 visitors per minute through" in result.output
    config = read_item(deployed_room.table, "config")
    assert config == {
        "pk": "config",
        "enabled": True,
        "operator_rate": 2500,
        "rate": 2500,
        "updated_at": int(NOW),
        "version": 4,
    }
    # Forgotten: the governor's next run measures a new baseline at the new rate.
    assert read_item(deployed_room.table, "governor") is None
    for copy in status_copies(deployed_room):
        assert (copy["rate"], copy["operator_rate"], copy["slowed"]) == (2500, 2500, False)
        assert (copy["arrivals_total"], copy["admitted_total"]) == (0, 0)  # no counters yet
        assert copy["updated_at"] == int(NOW)


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        ("0", "rate: 0 is not allowed; use a whole number from 1 to 300,000 visitors per minute"),
        ("300001", "rate: 300001 is not allowed; use a whole number from 1 to 300,000"),
        ("-5", "rate: -5 is not allowed"),
        ("fast", "rate: 'fast' is not allowed; use a whole number"),
        ("1.5", "rate: '1.5' is not allowed; use a whole number"),
    ],
)
def test_rate_out_of_range_is_refused_before_touching_aws(
    invoke: Invoke, deployed_room: DeployedRoom, value: str, sentence: str
) -> None:
    result = invoke("rate", "sale", "--", value)
    assert result.exit_code == 2
    assert sentence in result.output
    assert read_item(deployed_room.table, "config") is None


def test_rate_accepts_both_ends_of_the_range(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    for value, expected in (("1", 1), ("300000", 300_000)):
        assert invoke("rate", "sale", value).exit_code == 0
        config = read_item(deployed_room.table, "config")
        assert config is not None and config["rate"] == expected


def test_a_rate_past_the_deployed_consumers_warns_to_redeploy(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    # Deployed at 600/min with 6,000 per consumer: 2 consumers reserved, 12,000/min at most.
    within = invoke("rate", "sale", "12000")
    assert within.exit_code == 0
    assert "Warning" not in within.stderr
    beyond = invoke("rate", "sale", "12001")
    assert beyond.exit_code == 0
    assert "can admit at most about 12,000 per minute until it is redeployed" in beyond.stderr
    assert "set rate = 12001 in its room file and run `beekeeper deploy sale`" in beyond.stderr
    config = read_item(deployed_room.table, "config")
    assert config is not None and config["rate"] == 12001


def test_unknown_room_names_the_known_ones(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    for command in (["off", "nope"], ["on", "nope"], ["rate", "nope", "5"], ["status", "nope"]):
        result = invoke(*command)
        assert result.exit_code == 1, command
        assert "There is no room named 'nope' (rooms: sale)" in result.output
        assert "beekeeper init --name nope" in result.output


def test_unknown_room_names_the_running_local_rooms_too(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Path
) -> None:
    # The demo's room runs from flags alone (no room file), in this very process for the test.
    write_local_record(config_dir, room_settings("local"), local_outputs("local"), os.getpid())
    # A local room whose process has ended is not listed.
    write_local_record(config_dir, room_settings("gone"), local_outputs("gone"), 2**22 + 1)
    for command in (["status", "nope"], ["deploy", "nope"], ["off", "nope"]):
        result = invoke(*command)
        assert result.exit_code == 1, command
        assert "There is no room named 'nope' (rooms: local (running locally), sale)" in (
            result.output
        )


def test_deploying_a_local_room_without_a_room_file_says_how_to_make_one(
    invoke: Invoke, config_dir: Path
) -> None:
    write_local_record(config_dir, room_settings("local"), local_outputs("local"), os.getpid())
    result = invoke("deploy", "local")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: Room 'local' has no room file: it runs on this machine from `beekeeper local`'s "
        "flags alone; `beekeeper init --name local` makes one for it.\n"
    )


@pytest.mark.parametrize(
    "command",
    [["off", "sale"], ["status", "sale"], ["rate", "sale", "60"], ["keys", "rotate", "sale"]],
)
def test_a_command_on_a_room_in_aws_asks_sts_for_the_credentials_first(
    invoke: Invoke, deployed_room: DeployedRoom, factory: CliFactory, command: list[str]
) -> None:
    requests: list[str] = []
    session = boto3.Session()
    session.events.register(
        "before-call", lambda event_name, **_: requests.append(event_name.split(".", 1)[1])
    )
    factory.session_factory = lambda: session
    result = invoke(*command)
    assert result.exit_code == 0, result.output
    assert requests[0] == "sts.GetCallerIdentity"
    assert requests.count("sts.GetCallerIdentity") == 1
    assert len(requests) > 1


def test_a_stopped_local_room_without_a_room_file_says_how_to_start_it(
    invoke: Invoke, config_dir: Path
) -> None:
    # The demo ran and stopped: no record, its line kept; never "create it with init".
    never_ran = invoke("status", "local")
    assert never_ran.exit_code == 1
    assert never_ran.output == (
        "Error: The local room 'local' is not running; start it with `beekeeper local`.\n"
    )
    saved = config_dir / "local" / "local.state.jsonl"
    saved.parent.mkdir(parents=True)
    saved.write_text("")
    (config_dir / "local" / "drill.state.jsonl").write_text("")
    for name, start in (("local", "beekeeper local"), ("drill", "beekeeper local --name drill")):
        result = invoke("status", name)
        assert result.exit_code == 1
        assert (
            f"The local room {name!r} is not running (its line is kept for its next start); "
            f"start it with `{start}`."
        ) in result.output
        assert "init" not in result.output


def test_an_invalid_room_name_argument_is_a_usage_error(invoke: Invoke) -> None:
    result = invoke("off", "../etc")
    assert result.exit_code == 2
    assert "name: '../etc' is not allowed" in result.output


def test_a_room_not_deployed_says_to_deploy_it(invoke: Invoke, config_dir: Path, aws: None) -> None:
    write_room(config_dir, room_settings("draft"))
    for command in (["off", "draft"], ["rate", "draft", "5"], ["status", "draft"]):
        result = invoke(*command)
        assert result.exit_code == 1
        assert "Room 'draft' is not deployed yet; run `beekeeper deploy draft` first" in (
            result.output
        )


def test_a_room_file_with_a_bad_value_names_the_file_and_field(
    invoke: Invoke, config_dir: Path
) -> None:
    path = write_room(config_dir, room_settings("sale"))
    path.write_text(path.read_text().replace("rate = 600", "rate = 0"))
    result = invoke("off", "sale")
    assert result.exit_code == 1
    assert f"Room file {path}: rate: 0 is not allowed" in result.output


def test_an_unreadable_deployment_record_says_to_deploy_again(
    invoke: Invoke, config_dir: Path
) -> None:
    write_room(config_dir, room_settings("sale"))
    write_deployment(config_dir, "sale", {"MarketingUrl": "https://x.example"})
    result = invoke("off", "sale")
    assert result.exit_code == 1
    assert "lacks TableName and QueueUrl; run `beekeeper deploy sale` to write it again" in (
        result.output
    )


def test_a_deployment_record_nested_too_deeply_says_to_deploy_again(
    invoke: Invoke, config_dir: Path
) -> None:
    write_room(config_dir, room_settings("sale"))
    (config_dir / "rooms" / "sale.deployed.json").write_text("[" * 100_000 + "]" * 100_000)
    result = invoke("off", "sale")
    assert result.exit_code == 1, result.output
    assert "is unreadable (nested too deeply); run `beekeeper deploy sale`" in result.output


def test_a_room_file_nested_too_deeply_names_the_file(invoke: Invoke, config_dir: Path) -> None:
    path = config_dir / "rooms" / "sale.toml"
    path.parent.mkdir(parents=True)
    path.write_text("rate = " + "[" * 5_000 + "]" * 5_000 + "\n")
    for command in (("off", "sale"), ("deploy", "sale"), ("status", "sale")):
        result = invoke(*command)
        assert result.exit_code == 1, result.output
        assert f"Room file {path}: room file: " in result.output
        assert "nests values too deeply" in result.output


@pytest.mark.parametrize(
    "endpoint",
    [
        "nonsense",
        "http://",
        "ftp://127.0.0.1:5000",
        "http://127.0.0.1",  # no port
        "http://127.0.0.1:99999",
        "https://dynamodb.eu-west-1.amazonaws.com",
        "http://192.0.2.1:5000",
        "http://127.0.0.1:5000/a/b",  # the endpoint's secret is one path segment
        "http://127.0.0.1:5000/secret?x=1",
        "http://127.0.0.1:5000 ",
        "",
    ],
)
def test_a_local_record_with_a_nonsense_endpoint_is_a_sentence(
    invoke: Invoke, config_dir: Path, endpoint: str
) -> None:
    write_room(config_dir, room_settings("sale"))
    write_deployment(
        config_dir,
        "sale",
        {"TableName": "t", "QueueUrl": "http://127.0.0.1:1/q", "EndpointUrl": endpoint},
    )
    for command in (("off", "sale"), ("status", "sale"), ("rate", "sale", "10")):
        result = invoke(*command)
        assert result.exit_code == 1, result.output
        assert f"names EndpointUrl {endpoint!r}, which is not a local room's endpoint" in (
            result.output
        )
        assert "Traceback" not in result.output


def test_a_missing_table_is_an_aws_error_naming_the_operation(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    aws_client("dynamodb").delete_table(TableName=deployed_room.table)
    result = invoke("off", "sale")
    assert result.exit_code == 3
    assert result.output.startswith("Error: AWS refused UpdateItem: ")
    assert "(ResourceNotFoundException); the room's resources are gone" in result.output
    assert "Traceback" not in result.output


def test_missing_credentials_are_explained(
    invoke: Invoke, deployed_room: DeployedRoom, no_credentials: None
) -> None:
    result = invoke("off", "sale")
    assert result.exit_code == 3
    assert "No AWS credentials were found; run `aws configure`" in result.output


def test_off_on_and_rate_reach_a_local_room_through_its_endpoint(
    invoke: Invoke, config_dir: Path
) -> None:
    """A local room's record carries EndpointUrl; the same commands work against it."""
    from moto.server import ThreadedMotoServer

    from tests.support.cli_testkit import stack_outputs

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        settings = room_settings("rehearsal", region="us-east-1")
        write_room(config_dir, settings)
        dynamodb = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
        dynamodb.create_table(
            TableName="local-table",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        queue_url = boto3.client(
            "sqs", region_name="us-east-1", endpoint_url=endpoint
        ).create_queue(QueueName="local-visitors")["QueueUrl"]
        outputs = stack_outputs("rehearsal", "local-table", queue_url, "")
        outputs["EndpointUrl"] = endpoint
        write_deployment(config_dir, "rehearsal", outputs)

        assert invoke("rate", "rehearsal", "42").exit_code == 0
        assert invoke("off", "rehearsal").exit_code == 0
        status = invoke("status", "rehearsal", "--json")
        assert status.exit_code == 0, status.output
        report = json.loads(status.output)
        assert (report["enabled"], report["rate"], report["local"]) == (False, 42, True)
    finally:
        server.stop()


def test_an_unreachable_local_room_asks_whether_it_is_running(
    invoke: Invoke, config_dir: Path
) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    write_room(config_dir, room_settings("gone", region="us-east-1"))
    write_deployment(
        config_dir,
        "gone",
        {
            "TableName": "t",
            "QueueUrl": "http://127.0.0.1/q",
            "EndpointUrl": f"http://127.0.0.1:{port}",
        },
    )
    result = invoke("off", "gone")
    assert result.exit_code == 3
    assert f"Could not reach http://127.0.0.1:{port}" in result.output
    assert "is `beekeeper local` still running?" in result.output


def test_a_throttled_status_update_says_the_switch_is_saved(deployed_room: DeployedRoom) -> None:
    dynamodb = aws_client("dynamodb")
    calls: list[str] = []  # the status copies' writes, and the pauses between them, in order
    paused: list[float] = []

    def nothing_processed(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]]:
        # DynamoDB under throttling: every item of the batch comes back unprocessed.
        calls.append("write")
        request = json.loads(params["body"])
        return AWSResponse("https://dynamodb", 200, {}, None), {
            "UnprocessedItems": request["RequestItems"],
            "ResponseMetadata": {"HTTPStatusCode": 200},
        }

    dynamodb.meta.events.register("before-call.dynamodb.BatchWriteItem", nothing_processed)

    def pause(seconds: float) -> None:
        calls.append("pause")
        paused.append(seconds)

    pauses = Pauses(sleep=pause, random=random.Random(4).random)
    control = RoomControl(
        dynamodb, deployed_room.table, deployed_room.settings, clock=lambda: NOW, pauses=pauses
    )
    try:
        with pytest.raises(AwsError, match="setting is saved, but its status copies were not"):
            control.set_enabled(False)
    finally:  # the clients of a test share their handlers
        dynamodb.meta.events.unregister("before-call.dynamodb.BatchWriteItem", nothing_processed)
    config = read_item(deployed_room.table, "config")
    assert config is not None and config["enabled"] is False
    assert read_item(deployed_room.table, "status#0") is None
    # Unprocessed items are retried after a pause each, as DynamoDB asks, not at once.
    assert calls == ["write", "pause"] * (UNPROCESSED_ATTEMPTS - 1) + ["write"]
    ceilings = [UNPROCESSED_BACKOFF.ceiling(n) for n in range(UNPROCESSED_ATTEMPTS - 1)]
    assert all(0 < p <= c for p, c in zip(paused, ceilings, strict=True))


def test_each_switch_tells_the_waiting_pages_at_once(
    invoke: Invoke, deployed_room: DeployedRoom, channel: RecordingPublisher, clock: Any
) -> None:
    assert invoke("off", "sale").exit_code == 0  # the room's first publish: a resync
    clock.now += 10
    assert invoke("on", "sale").exit_code == 0
    clock.now += 10
    assert invoke("hold", "sale").exit_code == 0
    clock.now += 10
    result = invoke("close", "sale", "--message", "Sold out, thank you")
    assert result.exit_code == 0, result.output
    assert channel.reasons == ["resync", "on", "hold", "close"]
    assert {channel for channel, _ in channel.published} == {"/room/sale"}
    closed = channel.messages[-1]["doc"]
    assert (closed["state"], closed["message"]) == ("closed", "Sold out, thank you")


def test_a_channel_that_refuses_fails_no_command_and_says_so(
    invoke: Invoke, deployed_room: DeployedRoom, channel: RecordingPublisher
) -> None:
    channel.refuse = "AppSync answered 403: not authorized to perform appsync:EventPublish"
    result = invoke("hold", "sale")
    assert result.exit_code == 0, result.output
    assert read_item(deployed_room.table, "config")["held"] is True  # type: ignore[index]
    assert result.stderr.startswith("Warning: Waiting pages were not told of the room's ")
    assert "appsync:EventPublish" in result.stderr
    # The state copy says no publish reached the pages: the next status write sends again.
    assert "push_told" not in read_item(deployed_room.table, STATE_KEY)  # type: ignore[operator]
