"""The REST API as API Gateway stores it (beekeeper.apigateway.model): a method's integration
responses and method responses kept by status code, and the rules the stack is held to."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from beekeeper.apigateway.http import HttpRequest
from beekeeper.apigateway.model import InvalidApi, check, load, method_problems
from beekeeper.apigateway.runtime import invoke
from beekeeper.core.gateway_answers import gateway_responses
from beekeeper.core.routes import CAPACITY, RATE, templated
from beekeeper.stacks.rest_api import definition, local_references
from beekeeper.vtl.methods import route_method
from tests.support.stack_testkit import CHANGED_ROOM, FULL_ROOM

ORIGIN = "https://shop.example"
REFS = local_references("beekeeper-test")
TOKEN = "A" * 22 + ".7"
NOW_MS = 1_763_780_000_000


def method_of(name: str, mode: Any = RATE) -> dict[str, Any]:
    found = templated(mode)[name]
    return route_method(
        found,
        mode=mode,
        table_name=REFS.table_name,
        origin=ORIGIN,
        session_seconds=900 if mode == CAPACITY else 0,
        credentials=REFS.integration_role_arn,
        region=REFS.region,
        partition=REFS.partition,
    )


def defective_client() -> dict[str, Any]:
    """/client as the stack once deployed it: the refusal (selection pattern 400) answered
    with status 200, like the default."""
    method = method_of("client")
    responses = method["Integration"]["IntegrationResponses"]
    refusal = next(r for r in responses if r.get("SelectionPattern") == "400")
    refusal["StatusCode"] = "200"
    method["MethodResponses"] = [r for r in method["MethodResponses"] if r["StatusCode"] != "400"]
    return method


class DynamoDbAnswers:
    """A DynamoDbTarget (our own interface) that answers with one status and body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.answer = (status, json.dumps(body))
        self.requests: list[tuple[str, str]] = []

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        self.requests.append((action, body))
        return self.answer


def ask(method: dict[str, Any], target: DynamoDbAnswers, path: str = "/client") -> Any:
    api = load({(path, method["HttpMethod"]): method}, gateway_responses(ORIGIN), validate=False)
    found = api.method(path, method["HttpMethod"])
    assert found is not None
    request = HttpRequest(method["HttpMethod"], path, {"token": TOKEN}, {})
    return invoke(api, found, request, dynamodb=target, request_time_ms=NOW_MS)


def test_a_later_integration_response_of_one_status_replaces_the_earlier() -> None:
    api = load({("/client", "GET"): defective_client()}, validate=False)
    method = api.method("/client", "GET")
    assert method is not None
    # Three in the list, two kept: the refusal (pattern 400) replaced the default.
    assert sorted(method.integration.responses) == ["200", "503"]
    assert method.integration.responses["200"].selection_pattern == "400"


def test_the_defective_client_answers_500_to_an_admitted_visitor_as_api_gateway_did() -> None:
    target = DynamoDbAnswers(200, {"Attributes": {}})
    answer = ask(defective_client(), target)
    # DynamoDB's 200 matches no pattern and no default is left: API Gateway's 500 (its
    # DEFAULT_5XX gateway response), although the write happened.
    assert len(target.requests) == 1
    assert (answer.status, json.loads(answer.body)) == (500, {"error": "Internal server error"})
    # The method as the stack defines it now answers the same DynamoDB 200 with allow.
    fixed = ask(method_of("client"), DynamoDbAnswers(200, {"Attributes": {}}))
    assert (fixed.status, json.loads(fixed.body)) == (200, {"allow": True})


def test_the_defective_enter_answers_500_as_api_gateway_did() -> None:
    method = method_of("enter", CAPACITY)
    (default,) = method["Integration"]["IntegrationResponses"]
    method["Integration"]["IntegrationResponses"].append(
        {**copy.deepcopy(default), "SelectionPattern": r"[45]\d{2}"}
    )
    answer = ask(method, DynamoDbAnswers(200, {"Attributes": {}}), "/enter")
    assert answer.status == 500
    fixed = ask(method_of("enter", CAPACITY), DynamoDbAnswers(200, {"Attributes": {}}), "/enter")
    assert fixed.status == 302 and fixed.headers["Location"].startswith(ORIGIN)


