"""`beekeeper deploy` and `destroy` with the CDK CLI replaced by a recorded double.

STS, SSM and CloudFormation are moto (or a botocore Stubber where a stack state is needed
that moto can not produce, such as ROLLBACK_COMPLETE).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from beekeeper.cli.factory import CliFactory
from tests.support.cli_testkit import (
    REGION,
    Invoke,
    RecordedCdkRunner,
    aws_client,
    room_settings,
    stack_outputs,
    write_deployment,
    write_room,
)

ACCOUNT = "123456789012"  # moto's account
OUTPUTS = stack_outputs("sale", "beekeeper-sale-table", "https://sqs/q", "https://sqs/dlq")


def expected_env(config_dir: Path) -> dict[str, str]:
    return {
        "BEEKEEPER_CONFIG_DIR": str(config_dir),
        "PATH": "/usr/bin",
        "HOME": "/home/op",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
    }


def deploy_args(config_dir: Path, *, api_logging: bool = False) -> list[str]:
    # moto's API Gateway account has no logging role, like a fresh AWS account.
    logging = [] if api_logging else ["-c", "api_logging=false"]
    return [
        "deploy",
        "--app", "/opt/py/bin/python3 -m beekeeper.stacks.app",
        "-c", "room=sale",
        *logging,
        "--require-approval", "never",
        "--outputs-file", str(config_dir / "cache" / "cdk" / "sale" / "outputs.json"),
        "--no-notices",
        "--progress", "events",
    ]  # fmt: skip


def bootstrap(region: str = REGION) -> None:
    aws_client("ssm", region).put_parameter(
        Name="/cdk-bootstrap/hnb659fds/version", Value="27", Type="String"
    )


@pytest.fixture
def room(config_dir: Path, cdk: RecordedCdkRunner) -> Path:
    cdk.outputs = {"beekeeper-sale": OUTPUTS}
    return write_room(config_dir, room_settings("sale"))


def test_first_deploy_bootstraps_then_deploys_and_records_the_outputs(
    invoke: Invoke, aws: None, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    result = invoke("deploy", "sale")

    assert result.exit_code == 0, result.output
    work = config_dir / "cache" / "cdk" / "sale"
    assert [(c.args, c.env, c.cwd) for c in cdk.calls] == [
        (["bootstrap", f"aws://{ACCOUNT}/{REGION}", "--no-notices"], expected_env(config_dir),
         work),
        (deploy_args(config_dir), expected_env(config_dir), work),
    ]  # fmt: skip
    recorded = json.loads((config_dir / "rooms" / "sale.deployed.json").read_text())
    assert recorded == OUTPUTS
    assert result.stdout.splitlines() == [
        "Room 'sale' is deployed.",
        f"Marketing URL (link visitors here): {OUTPUTS['MarketingUrl']}",
        f"Client check URL (your shop asks it): {OUTPUTS['ClientCheckUrl']}",
    ]
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
    result = invoke("deploy", "sale")
    assert result.exit_code == 0, result.output
    assert [c.args[0] for c in cdk.calls] == ["deploy"]
    assert cloudformation.describe_stacks(StackName="beekeeper-sale")["Stacks"]


class StubbedCloudFormation:
    """A session whose CloudFormation client is a botocore Stubber; moto serves the rest."""

    def __init__(self) -> None:
        self.region_name = REGION
        self.cloudformation = boto3.client("cloudformation", region_name=REGION)  # its own: stubbed
        self.stubber = Stubber(self.cloudformation)

    def client(self, service: str, **kwargs: Any) -> Any:
        if service == "cloudformation":
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


def test_deploy_without_credentials_is_explained(
    invoke: Invoke, room: Path, no_credentials: None
) -> None:
    result = invoke("deploy", "sale")
    assert result.exit_code == 3
    assert "No AWS credentials were found" in result.output


# -- destroy --------------------------------------------------------------------------------


def destroy_args() -> list[str]:
    return [
        "destroy",
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
    assert cdk.calls == []
    assert room.exists() and record.exists()


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


def test_destroy_yes_skips_the_question(invoke: Invoke, room: Path, cdk: RecordedCdkRunner) -> None:
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 0, result.output
    assert "[y/N]" not in result.output
    assert [c.args for c in cdk.calls] == [destroy_args()]  # also with nothing recorded
    assert not room.exists()


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
    result = invoke("destroy", "sale", "--yes")
    assert result.exit_code == 0
    assert cdk.calls == []
    assert not room.exists() and not record.exists()


def test_missing_node_is_reported_before_aws_is_asked_anything(
    invoke: Invoke, room: Path, config_dir: Path, cdk: RecordedCdkRunner
) -> None:
    cdk.missing = "Deploying needs Node.js (the AWS CDK CLI runs on it); install it."
    for command in (["deploy", "sale"], ["destroy", "sale", "--yes"]):
        result = invoke(*command)  # no moto here: any AWS call would fail differently
        assert result.exit_code == 1
        assert "Deploying needs Node.js" in result.output
    assert room.exists()
    assert cdk.calls == []
