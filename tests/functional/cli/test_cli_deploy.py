"""`beekeeper deploy` and `destroy` with the CDK CLI replaced by a recorded double.

STS, SSM and CloudFormation are moto (or a botocore Stubber where a stack state is needed
that moto can not produce, such as ROLLBACK_COMPLETE).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from beekeeper.cli.factory import CliFactory
from beekeeper.core.edge import WAF_REGION
from beekeeper.core.push import key_expiry
from tests.support.cli_testkit import (
    NOW,
    REGION,
    ChannelAccount,
    FakeDns,
    Invoke,
    LambdaAccount,
    RecordedCdkRunner,
    RecordedWheels,
    aws_client,
    create_room_resources,
    room_settings,
    stack_outputs,
    write_deployment,
    write_room,
)

ACCOUNT = "123456789012"  # moto's account
OUTPUTS = stack_outputs("sale", "beekeeper-sale-table", "https://sqs/q", "https://sqs/dlq")
# `cdk diff` as the CDK CLI prints it (colours off when not on a terminal).
DIFF_WITHOUT_REPLACEMENT = (
    "Stack beekeeper-sale",
    "[~] AWS::Lambda::Function Functions/Trigger/Function FunctionsTriggerFunction1A2B3C4D ",
    " └─ [~] Environment",
    "[-] AWS::ApiGateway::Deployment Api/Deployment ApiDeploymentOld destroy",
    "[+] AWS::ApiGateway::Deployment Api/Deployment ApiDeploymentNew ",
)
DIFF_REPLACING_THE_TABLE = (
    "Stack beekeeper-sale",
    "[~] AWS::DynamoDB::Table Storage/Table StorageTableB43FDCE7 replace",
    " └─ [~] KeySchema (requires replacement)",
    "\x1b[33m[~]\x1b[39m \x1b[36mAWS::SNS::Topic\x1b[39m Monitoring/AlarmTopic"
    " MonitoringAlarmTopicAF62D4F1 \x1b[3m\x1b[33mmay be replaced\x1b[39m\x1b[23m",
)


def expected_env(config_dir: Path) -> dict[str, str]:
    return {
        "BEEKEEPER_CONFIG_DIR": str(config_dir),
        "PATH": "/usr/bin",
        "HOME": "/home/op",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
    }


def deploy_args(config_dir: Path, *, api_logging: bool = False) -> list[str]:
    # moto's API Gateway account has no logging role, like a fresh AWS account.
    logging = [] if api_logging else ["-c", "api_logging=false"]
    return [
        "deploy",
        "--all",
        "--app", "/opt/py/bin/python3 -m beekeeper.stacks.app",
        "-c", "room=sale",
        # The pages' key to the push channel: a year ahead of the deploy's clock.
        "-c", f"channel_key_expires={key_expiry(NOW)}",
        *logging,
        "--require-approval", "never",
        "--outputs-file", str(config_dir / "cache" / "cdk" / "sale" / "outputs.json"),
        "--no-notices",
        "--progress", "events",
    ]  # fmt: skip


def bootstrap(*regions: str) -> None:
    """The room's region and us-east-1, where its edge WAF goes (the default room has one)."""
    for region in regions or (REGION, WAF_REGION):
        aws_client("ssm", region).put_parameter(
            Name="/cdk-bootstrap/hnb659fds/version", Value="27", Type="String"
        )


@pytest.fixture
def room(aws: None, config_dir: Path, cdk: RecordedCdkRunner) -> Path:
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    return write_room(config_dir, room_settings("sale"))


def deployed_outputs() -> dict[str, str]:
    """What a deploy records: the room's table and its (empty) ticket key secret exist, as
    the stack creates them."""
    created = create_room_resources(REGION, "sale")
    return {**OUTPUTS, **{k: created[k] for k in ("TableName", "TicketKeysSecret")}}


