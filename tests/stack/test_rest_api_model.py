"""What the stack deploys is the one definition local mode loads, and API Gateway keeps all of it.

- The synthesized template, loaded as API Gateway stores a REST API, equals the definition
  stacks/rest_api.py builds without CDK (what local mode's gateway loads), in rate and
  capacity mode, with and without the governor and a schedule.
- Every method of the synthesized stacks, applied through API Gateway's own API on moto
  (public boto3 calls only) and read back with GetMethod, has lost or replaced nothing: moto
  keeps integration and method responses by status code, as API Gateway does.
- The stack refuses to synthesize a method that breaks the rules, naming the route.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import boto3
import pytest
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from moto import mock_aws

from beekeeper.apigateway.model import (
    InvalidApi,
    Method,
    RestApi,
    load,
    load_method,
    load_template,
    methods_of_template,
)
from beekeeper.core.gateway_answers import route_methods
from beekeeper.core.settings import Mode, RoomSettings
from beekeeper.stacks import rest_api
from beekeeper.stacks.api import RoomApi
from beekeeper.stacks.page import deploy_page_channel
from beekeeper.waiting_room_site import render_page
from tests.support.stack_testkit import (
    CHANGED_ROOM,
    FULL_ROOM,
    Synthesized,
    api_references,
    synthesize_template,
)

# The rooms FULL_ROOM and CHANGED_ROOM are not: rate mode without the governor but with a
# schedule, capacity mode with the governor and no schedule.
OTHER_ROOMS = {
    "rate-scheduled": FULL_ROOM.replace(
        dynamic_rate_throttling=False, starts_at="2030-06-01T09:00:00Z"
    ),
    "capacity-governed": CHANGED_ROOM.replace(dynamic_rate_throttling=True, starts_at=""),
}


def defined(raw: dict[str, Any], settings: RoomSettings) -> RestApi:
    """The definition stacks/rest_api.py builds for the room, with the template's references."""
    api = rest_api.definition(
        settings,
        api_references(raw, settings),
        page_html=render_page(settings, channel=deploy_page_channel(settings)),
    )
    return load(api.methods, api.gateway_responses)


def test_the_rate_room_deploys_the_definition(synthesized: Synthesized) -> None:
    deployed = load_template(synthesized.raw)
    assert deployed == defined(synthesized.raw, synthesized.settings)
    assert {path: set(verbs) for path, verbs in deployed.paths().items()} == {
        path: set(verbs) for path, verbs in route_methods(Mode.RATE).items()
    }


def test_the_capacity_room_deploys_the_definition(synthesized_changed: Synthesized) -> None:
    deployed = load_template(synthesized_changed.raw)
    assert deployed == defined(synthesized_changed.raw, synthesized_changed.settings)
    assert {path: set(verbs) for path, verbs in deployed.paths().items()} == {
        path: set(verbs) for path, verbs in route_methods(Mode.CAPACITY).items()
    }


@pytest.mark.slow
@pytest.mark.parametrize("room", sorted(OTHER_ROOMS))
def test_other_rooms_deploy_the_definition(tmp_path: Path, room: str) -> None:
    settings = OTHER_ROOMS[room]
    raw = synthesize_template(tmp_path, settings)
    assert load_template(raw) == defined(raw, settings)


# -- the round trip through API Gateway's own API (moto) ---------------------------------------

ACCOUNT = "123456789012"


def concrete(value: Any) -> Any:
    """The template's references as values API Gateway accepts (a role of this account, a
    function's ARN, the partition)."""
    if isinstance(value, dict):
        return {key: concrete(item) for key, item in value.items()}
    if isinstance(value, list):
        return [concrete(item) for item in value]
    if not isinstance(value, str):
        return value
    value = value.replace("<Ref:AWS::Partition>", "aws")
    value = re.sub(r"<GetAtt:(\w*Role\w*)\.Arn>", rf"arn:aws:iam::{ACCOUNT}:role/\1", value)
    return re.sub(r"<GetAtt:(\w+)\.Arn>", rf"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:\1", value)


