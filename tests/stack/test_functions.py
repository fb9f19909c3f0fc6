"""The four Lambdas: handlers, runtime, environment, concurrency, schedules."""

from __future__ import annotations

import json

import pytest

from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity
from beekeeper.stacks.storage import JOIN_SECRET_LENGTH
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

ROLES = ("producer", "trigger", "consumer", "governor")
TIMEOUTS = {"producer": 10, "trigger": 30, "consumer": 75, "governor": 60}


@pytest.mark.parametrize("role", ROLES)
def test_function_runs_its_handler_on_the_newest_python_on_arm(
    synthesized: Synthesized, role: str
) -> None:
    _, function = synthesized.function(role)
    properties = function["Properties"]
    assert properties["Handler"] == f"beekeeper.lambdas.{role}.handler"
    assert properties["Runtime"] == "python3.14"
    assert properties["Architectures"] == ["arm64"]
    assert properties["Timeout"] == TIMEOUTS[role]


@pytest.mark.parametrize("role", ROLES)
def test_function_environment_follows_the_data_model(synthesized: Synthesized, role: str) -> None:
    _, function = synthesized.function(role)
    environment = function["Properties"]["Environment"]["Variables"]
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    expected_keys = {"BEEKEEPER_ROOM", "TABLE_NAME"}
    if role in ("producer", "trigger", "consumer"):
        expected_keys.add("QUEUE_URL")
    if role in ("trigger", "producer"):
        expected_keys.add("CONSUMER_FUNCTION_NAME")
    if role == "producer":  # the marketing link alone reads the join secret
        expected_keys |= {"JOIN_SECRET", "ROOM_ORIGIN"}
        join_id, _ = synthesized.secret("JoinSecret")
        assert environment["JOIN_SECRET"] == {"Ref": join_id}
        # The room's page's origin: its own domain (what a cookie's /leave comes from); the
        # marketing link is on it.
        origin = flatten(environment["ROOM_ORIGIN"])
        assert origin == f"https://{synthesized.settings.domain}"
        marketing = flatten(synthesized.raw["Outputs"]["MarketingUrl"]["Value"])
        assert marketing.startswith(origin + "/")
    if role == "consumer":
        expected_keys.add("TICKET_KEYS_SECRET")
        secret_id, _ = synthesized.secret("TicketKeys")
        assert environment["TICKET_KEYS_SECRET"] == {"Ref": secret_id}
    if role != "producer":  # the writers of the room's state publish its changes
        expected_keys.add("CHANNEL_HTTP_DOMAIN")
        api_id, _ = synthesized.only("AWS::AppSync::Api")
        assert environment["CHANNEL_HTTP_DOMAIN"] == {"Fn::GetAtt": [api_id, "Dns.Http"]}
    assert set(environment) == expected_keys
    room = RoomSettings.from_lambda_environment({"BEEKEEPER_ROOM": environment["BEEKEEPER_ROOM"]})
    assert room == synthesized.settings
    assert json.loads(environment["BEEKEEPER_ROOM"])["name"] == "test-room"
    assert environment["TABLE_NAME"] == {"Ref": table_id}
    if role in ("trigger", "producer"):
        consumer_id, _ = synthesized.function("consumer")
        assert environment["CONSUMER_FUNCTION_NAME"] == {"Ref": consumer_id}


def test_functions_write_to_their_own_log_group(synthesized: Synthesized) -> None:
    for role in ROLES:
        _, function = synthesized.function(role)
        group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        group = synthesized.raw["Resources"][group_id]["Properties"]
        assert group["LogGroupName"] == f"/aws/lambda/beekeeper-test-room-{role}"


def test_functions_log_json_at_info_so_the_per_minute_story_reaches_cloudwatch(
    synthesized: Synthesized,
) -> None:
    functions = synthesized.resources("AWS::Lambda::Function")
    assert len(functions) == len(ROLES)  # every function of the stack, not only the four named
    for function in functions.values():
        config = function["Properties"]["LoggingConfig"]
        assert config["LogFormat"] == "JSON"
        assert config["ApplicationLogLevel"] == "INFO"
        assert config["SystemLogLevel"] == "INFO"


def test_reserved_concurrency_leaves_the_rest_to_the_producer(synthesized: Synthesized) -> None:
    reserved = {
        role: synthesized.function(role)[1]["Properties"].get("ReservedConcurrentExecutions")
        for role in ROLES
    }
    # rate 30,000 / capacity 6,000 = 5 consumers a minute, two minutes overlapping
    assert reserved == {"producer": None, "trigger": 1, "consumer": 10, "governor": 1}
    assert reserved["consumer"] == capacity.consumer_reserved_concurrency(synthesized.settings)