def test_first_deploy_bootstraps_then_deploys_and_records_the_outputs(
    invoke: Invoke,
    aws: None,
    room: Path,
    config_dir: Path,
    cdk: RecordedCdkRunner,
    wheels: RecordedWheels,
) -> None:
    result = invoke("deploy", "sale")

    assert result.exit_code == 0, result.output
    work = config_dir / "cache" / "cdk" / "sale"
    assert [(c.args, c.env, c.cwd) for c in cdk.calls] == [
        (["bootstrap", f"aws://{ACCOUNT}/{REGION}", "--no-notices"], expected_env(config_dir),
         work),
        # The edge's WAF is in us-east-1, whatever the room's region.
        (["bootstrap", f"aws://{ACCOUNT}/{WAF_REGION}", "--no-notices"],
         expected_env(config_dir), work),
        (deploy_args(config_dir), expected_env(config_dir), work),
    ]  # fmt: skip
    recorded = json.loads((config_dir / "rooms" / "sale.deployed.json").read_text())
    # The stack's outputs, and the settings the room was deployed with.
    assert recorded == {
        "outputs": cdk.outputs["beekeeper-sale"],
        "settings": room_settings("sale").to_mapping(),
    }
    assert result.stdout.splitlines() == [
        "Room 'sale' is deployed.",
        f"Marketing URL (link visitors here): {OUTPUTS['MarketingUrl']}",
        f"Client check URL (your shop asks it): {OUTPUTS['ClientCheckUrl']}",
        f"JWKS URL (your shop verifies tickets with it): {OUTPUTS['JwksUrl']}",
    ]
    assert "Admission tickets: key " in result.stderr and "published and signing" in result.stderr
    assert wheels.calls == 1  # the consumer's wheels are in the cache before the CDK runs
    # Progress goes to stderr, plain when stderr is not a terminal.
    assert f"Bootstrapping aws://{ACCOUNT}/{REGION}" in result.stderr
    assert "beekeeper-x |  1/2 | 10:00:00 | CREATE_COMPLETE | AWS::SQS::Queue\n" in result.stderr
    assert "\x1b" not in result.stderr


