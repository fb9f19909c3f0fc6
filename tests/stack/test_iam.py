"""Least privilege: no wildcard action, no managed policy, each role exactly its actions."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core import names
from beekeeper.core.settings import Mode
from beekeeper.stacks import permissions
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def _all_statements(synthesized: Synthesized) -> list[dict[str, Any]]:
    statements = []
    for resource in synthesized.raw["Resources"].values():
        properties = resource.get("Properties", {})
        for key in ("PolicyDocument", "AssumeRolePolicyDocument"):
            if key in properties:
                statements.extend(properties[key]["Statement"])
        for policy in (
            properties.get("Policies", []) if resource["Type"] == "AWS::IAM::Role" else []
        ):
            statements.extend(policy["PolicyDocument"]["Statement"])
    return statements


def _actions(statement: dict[str, Any]) -> list[str]:
    action = statement.get("Action", [])
    return [action] if isinstance(action, str) else list(action)


def test_no_policy_grants_a_wildcard_action(synthesized: Synthesized) -> None:
    statements = _all_statements(synthesized)
    assert len(statements) > 10  # the test looks at the real policies
    wildcards = [
        action
        for statement in statements
        if statement["Effect"] == "Allow"
        for action in _actions(statement)
        if "*" in action
    ]
    assert wildcards == []
    assert not any("NotAction" in statement for statement in statements)


def test_no_role_uses_an_aws_managed_policy(synthesized: Synthesized) -> None:
    roles = synthesized.resources("AWS::IAM::Role")
    assert len(roles) == 5  # four functions and the API's table reader
    assert [r for r in roles.values() if r["Properties"].get("ManagedPolicyArns")] == []


@pytest.mark.parametrize("role", names.FUNCTION_ROLES)
def test_each_function_gets_exactly_its_actions_on_its_resources(
    synthesized: Synthesized, role: str
) -> None:
    _, function = synthesized.function(role)
    role_id = function["Properties"]["Role"]["Fn::GetAtt"][0]
    granted: dict[str, set[str]] = {}
    for statement in synthesized.statements_of_role(role_id):
        assert statement["Effect"] == "Allow"
        resources = statement["Resource"]
        for resource in resources if isinstance(resources, list) else [resources]:
            granted.setdefault(flatten(resource), set()).update(_actions(statement))

    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    queue_id = next(
        logical_id
        for logical_id, queue in synthesized.resources("AWS::SQS::Queue").items()
        if queue["Properties"]["QueueName"].endswith("-visitors")
    )
    log_group_id = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
    expected = {
        f"<GetAtt:{table_id}.Arn>": set(permissions.table_actions(role, Mode.RATE)),
        f"<GetAtt:{log_group_id}.Arn>": set(permissions.LOG_ACTIONS),
    }
    if permissions.QUEUE_ACTIONS[role]:
        expected[f"<GetAtt:{queue_id}.Arn>"] = set(permissions.QUEUE_ACTIONS[role])
    if role in ("trigger", "producer"):
        consumer_id, _ = synthesized.function("consumer")
        expected[f"<GetAtt:{consumer_id}.Arn>"] = set(permissions.STARTS_CONSUMERS)
    if role == "consumer":  # the function that signs tickets, and only it, reads their keys
        secret_id, _ = synthesized.secret("TicketKeys")
        expected[f"<Ref:{secret_id}>"] = set(permissions.READS_TICKET_KEYS)
    if role == "producer":  # the marketing link, and only it, reads the join secret
        join_id, _ = synthesized.secret("JoinSecret")
        expected[f"<Ref:{join_id}>"] = set(permissions.READS_JOIN_SECRET)
    if role in ("trigger", "consumer", "governor"):  # the writers of the room's state publish
        namespace_id, _ = synthesized.only("AWS::AppSync::ChannelNamespace")
        expected[f"<GetAtt:{namespace_id}.ChannelNamespaceArn>"] = {"appsync:EventPublish"}
    assert granted == expected


def test_api_reads_the_table_with_only_the_templates_actions(synthesized: Synthesized) -> None:
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    (role_id,) = (
        logical_id
        for logical_id, role in synthesized.resources("AWS::IAM::Role").items()
        if role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "apigateway.amazonaws.com"}
    )
    statements = synthesized.statements_of_role(role_id)
    assert [(sorted(_actions(s)), flatten(s["Resource"])) for s in statements] == [
        # /polling reads, /jwks.json reads the keys, /client is a conditional write (redeem).
        (
            ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:UpdateItem"],
            f"<GetAtt:{table_id}.Arn>",
        )
    ]


STACK_DOC = Path(__file__).resolve().parents[2] / "docs" / "stack.md"


def documented_grants() -> dict[str, list[tuple[set[str], str]]]:
    """docs/stack.md's IAM table: principal -> [(actions of one service, its resource)]."""
    text = STACK_DOC.read_text(encoding="utf-8")
    start = text.index("## IAM (stacks/permissions.py)")
    section = text[start : text.index("\n## ", start)]
    rows = re.findall(r"^\| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", section, re.MULTILINE)
    grants: dict[str, list[tuple[set[str], str]]] = {}
    for principal, actions, resources in rows:
        if principal.strip() in ("principal", "---"):
            continue
        groups = [group.strip() for group in actions.split(";")]
        targets = [target.strip() for target in resources.split(";")]
        assert len(groups) == len(targets), f"one resource per service group: {principal}"
        grants[principal.strip()] = [
            (
                {
                    f"{group.split()[0]}:{name.strip()}"
                    for name in group.split(" ", 1)[1].split(",")
                },
                target,
            )
            for group, target in zip(groups, targets, strict=True)
        ]
    return grants