@pytest.mark.parametrize("role", ("trigger", "consumer", "governor"))
def test_minute_bound_functions_are_never_retried_late(synthesized: Synthesized, role: str) -> None:
    function_id, _ = synthesized.function(role)
    synthesized.template.has_resource_properties(
        "AWS::Lambda::EventInvokeConfig",
        {
            "FunctionName": {"Ref": function_id},
            "MaximumRetryAttempts": 0,
            "MaximumEventAgeInSeconds": 60,
        },
    )


def test_trigger_and_governor_run_every_minute(synthesized: Synthesized) -> None:
    scheduled = set()
    for rule in synthesized.resources("AWS::Events::Rule").values():
        properties = rule["Properties"]
        assert properties["ScheduleExpression"] == "rate(1 minute)"
        assert properties["State"] == "ENABLED"
        (target,) = properties["Targets"]
        assert target["RetryPolicy"] == {"MaximumEventAgeInSeconds": 60, "MaximumRetryAttempts": 0}
        scheduled.add(flatten(target["Arn"]))
    trigger_id, _ = synthesized.function("trigger")
    governor_id, _ = synthesized.function("governor")
    assert scheduled == {f"<GetAtt:{trigger_id}.Arn>", f"<GetAtt:{governor_id}.Arn>"}


def test_lambda_asset_holds_core_room_and_lambdas_under_the_installed_names(
    synthesized: Synthesized,
) -> None:
    _, function = synthesized.function("producer")
    asset_key = function["Properties"]["Code"]["S3Key"]
    asset_dir = synthesized.outdir / f"asset.{asset_key.removesuffix('.zip')}"
    shipped = {
        path.relative_to(asset_dir).as_posix() for path in asset_dir.rglob("*") if path.is_file()
    }
    assert "beekeeper/core/settings.py" in shipped
    assert "beekeeper/core/datamodel.py" in shipped
    assert "beekeeper/lambdas/producer.py" in shipped
    assert "beekeeper/room/assembly.py" in shipped
    assert all(
        name.startswith(("beekeeper/core/", "beekeeper/room/", "beekeeper/lambdas/"))
        for name in shipped
    )
    assert not any("__pycache__" in name or "/tests/" in name for name in shipped)


def test_only_the_consumer_carries_the_crypto_wheels_built_for_lambda(
    synthesized: Synthesized,
) -> None:
    """The consumer signs tickets with cryptography's OpenSSL binding, compiled for ARM64
    Linux; the other functions' asset stays the room's own code."""
    for role in ROLES:
        _, function = synthesized.function(role)
        assert function["Properties"]["Architectures"] == ["arm64"]
        asset_hash = flatten(function["Properties"]["Code"]["S3Key"]).removesuffix(".zip")
        asset = synthesized.outdir / f"asset.{asset_hash}"
        assert (asset / "beekeeper" / "core" / "settings.py").is_file()
        bindings = list(asset.glob("cryptography/hazmat/bindings/_rust*.so"))
        if role != "consumer":
            assert bindings == [] and not (asset / "cryptography").exists(), role
            continue
        (binding,) = bindings
        header = binding.read_bytes()[:20]
        assert header[:4] == b"\x7fELF" and header[4] == 2  # a 64-bit ELF shared object
        assert int.from_bytes(header[18:20], "little") == 183  # e_machine: AArch64
        assert (asset / "beekeeper" / "room" / "tickets.py").is_file()
        assert any(asset.glob("cffi/*.py"))


def test_the_ticket_keys_secret_holds_no_key_in_the_template(synthesized: Synthesized) -> None:
    _, secret = synthesized.secret("TicketKeys")
    properties = secret["Properties"]
    assert "SecretString" not in properties
    generated = properties["GenerateSecretString"]
    assert json.loads(generated["SecretStringTemplate"]) == {"keys": []}


def test_the_join_secret_is_generated_by_secrets_manager_never_written(
    synthesized: Synthesized,
) -> None:
    _, secret = synthesized.secret("JoinSecret")
    properties = secret["Properties"]
    assert "SecretString" not in properties
    assert properties["GenerateSecretString"] == {
        "ExcludePunctuation": True,
        "PasswordLength": JOIN_SECRET_LENGTH,
    }
    assert JOIN_SECRET_LENGTH >= 32  # what JoinKeys.from_secret asks of it
    assert secret["DeletionPolicy"] == "Delete"
    assert len(synthesized.resources("AWS::SecretsManager::Secret")) == 2