def test_a_bootstrapped_account_is_deployed_to_directly(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert [c.args for c in cdk.calls] == [deploy_args(config_dir)]


def test_an_account_with_an_api_logging_role_gets_api_logs(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    aws_client("apigateway", REGION).update_account(
        patchOperations=[
            {"op": "replace", "path": "/cloudwatchRoleArn",
             "value": f"arn:aws:iam::{ACCOUNT}:role/apigw-logs"}
        ]
    )  # fmt: skip
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert [c.args for c in cdk.calls] == [deploy_args(config_dir, api_logging=True)]
    assert "without API logs" not in result.stderr


def test_an_account_without_an_api_logging_role_is_told_why_logs_are_missing(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert "-c" in cdk.calls[0].args and "api_logging=false" in cdk.calls[0].args
    assert "without API logs" in result.stderr


def test_a_failed_deploy_says_run_again_and_records_nothing(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    cdk.exit_codes = {"deploy": 1}
    result = invoke("deploy", "sale")
    assert result.exit_code == 4
    assert "The CDK deploy of beekeeper-sale failed (exit code 1" in result.output
    assert "CloudFormation rolls a failed change back" in result.output
    assert "run `beekeeper deploy sale` again" in result.output
    assert not (config_dir / "rooms" / "sale.deployed.json").exists()

    cdk.exit_codes = {}  # and running it again works
    assert invoke("deploy", "sale").exit_code == 0
    assert (config_dir / "rooms" / "sale.deployed.json").exists()


def test_a_deploy_without_outputs_is_reported(
    invoke: Invoke, aws: None, room: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    cdk.outputs = {"some-other-stack": OUTPUTS}
    result = invoke("deploy", "sale")
    assert result.exit_code == 4
    assert "wrote no outputs for beekeeper-sale" in result.output


def test_an_existing_healthy_stack_is_updated_in_place(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    cloudformation = aws_client("cloudformation")
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    cloudformation.create_stack(StackName="beekeeper-sale", TemplateBody=json.dumps(template))
    cdk.verb_lines = {"diff": DIFF_WITHOUT_REPLACEMENT}
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    # The changes are shown first, with the deploy's own arguments; nothing is asked.
    assert [c.args for c in cdk.calls] == [
        [
            "diff", "--app", "/opt/py/bin/python3 -m beekeeper.stacks.app", "-c", "room=sale",
            "-c", f"channel_key_expires={key_expiry(NOW)}", "-c", "api_logging=false",
            "--no-notices",
        ],
        deploy_args(config_dir),
    ]  # fmt: skip
    assert "Changes to beekeeper-sale (cdk diff):" in result.stderr
    assert DIFF_WITHOUT_REPLACEMENT[1] in result.stderr
    assert "Deploy anyway?" not in result.output
    assert cloudformation.describe_stacks(StackName="beekeeper-sale")["Stacks"]


class StubbedCloudFormation:
    """A session whose CloudFormation client is a botocore Stubber; moto serves the rest."""

    def __init__(self) -> None:
        self.region_name = REGION
        self.cloudformation = boto3.client("cloudformation", region_name=REGION)  # its own: stubbed
        self.stubber = Stubber(self.cloudformation)

    def client(self, service: str, **kwargs: Any) -> Any:
        if service == "cloudformation" and kwargs.get("region_name") == REGION:
            return self.cloudformation
        return boto3.Session().client(service, **kwargs)


def stack(status: str) -> dict[str, Any]:
    return {
        "Stacks": [
            {
                "StackName": "beekeeper-sale",
                "StackStatus": status,
                "CreationTime": "2026-11-22T00:00:00Z",
            }
        ]
    }


def test_a_stack_left_by_a_failed_first_deploy_is_deleted_then_deployed(
    invoke: Invoke, aws: None, room: Path, factory: CliFactory, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    session = StubbedCloudFormation()
    factory.session_factory = lambda: session
    by_name = {"StackName": "beekeeper-sale"}
    session.stubber.add_response("describe_stacks", stack("ROLLBACK_COMPLETE"), by_name)
    session.stubber.add_response("delete_stack", {}, by_name)
    session.stubber.add_client_error(  # the waiter's first look: gone
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id beekeeper-sale does not exist",
        expected_params=by_name,
    )
    with session.stubber:
        result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    session.stubber.assert_no_pending_responses()
    assert "left over from a failed deploy (ROLLBACK_COMPLETE); deleting it first" in (
        result.stderr
    )
    assert [c.args[0] for c in cdk.calls] == ["deploy"]


@pytest.mark.parametrize(
    ("status", "advice"),
    [
        ("UPDATE_IN_PROGRESS", "is busy (UPDATE_IN_PROGRESS); wait until it finishes"),
        ("UPDATE_ROLLBACK_FAILED", "aws cloudformation continue-update-rollback"),
    ],
)
def test_a_stack_that_can_not_be_deployed_now_is_explained(
    invoke: Invoke,
    aws: None,
    room: Path,
    factory: CliFactory,
    cdk: RecordedCdkRunner,
    status: str,
    advice: str,
) -> None:
    bootstrap()
    session = StubbedCloudFormation()
    factory.session_factory = lambda: session
    session.stubber.add_response("describe_stacks", stack(status), {"StackName": "beekeeper-sale"})
    with session.stubber:
        result = invoke("deploy", "sale")
    assert result.exit_code == 1
    assert advice in result.output
    assert cdk.calls == []


def test_deploy_of_an_unknown_room(invoke: Invoke, cdk: RecordedCdkRunner) -> None:
    result = invoke("deploy", "nope")
    assert result.exit_code == 1
    assert "There is no room named 'nope'" in result.output
    assert cdk.calls == []


def test_deploy_without_credentials_says_so_before_anything_is_fetched_or_synthesized(
    invoke: Invoke,
    room: Path,
    no_credentials: None,
    cdk: RecordedCdkRunner,
    wheels: RecordedWheels,
) -> None:
    result = invoke("deploy", "sale")
    assert result.exit_code == 3
    assert "No AWS credentials were found" in result.output
    assert wheels.calls == 0
    assert cdk.calls == []


def test_the_credential_check_is_the_first_request_and_comes_before_the_wheels_and_the_cdk(
    invoke: Invoke,
    aws: None,
    room: Path,
    factory: CliFactory,
    cdk: RecordedCdkRunner,
    wheels: RecordedWheels,
) -> None:
    events: list[str] = []
    cdk.events = wheels.events = events
    session = boto3.Session()

    def record(event_name: str, **_: object) -> None:
        events.append(event_name.removeprefix("before-call."))

    session.events.register("before-call", record)
    factory.session_factory = lambda: session
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert events[:2] == ["sts.GetCallerIdentity", "wheels"]
    assert events.count("sts.GetCallerIdentity") == 1  # the account is asked once
    assert events.index("wheels") < events.index("cdk bootstrap") < events.index("cdk deploy")


def test_the_node_the_cdk_runs_on_is_said_once(
    invoke: Invoke, aws: None, room: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    note = "The AWS CDK wants Node.js 24 or 22 (LTS); this machine's node is 20.20.2, so ..."
    cdk.node_note = note
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert result.stderr.count(note) == 1


# -- destroy --------------------------------------------------------------------------------


def destroy_args() -> list[str]:
    return [
        "destroy",
        "--all",
        "--app", "/opt/py/bin/python3 -m beekeeper.stacks.app",
        "-c", "room=sale",
        "--force",
        "--no-notices",
    ]  # fmt: skip


def test_destroy_asks_and_defaults_to_no(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    record = write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale", input="\n")
    assert result.exit_code == 1
    assert "Delete room 'sale' (beekeeper-sale in eu-west-1)" in result.output
    assert "[y/N]" in result.output
    assert "Nothing was destroyed: room 'sale' is as it was." in result.stderr
    assert cdk.calls == []
    assert room.exists() and record.exists()


def test_a_typo_at_the_question_gets_a_sentence_and_the_question_again(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale", input="yse\ny\n")
    assert result.exit_code == 0, result.output
    assert "Please answer y (yes) or n (no); Enter means no." in result.output
    assert "invalid input" not in result.output
    assert result.output.count("[y/N]") == 2
    assert [c.args for c in cdk.calls] == [destroy_args()]


def test_destroy_confirmed_removes_the_stack_then_the_files(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    record = write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale", input="y\n")
    assert result.exit_code == 0, result.output
    assert [(c.args, c.env, c.cwd) for c in cdk.calls] == [
        (destroy_args(), expected_env(config_dir), config_dir / "cache" / "cdk" / "sale")
    ]
    assert not room.exists() and not record.exists()
    assert "Room 'sale' is destroyed and forgotten." in result.output


def test_destroy_yes_skips_the_question(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 0, result.output
    assert "[y/N]" not in result.output
    assert [c.args for c in cdk.calls] == [destroy_args()]
    assert not room.exists()


def test_destroy_of_a_room_never_deployed_says_so_and_runs_nothing(
    invoke: Invoke, room: Path, cdk: RecordedCdkRunner
) -> None:
    for args in (["destroy", "sale"], ["destroy", "sale", "--yes"]):
        result = invoke(*args, input="y\n")
        assert result.exit_code == 1
        assert result.stderr.startswith(
            "Error: Room 'sale' was never deployed: AWS has no stack beekeeper-sale in "
            "eu-west-1, so there is nothing to destroy."
        )
        assert "[y/N]" not in result.output and "visitor" not in result.output
    assert cdk.calls == []
    assert room.exists()  # the room file stays: the operator may still deploy it


def test_destroy_of_a_room_never_deployed_says_so_without_credentials(
    invoke: Invoke, room: Path, no_credentials: None, cdk: RecordedCdkRunner
) -> None:
    result = invoke("destroy", "sale", input="y\n")
    assert result.exit_code == 1
    assert "Room 'sale' was never deployed from this machine" in result.stderr
    assert "No AWS credentials were found" in result.stderr  # why AWS was not looked at
    assert "[y/N]" not in result.output and "visitor" not in result.output
    assert cdk.calls == []
    assert room.exists()


def test_destroy_without_a_record_removes_what_an_unfinished_deploy_left(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    aws_client("cloudformation").create_stack(
        StackName="beekeeper-sale", TemplateBody=json.dumps(template)
    )
    result = invoke("destroy", "sale", input="y\n")
    assert result.exit_code == 0, result.output
    assert "has no deployment record, but AWS has beekeeper-sale (CREATE_COMPLETE)" in (
        result.stderr
    )
    assert "and every visitor waiting in it? [y/N]" in result.output
    assert [c.args for c in cdk.calls] == [destroy_args()]
    assert not room.exists()


def test_destroy_without_credentials_of_a_deployed_room_says_so_before_asking(
    invoke: Invoke, room: Path, config_dir: Path, no_credentials: None, cdk: RecordedCdkRunner
) -> None:
    write_deployment(config_dir, "sale", OUTPUTS)
    result = invoke("destroy", "sale")
    assert result.exit_code == 3
    assert "No AWS credentials were found" in result.output
    assert "[y/N]" not in result.output
    assert cdk.calls == []


def test_a_failed_destroy_keeps_the_room_to_try_again(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    record = write_deployment(config_dir, "sale", OUTPUTS)
    cdk.exit_codes = {"destroy": 1}
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 4
    assert "run `beekeeper destroy sale` again" in result.output
    assert room.exists() and record.exists()


def test_destroying_a_local_room_only_forgets_it(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    record = write_deployment(
        config_dir, "sale", {**OUTPUTS, "EndpointUrl": "http://127.0.0.1:5000"}
    )
    declined = invoke("destroy", "sale", input="n\n")  # it asks first, as for a room in AWS
    assert declined.exit_code == 1
    assert "Delete room 'sale' (on this machine)" in declined.output
    assert room.exists() and record.exists()
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 0
    assert cdk.calls == []
    assert not room.exists() and not record.exists()


def test_missing_node_is_reported_before_aws_is_asked_anything(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    cdk.missing = "Deploying needs Node.js (the AWS CDK CLI runs on it); install it."
    write_deployment(config_dir, "sale", OUTPUTS)  # destroy needs the CDK only for a stack
    for command in (["deploy", "sale"], ["destroy", "sale", "--yes"]):
        result = invoke(*command)  # no moto here: any AWS call would fail differently
        assert result.exit_code == 1
        assert "Deploying needs Node.js" in result.output
    assert room.exists()
    assert cdk.calls == []


@pytest.mark.parametrize(
    ("field_name", "url", "says"),
    [
        ("origin", "http://localhost:3000/shop", "'localhost'"),
        ("origin", "http://127.0.0.1:3000", "'127.0.0.1'"),
        ("origin", "https://localhost/shop", "'localhost'"),
        ("origin", "https://shop.localhost/", "'shop.localhost'"),
        ("origin", "https://LOCALHOST./", "'localhost.'"),
        ("origin", "https://[::1]:8443/", "'::1'"),
        ("origin", "https://127.8.9.10/", "'127.8.9.10'"),
        ("origin", "https://169.254.169.254/latest/meta-data/", "'169.254.169.254'"),
        ("origin", "https://[fe80::1]/", "'fe80::1'"),
        ("origin", "https://0.0.0.0/", "'0.0.0.0'"),
        ("origin", "https://[::ffff:127.0.0.1]/", "'::ffff:127.0.0.1'"),
        ("health_check_url", "https://127.0.0.1:9001/health", "'127.0.0.1'"),
        ("health_check_url", "http://localhost:3000/health", "'localhost'"),
        # Names that resolve to this machine (the resolver is the test's table).
        ("origin", "https://looks-public.example/", "looks-public.example (127.0.0.1)"),
        ("health_check_url", "https://metadata.example/", "metadata.example (169.254.169.254)"),
        ("origin", "https://mixed.example/", "mixed.example (::1)"),
    ],
)
def test_deploy_refuses_urls_that_name_this_machine(
    invoke: Invoke,
    config_dir: Path,
    cdk: RecordedCdkRunner,
    dns: FakeDns,
    field_name: str,
    url: str,
    says: str,
) -> None:
    dns.addresses.update(
        {
            "looks-public.example": ["127.0.0.1"],
            "metadata.example": ["169.254.169.254"],
            "mixed.example": ["192.0.2.7", "::1"],
        }
    )
    write_room(config_dir, room_settings("sale", **{field_name: url}))
    result = invoke("deploy", "sale")  # no moto: any AWS call would fail differently
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert f"Error: {field_name} {url!r} names this machine: {says} is a loopback" in said
    assert "rehearse on this machine with `beekeeper local`" in said
    assert "Traceback" not in result.output
    assert cdk.calls == []


def test_deploy_accepts_public_urls_and_only_warns_about_names_that_do_not_resolve(
    invoke: Invoke, aws: None, config_dir: Path, cdk: RecordedCdkRunner, dns: FakeDns
) -> None:
    bootstrap()
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    write_room(
        config_dir,
        room_settings("sale", health_check_url="https://not-yet-in-dns.example/health"),
    )
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert dns.asked == ["shop.example", "not-yet-in-dns.example"]
    assert (
        "health_check_url: the host 'not-yet-in-dns.example' does not resolve from here"
        in result.stderr
    )
    assert [c.args[0] for c in cdk.calls] == ["deploy"]


def test_deploy_says_who_hears_about_alarms(
    invoke: Invoke, aws: None, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    bootstrap()
    cdk.outputs = {"beekeeper-sale": deployed_outputs()}
    path = write_room(config_dir, room_settings("sale"))
    nobody = invoke("deploy", "sale")
    assert nobody.exit_code == 0, nobody.output
    said = " ".join(nobody.stderr.split())
    assert "Nobody will be told when an alarm fires: the room has no alert_email." in said
    assert f'Add alert_email = "you@example.com" to {path}' in said

    write_room(config_dir, room_settings("sale", alert_email="ops@shop.example"))
    told = invoke("deploy", "sale")
    assert told.exit_code == 0, told.output
    assert "Alarms notify ops@shop.example." in told.stderr
    assert "Nobody will be told" not in told.stderr
    assert len(told.stdout.splitlines()) == 4  # the URLs stay alone on stdout


@pytest.fixture
def running_room(aws: None, room: Path, cdk: RecordedCdkRunner) -> None:
    bootstrap()
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    aws_client("cloudformation").create_stack(
        StackName="beekeeper-sale", TemplateBody=json.dumps(template)
    )
    cdk.verb_lines = {"diff": DIFF_REPLACING_THE_TABLE}


def test_a_redeploy_that_would_replace_the_table_asks_first_and_no_stops_it(
    invoke: Invoke, running_room: None, cdk: RecordedCdkRunner
) -> None:
    result = invoke("deploy", "sale", input="n\n")
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    assert (
        "Deploying beekeeper-sale would replace AWS::DynamoDB::Table Storage/Table "
        "StorageTableB43FDCE7 (replaced); AWS::SNS::Topic Monitoring/AlarmTopic "
        "MonitoringAlarmTopicAF62D4F1 (possibly replaced)." in said
    )
    assert "loses every waiting visitor's place and every admission" in said
    assert "Nothing was deployed: beekeeper-sale is unchanged" in said
    assert [c.args[0] for c in cdk.calls] == ["diff"]


def test_a_redeploy_that_would_replace_goes_ahead_when_confirmed_or_with_yes(
    invoke: Invoke, running_room: None, cdk: RecordedCdkRunner
) -> None:
    confirmed = invoke("deploy", "sale", input="y\n")
    assert confirmed.exit_code == 0, confirmed.output
    assert [c.args[0] for c in cdk.calls] == ["diff", "deploy"]
    cdk.calls.clear()
    scripted = invoke("deploy", "sale", "--yes")
    assert scripted.exit_code == 0, scripted.output
    assert "Deploy anyway?" not in scripted.output
    assert [c.args[0] for c in cdk.calls] == ["diff", "deploy"]


def test_a_redeploy_without_anyone_to_answer_is_refused(
    invoke: Invoke, running_room: None, cdk: RecordedCdkRunner
) -> None:
    result = invoke("deploy", "sale", input="")  # a script without --yes: input ends at once
    assert result.exit_code == 1
    assert [c.args[0] for c in cdk.calls] == ["diff"]


def test_a_failed_diff_deploys_nothing(
    invoke: Invoke, running_room: None, cdk: RecordedCdkRunner
) -> None:
    cdk.exit_codes = {"diff": 1}
    result = invoke("deploy", "sale")
    assert result.exit_code == 4
    assert "The CDK diff of beekeeper-sale failed (exit code 1" in result.output
    assert [c.args[0] for c in cdk.calls] == ["diff"]


def test_a_new_account_whose_lambda_quota_is_too_small_is_told_what_to_ask_for(
    invoke: Invoke, aws: None, room: Path, cdk: RecordedCdkRunner, lambda_account: LambdaAccount
) -> None:
    bootstrap()
    lambda_account.quota = lambda_account.unreserved = 10  # what a new account often has
    result = invoke("deploy", "sale")
    assert result.exit_code == 1, result.output
    said = " ".join(result.output.split())
    # rate 600 at 6,000 per consumer: 1 trigger + 2 consumers + 1 governor = 4
    assert (
        "Room 'sale' reserves 4 concurrent Lambda executions (1 trigger, 2 consumer, "
        "1 governor) and Lambda keeps 100 unreserved, but this account has 10 unreserved of a "
        "quota of 10 in eu-west-1. Ask for a quota of at least 104: `aws service-quotas "
        "request-service-quota-increase --service-code lambda --quota-code L-B99A9384 "
        "--desired-value 104 --region eu-west-1`" in said
    )
    assert "Nothing was deployed." in said
    assert [c.args[0] for c in cdk.calls] == []  # bootstrapped already; nothing else ran
    assert lambda_account.asked == [("sale", False)]


def test_a_redeployed_room_counts_its_own_reservations_back(
    invoke: Invoke, running_room: None, cdk: RecordedCdkRunner, lambda_account: LambdaAccount
) -> None:
    # 100 unreserved: the room's 4 would leave 96, but it holds those 4 already, so it fits.
    lambda_account.quota, lambda_account.unreserved, lambda_account.reserved_by_room = 108, 100, 4
    cdk.verb_lines = {"diff": DIFF_WITHOUT_REPLACEMENT}
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert lambda_account.asked == [("sale", True)]


def test_a_deploy_reads_the_channels_quotas_and_says_what_to_raise(
    invoke: Invoke, room: Path, cdk: RecordedCdkRunner, channel_account: ChannelAccount
) -> None:
    bootstrap()
    channel_account.connections = 1_000
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    # Read once the Event API exists: its quotas are its own.
    assert channel_account.asked == [OUTPUTS["ChannelApiArn"]]
    assert (
        "Push channel: 1,000 new connections and 1,000,000 messages out a second (AWS "
        "defaults): one change reaches that many waiting pages a second."
    ) in result.stderr
    # Four arrival shards take 4,000 new visitors a second, each page one connection.
    assert "takes up to 4,000 new visitors a second" in result.stderr
    assert "--quota-code L-10498098 --desired-value 4000 --context-id " in result.stderr
    # The pages' key was set a year ahead of this deploy.
    day = datetime.fromtimestamp(key_expiry(NOW), UTC).date().isoformat()
    assert f"Waiting pages subscribe with a key that now expires on {day}" in result.stderr
    (call,) = [c.args for c in cdk.calls if c.args[0] == "deploy"]
    assert call[call.index(f"channel_key_expires={key_expiry(NOW)}") - 1] == "-c"