def test_the_stack_definition_keeps_every_rule_in_both_modes() -> None:
    for settings in (FULL_ROOM, CHANGED_ROOM):
        api = definition(settings, REFS, page_html="<!doctype html><title>t</title>")
        check(api.methods, api.gateway_responses)
        for key, method in api.methods.items():
            responses = method["Integration"].get("IntegrationResponses", [])
            assert len({r["StatusCode"] for r in responses}) == len(responses), key


def test_two_integration_responses_of_one_status_are_refused_naming_the_route() -> None:
    with pytest.raises(InvalidApi) as refused:
        check({("/client", "GET"): defective_client()})
    assert "GET /client has two integration responses with status 200" in str(refused.value)


def problems(mutate: Any, name: str = "client") -> list[str]:
    method = method_of(name)
    mutate(method)
    return method_problems(f"/{name}", method)


def test_a_status_without_a_method_response_is_refused() -> None:
    def drop_503(method: dict[str, Any]) -> None:
        method["MethodResponses"] = [
            r for r in method["MethodResponses"] if r["StatusCode"] != "503"
        ]

    found = problems(drop_503)
    assert any(
        p.startswith("GET /client: integration response 503 has no method response 503")
        for p in found
    )
    # The refusal template's throttled answer (503) loses its method response too.
    assert any("sets status 503, which has no method response" in p for p in found)


def test_a_header_the_method_response_does_not_declare_is_refused() -> None:
    def undeclare(method: dict[str, Any]) -> None:
        for response in method["MethodResponses"]:
            response["ResponseParameters"].pop("method.response.header.Vary")

    found = problems(undeclare)
    assert (
        "GET /client: integration response 200 maps header Vary, which method response 200 "
        "does not declare"
    ) in found


def test_a_header_a_template_sets_must_be_declared() -> None:
    def undeclare_location(method: dict[str, Any]) -> None:
        (response,) = method["MethodResponses"]
        response["ResponseParameters"].pop("method.response.header.Location")

    method = method_of("enter", CAPACITY)
    undeclare_location(method)
    (found,) = method_problems("/enter", method)
    assert "sets header Location, which method response 302 does not declare" in found


def test_a_status_a_template_sets_needs_a_method_response() -> None:
    def drop_200_keep_default(method: dict[str, Any]) -> None:
        # The refusal template says 200 for a refusal: without a method response for 200 the
        # rule names it.
        responses = method["Integration"]["IntegrationResponses"]
        method["Integration"]["IntegrationResponses"] = responses[1:]
        method["MethodResponses"] = [
            r for r in method["MethodResponses"] if r["StatusCode"] != "200"
        ]

    assert any(
        "sets status 200, which has no method response" in p
        for p in problems(drop_200_keep_default)
    )


def test_a_status_written_as_a_variable_can_not_be_checked() -> None:
    def variable_status(method: dict[str, Any]) -> None:
        responses = method["Integration"]["IntegrationResponses"]
        responses[0]["ResponseTemplates"]["application/json"] += (
            "#set($context.responseOverride.status = $status)"
        )

    assert any("write the status as a number" in p for p in problems(variable_status))


def test_overlapping_selection_patterns_are_refused() -> None:
    def overlap(method: dict[str, Any]) -> None:
        method["Integration"]["IntegrationResponses"][-1]["SelectionPattern"] = r"[45]\d{2}"

    (found,) = problems(overlap)
    assert "status 400 matches the selection patterns of integration responses 400 and 503" in found


def test_dynamodb_must_get_its_own_content_type() -> None:
    def forward_the_clients(method: dict[str, Any]) -> None:
        method["Integration"].pop("RequestParameters")

    (found,) = problems(forward_the_clients, "polling")
    assert found.startswith("GET /polling: the dynamodb integration must send Content-Type")


def test_gateway_responses_are_kept_by_type() -> None:
    api = load({}, gateway_responses(ORIGIN))
    assert sorted(api.gateway_responses) == ["DEFAULT_4XX", "DEFAULT_5XX", "THROTTLED"]
    throttled = api.gateway_responses["THROTTLED"]
    assert throttled.response_parameters["gatewayresponse.header.Retry-After"] == "'2'"