def optional(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def apply(client: Any, api_id: str, path: str, properties: dict[str, Any], resource: str) -> None:
    """One method as CloudFormation creates it: method, integration, method responses, then
    integration responses (each must name an existing method response)."""
    verb = properties["HttpMethod"]
    key = {"restApiId": api_id, "resourceId": resource, "httpMethod": verb}
    client.put_method(**key, authorizationType=properties["AuthorizationType"])
    integration = properties["Integration"]
    client.put_integration(
        **key,
        **optional(
            type=integration["Type"],
            integrationHttpMethod=integration.get("IntegrationHttpMethod"),
            uri=integration.get("Uri"),
            credentials=integration.get("Credentials"),
            passthroughBehavior=integration.get("PassthroughBehavior"),
            requestParameters=integration.get("RequestParameters"),
            requestTemplates=integration.get("RequestTemplates"),
        ),
    )
    for response in properties.get("MethodResponses", []):
        client.put_method_response(
            **key,
            statusCode=response["StatusCode"],
            **optional(responseParameters=response.get("ResponseParameters")),
        )
    for response in integration.get("IntegrationResponses", []):
        client.put_integration_response(
            **key,
            statusCode=response["StatusCode"],
            **optional(
                selectionPattern=response.get("SelectionPattern"),
                responseParameters=response.get("ResponseParameters"),
                responseTemplates=response.get("ResponseTemplates"),
            ),
        )


def read_back(path: str, got: dict[str, Any]) -> Method:
    """GetMethod's answer as the properties the loader takes (its maps keep API Gateway's
    one entry per status code)."""
    integration = got["methodIntegration"]
    properties = {
        "HttpMethod": got["httpMethod"],
        "Integration": optional(
            Type=integration["type"],
            IntegrationHttpMethod=integration.get("httpMethod"),
            Uri=integration.get("uri"),
            Credentials=integration.get("credentials"),
            PassthroughBehavior=integration.get("passthroughBehavior"),
            RequestParameters=integration.get("requestParameters"),
            RequestTemplates=integration.get("requestTemplates"),
            IntegrationResponses=[
                optional(
                    StatusCode=response["statusCode"],
                    SelectionPattern=response.get("selectionPattern"),
                    ResponseParameters=response.get("responseParameters"),
                    ResponseTemplates=response.get("responseTemplates"),
                )
                for response in integration.get("integrationResponses", {}).values()
            ],
        ),
        "MethodResponses": [
            optional(
                StatusCode=response["statusCode"],
                ResponseParameters=response.get("responseParameters"),
            )
            for response in got.get("methodResponses", {}).values()
        ],
    }
    return load_method(path, properties)


@pytest.fixture
def apigateway() -> Iterator[Any]:
    with mock_aws():
        yield boto3.client("apigateway", region_name="eu-west-1")


def round_trip(client: Any, raw: dict[str, Any]) -> None:
    methods, gateway = methods_of_template(raw)
    api_id = client.create_rest_api(name="room")["id"]
    root = client.get_resources(restApiId=api_id)["items"][0]["id"]
    resources: dict[str, str] = {}
    for path, _verb in methods:
        if path not in resources:
            part = path.removeprefix("/")
            resources[path] = client.create_resource(
                restApiId=api_id, parentId=root, pathPart=part
            )["id"]
    for (path, _verb), properties in methods.items():
        apply(client, api_id, path, concrete(properties), resources[path])
    for properties in gateway.values():
        client.put_gateway_response(
            restApiId=api_id,
            responseType=properties["ResponseType"],
            responseParameters=properties["ResponseParameters"],
            responseTemplates=properties["ResponseTemplates"],
        )
    for (path, verb), properties in methods.items():
        declared = concrete(properties)
        stored = read_back(
            path,
            client.get_method(restApiId=api_id, resourceId=resources[path], httpMethod=verb),
        )
        # Nothing replaced: as many integration and method responses as the template lists.
        integration = declared["Integration"]
        assert len(stored.integration.responses) == len(
            integration.get("IntegrationResponses", [])
        ), (path, verb)
        assert len(stored.method_responses) == len(declared.get("MethodResponses", [])), path
        # Nothing lost: what API Gateway stores is what the template says.
        assert stored == load_method(path, declared), (path, verb)
    stored_gateway = {
        item["responseType"]: item
        for item in client.get_gateway_responses(restApiId=api_id)["items"]
    }
    for kind, properties in gateway.items():
        assert stored_gateway[kind]["responseParameters"] == properties["ResponseParameters"]
        assert stored_gateway[kind]["responseTemplates"] == properties["ResponseTemplates"]


def test_api_gateway_keeps_every_method_of_the_rate_room(
    synthesized: Synthesized, apigateway: Any
) -> None:
    round_trip(apigateway, synthesized.raw)


def test_api_gateway_keeps_every_method_of_the_capacity_room(
    synthesized_changed: Synthesized, apigateway: Any
) -> None:
    round_trip(apigateway, synthesized_changed.raw)


def test_api_gateway_keeps_one_integration_response_per_status(apigateway: Any) -> None:
    """The defect the rules exist for, on API Gateway's own API: two integration responses
    of status 200 (the default, then a refusal's) leave one, the later."""
    api_id = apigateway.create_rest_api(name="room")["id"]
    root = apigateway.get_resources(restApiId=api_id)["items"][0]["id"]
    resource = apigateway.create_resource(restApiId=api_id, parentId=root, pathPart="client")["id"]
    client = {
        "HttpMethod": "GET",
        "AuthorizationType": "NONE",
        "Integration": {
            "Type": "MOCK",
            "RequestTemplates": {"application/json": '{"statusCode": 200}'},
            "IntegrationResponses": [
                {"StatusCode": "200", "ResponseTemplates": {"application/json": "allowed"}},
                {
                    "StatusCode": "200",
                    "SelectionPattern": "400",
                    "ResponseTemplates": {"application/json": "refused"},
                },
            ],
        },
        "MethodResponses": [{"StatusCode": "200"}],
    }
    apply(apigateway, api_id, "/client", client, resource)
    got = apigateway.get_method(restApiId=api_id, resourceId=resource, httpMethod="GET")
    stored = read_back("/client", got)
    assert load_method("/client", client) == stored
    (kept,) = stored.integration.responses.values()
    assert (kept.selection_pattern, kept.response_templates) == (
        "400",
        {"application/json": "refused"},
    )


# -- the stack refuses a broken definition ---------------------------------------------------


def test_the_stack_refuses_a_method_that_breaks_the_rules_naming_the_route() -> None:
    def broken(*args: Any, **kwargs: Any) -> rest_api.RestApiDefinition:
        definition = rest_api.definition(*args, **kwargs)
        client = definition.methods[("/client", "GET")]["Integration"]
        refusal = next(
            r for r in client["IntegrationResponses"] if r.get("SelectionPattern") == "400"
        )
        refusal["StatusCode"] = "200"
        return definition

    stack = cdk.Stack(cdk.App(), "Room", env=cdk.Environment(region="eu-west-1"))
    table = dynamodb.Table.from_table_name(stack, "Table", "beekeeper-test-room")
    producer = lambda_.Function.from_function_arn(
        stack, "Producer", f"arn:aws:lambda:eu-west-1:{ACCOUNT}:function:producer"
    )
    with pytest.raises(InvalidApi) as refused:
        RoomApi(
            stack,
            "Api",
            settings=FULL_ROOM,
            table=table,
            producer=producer,
            logging_enabled=False,
            origin_secret="a-stack-uuid",
            page_values={},
            define=broken,
        )
    message = str(refused.value)
    assert message.startswith("The room's API can not be synthesized: ")
    assert "GET /client has two integration responses with status 200" in message