def granted_by_resource(synthesized: Synthesized, role_id: str) -> dict[str, set[str]]:
    granted: dict[str, set[str]] = {}
    for statement in synthesized.statements_of_role(role_id):
        resources = statement["Resource"]
        for resource in resources if isinstance(resources, list) else [resources]:
            granted.setdefault(flatten(resource), set()).update(_actions(statement))
    return granted


def test_the_documented_iam_table_is_the_template(synthesized: Synthesized) -> None:
    documented = documented_grants()
    table = f"<GetAtt:{synthesized.only('AWS::DynamoDB::Table')[0]}.Arn>"
    queue = next(
        f"<GetAtt:{logical_id}.Arn>"
        for logical_id, q in synthesized.resources("AWS::SQS::Queue").items()
        if q["Properties"]["QueueName"].endswith("-visitors")
    )
    consumer = f"<GetAtt:{synthesized.function('consumer')[0]}.Arn>"
    secret = f"<Ref:{synthesized.secret('TicketKeys')[0]}>"
    resources = {
        "table": table,
        "queue": queue,
        "the consumer (unqualified ARN)": consumer,
        "the ticket keys' secret": secret,
        "the join secret": f"<Ref:{synthesized.secret('JoinSecret')[0]}>",
        "the channel namespace": (
            f"<GetAtt:{synthesized.only('AWS::AppSync::ChannelNamespace')[0]}.ChannelNamespaceArn>"
        ),
    }

    ((log_actions, log_target),) = documented.pop("each function")
    assert log_target == "its own log group"
    for role in names.FUNCTION_ROLES:
        _, function = synthesized.function(role)
        granted = granted_by_resource(synthesized, function["Properties"]["Role"]["Fn::GetAtt"][0])
        log_group = f"<GetAtt:{function['Properties']['LoggingConfig']['LogGroup']['Ref']}.Arn>"
        expected = {log_group: log_actions}
        for actions, target in documented.pop(role):
            expected.setdefault(resources[target], set()).update(actions)
        assert granted == expected, role

    (api_role,) = (
        logical_id
        for logical_id, role in synthesized.resources("AWS::IAM::Role").items()
        if role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "apigateway.amazonaws.com"}
    )
    ((api_actions, api_target),) = documented.pop("API integration role")
    assert granted_by_resource(synthesized, api_role) == {resources[api_target]: api_actions}
    assert documented == {}, "a documented principal the template does not have"
