"""The REST API: routes, templates, error mapping, CORS, the page, throttling, logs, WAF."""

from __future__ import annotations

import base64
import html
import re
from typing import Any

import pytest

from beekeeper import vtl
from beekeeper.core.edge import ORIGIN_HEADER
from beekeeper.core.headers import PAGE_HEADERS, browser_origin
from beekeeper.core.routes import JWKS, RATE, STATE, templated
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS
from beekeeper.stacks import capacity, page
from beekeeper.stacks.page import deploy_page_channel
from beekeeper.vtl.methods import (
    DYNAMODB_CONTENT_TYPE,
    OTHER_ERROR_SELECTION_PATTERN,
    REFUSAL_SELECTION_PATTERN,
)
from beekeeper.waiting_room_site import render_page
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

# FULL_ROOM's origin, as a browser sends it in the Origin header.
SHOP_ORIGIN = "https://xn--bcher-kva.example.com:8443"


def test_the_shop_origin_is_the_one_owners(synthesized: Synthesized) -> None:
    assert browser_origin(synthesized.settings.origin) == SHOP_ORIGIN


def _resource_id(synthesized: Synthesized, path_part: str) -> str:
    (found,) = (
        logical_id
        for logical_id, resource in synthesized.resources("AWS::ApiGateway::Resource").items()
        if resource["Properties"]["PathPart"] == path_part
    )
    return found


def _method(synthesized: Synthesized, path_part: str, verb: str = "GET") -> dict[str, Any]:
    resource_id = _resource_id(synthesized, path_part)
    (found,) = (
        method["Properties"]
        for method in synthesized.resources("AWS::ApiGateway::Method").values()
        if method["Properties"]["ResourceId"] == {"Ref": resource_id}
        and method["Properties"]["HttpMethod"] == verb
    )
    return found


def test_api_is_regional_and_makes_no_account_wide_logging_role(synthesized: Synthesized) -> None:
    synthesized.template.has_resource_properties(
        "AWS::ApiGateway::RestApi",
        {"EndpointConfiguration": {"Types": ["REGIONAL"]}, "MinimumCompressionSize": 1024},
    )
    assert synthesized.resources("AWS::ApiGateway::Account") == {}


def test_marketing_link_is_the_producer_through_a_proxy_integration(
    synthesized: Synthesized,
) -> None:
    method = _method(synthesized, "beekeeper")
    producer_id, _ = synthesized.function("producer")
    assert method["Integration"]["Type"] == "AWS_PROXY"
    assert f"<GetAtt:{producer_id}.Arn>" in flatten(method["Integration"]["Uri"])


@pytest.mark.parametrize("route", sorted(templated(RATE)))
def test_dynamodb_routes_use_the_vtl_templates_with_the_room_values(
    synthesized: Synthesized, route: str
) -> None:
    found = templated(RATE)[route]
    request_name, response_name, action = (
        found.vtl.request_template(RATE),
        found.vtl.response_template,
        found.vtl.action,
    )
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    values = vtl.template_values(table_name=f"<Ref:{table_id}>", origin=synthesized.settings.origin)
    integration = _method(synthesized, found.relative)["Integration"]
    assert integration["Type"] == "AWS"
    assert integration["IntegrationHttpMethod"] == "POST"
    assert integration["PassthroughBehavior"] == "NEVER"
    assert flatten(integration["Uri"]).endswith(f":dynamodb:action/{action}")
    # DynamoDB gets its JSON protocol's media type, whatever the client sent.
    assert integration["RequestParameters"] == {
        "integration.request.header.Content-Type": f"'{DYNAMODB_CONTENT_TYPE}'"
    }
    assert flatten(integration["RequestTemplates"]["application/json"]) == vtl.load_template(
        request_name, values
    )
    # The default response (no selection pattern) answers 200; /client's refusals too, from
    # their own template (test_client_writes_on_a_condition_...).
    (ok,) = (r for r in integration["IntegrationResponses"] if "SelectionPattern" not in r)
    assert ok["StatusCode"] == "200"
    assert flatten(ok["ResponseTemplates"]["application/json"]) == vtl.load_template(
        response_name, values
    )
    headers = ok["ResponseParameters"]
    assert headers["method.response.header.Content-Type"] == "'application/json'"
    # Answers about a visitor are never cached; the public keys are, for the time the key
    # rotation waits before a new key signs; the shared state, the same for everyone, briefly.
    cache = {
        JWKS.name: "'public, max-age=300'",
        STATE.name: f"'public, max-age={STATE_MAX_AGE_SECONDS}'",
    }.get(route, "'no-store'")
    assert headers["method.response.header.Cache-Control"] == cache


def test_client_writes_on_a_condition_and_its_refusals_take_the_refusal_template(
    synthesized: Synthesized,
) -> None:
    """/client is an UpdateItem (a check or a one-time redeem): DynamoDB's 400 (a failed
    condition) is answered by the refusal template through an integration response of its own
    status, any other error by the static 503."""
    table_id, _ = synthesized.only("AWS::DynamoDB::Table")
    values = vtl.template_values(table_name=f"<Ref:{table_id}>", origin=synthesized.settings.origin)
    integration = _method(synthesized, "client")["Integration"]
    assert flatten(integration["Uri"]).endswith(":dynamodb:action/UpdateItem")
    by_pattern = {r.get("SelectionPattern"): r for r in integration["IntegrationResponses"]}
    assert set(by_pattern) == {None, REFUSAL_SELECTION_PATTERN, OTHER_ERROR_SELECTION_PATTERN}
    refused = by_pattern[REFUSAL_SELECTION_PATTERN]
    assert refused["StatusCode"] == "400"
    assert flatten(refused["ResponseTemplates"]["application/json"]) == vtl.load_template(
        "client-refused.vtl", values
    )
    assert by_pattern[OTHER_ERROR_SELECTION_PATTERN]["StatusCode"] == "503"


def test_client_answers_carry_cors_for_the_shop_origin_only(synthesized: Synthesized) -> None:
    method = _method(synthesized, "client")
    for response in method["Integration"]["IntegrationResponses"]:
        headers = response["ResponseParameters"]
        assert headers["method.response.header.Access-Control-Allow-Origin"] == (f"'{SHOP_ORIGIN}'")
        assert headers["method.response.header.Access-Control-Allow-Credentials"] == "'true'"
        assert headers["method.response.header.Vary"] == "'Origin'"
    polling = _method(synthesized, "polling")["Integration"]["IntegrationResponses"]
    assert not any(
        "method.response.header.Access-Control-Allow-Origin" in r["ResponseParameters"]
        for r in polling
    )


def test_client_preflight_allows_the_shop_origin_with_credentials(
    synthesized: Synthesized,
) -> None:
    method = _method(synthesized, "client", "OPTIONS")
    assert method["Integration"]["Type"] == "MOCK"
    (response,) = method["Integration"]["IntegrationResponses"]
    assert response["StatusCode"] == "204"
    headers = response["ResponseParameters"]
    assert headers["method.response.header.Access-Control-Allow-Origin"] == f"'{SHOP_ORIGIN}'"
    assert headers["method.response.header.Access-Control-Allow-Credentials"] == "'true'"
    assert "GET" in headers["method.response.header.Access-Control-Allow-Methods"]


@pytest.mark.parametrize("route", sorted(templated(RATE)))
def test_each_integration_response_has_a_status_and_a_method_response_of_its_own(
    synthesized: Synthesized, route: str
) -> None:
    """API Gateway keeps one integration response per status code (PutIntegrationResponse
    takes the status in its path): no two of a method share one, and each status has a
    method response declaring every header it maps."""
    method = _method(synthesized, templated(RATE)[route].relative)
    responses = method["Integration"]["IntegrationResponses"]
    statuses = [r["StatusCode"] for r in responses]
    assert len(statuses) == len(set(statuses))
    declared = {r["StatusCode"]: set(r["ResponseParameters"]) for r in method["MethodResponses"]}
    for response in responses:
        assert set(response["ResponseParameters"]) <= declared[response["StatusCode"]]
    error = responses[-1]  # the "unavailable" answer, after any refusal
    assert error["SelectionPattern"] and error["StatusCode"] == "503"
    assert error["ResponseParameters"]["method.response.header.Retry-After"] == "'5'"


def test_page_is_served_from_the_api_with_the_room_settings(synthesized: Synthesized) -> None:
    method = _method(synthesized, "room")
    integration = method["Integration"]
    assert integration["Type"] == "MOCK"
    (response,) = integration["IntegrationResponses"]
    assert (
        response["ResponseTemplates"]["application/json"]
        == (response["ResponseTemplates"]["text/html"])
    )
    # The page's text base64-encoded, with the push channel's endpoints and key written in by
    # CloudFormation at deploy (an Fn::Join around them).
    template = flatten(response["ResponseTemplates"]["text/html"])
    api_id, _ = synthesized.only("AWS::AppSync::Api")
    key_id, _ = synthesized.only("AWS::AppSync::ApiKey")
    values = {
        page.REALTIME_HOST: f"<GetAtt:{api_id}.Dns.Realtime>",
        page.HTTP_HOST: f"<GetAtt:{api_id}.Dns.Http>",
        page.API_KEY: f"<GetAtt:{key_id}.ApiKey>",
    }
    served = "".join(
        base64.b64decode(part).decode("utf-8") if index % 2 == 0 else part
        for index, part in enumerate(
            re.split(r'\$util\.base64Decode\("([A-Za-z0-9+/=]*)"\)', template)[1:]
        )
    )
    expected = render_page(synthesized.settings, channel=deploy_page_channel(synthesized.settings))
    for stand_in, value in values.items():
        expected = expected.replace(stand_in, value)
    assert served == expected
    assert "Test sale" in served
    api = values[page.REALTIME_HOST]
    assert html.escape("connect-src 'self' wss://") + f"{api};" in served
    assert (
        f'"channel":{{"url":"wss://{api}/event/realtime","host":"{values[page.HTTP_HOST]}",'
        f'"key":"{values[page.API_KEY]}","channel":"/room/test-room"}}'
    ) in served
    headers = response["ResponseParameters"]
    assert headers["method.response.header.Content-Type"] == "'text/html; charset=utf-8'"
    assert headers["method.response.header.X-Content-Type-Options"] == "'nosniff'"
    assert headers["method.response.header.X-Frame-Options"] == "'DENY'"
    # The page's own meta policy can not forbid framing: the header policy does.
    assert template.startswith(
        "#set($context.responseOverride.header.Content-Security-Policy"
        " = \"frame-ancestors 'none'\")"
    )
    # Every page header is the one owner's (local mode serves the same set).
    served_headers = {
        name.removeprefix("method.response.header."): value.strip("'")
        for name, value in headers.items()
    }
    served_headers |= dict(
        re.findall(r'#set\(\$context\.responseOverride\.header\.([\w-]+) = "([^"]*)"\)', template)
    )
    assert served_headers == PAGE_HEADERS


def test_stage_throttling_and_logging(synthesized: Synthesized) -> None:
    throttle = capacity.stage_throttle(synthesized.settings)
    stage_id, stage = synthesized.only("AWS::ApiGateway::Stage")
    properties = stage["Properties"]
    assert properties["StageName"] == "test-room"
    settings = {s["ResourcePath"]: s for s in properties["MethodSettings"]}
    assert settings["/*"] == {
        "DataTraceEnabled": False,
        "HttpMethod": "*",
        "LoggingLevel": "ERROR",
        "ResourcePath": "/*",
        "ThrottlingBurstLimit": throttle.burst_limit,
        "ThrottlingRateLimit": throttle.rate_limit,
    }
    assert settings["/~1beekeeper"]["ThrottlingRateLimit"] == throttle.arrivals_rate_limit
    access = properties["AccessLogSetting"]
    assert "$context.requestId" in access["Format"]
    assert "querystring" not in access["Format"].lower()
    # The execution log group exists before the stage, under API Gateway's own name.
    execution_id = next(
        logical_id
        for logical_id, group in synthesized.resources("AWS::Logs::LogGroup").items()
        if "API-Gateway-Execution-Logs_" in flatten(group["Properties"].get("LogGroupName", ""))
    )
    api_id, _ = synthesized.only("AWS::ApiGateway::RestApi")
    name = synthesized.raw["Resources"][execution_id]["Properties"]["LogGroupName"]
    assert flatten(name) == f"API-Gateway-Execution-Logs_<Ref:{api_id}>/test-room"
    assert execution_id in stage["DependsOn"]
    assert stage_id


def test_gateway_errors_are_json_uncached_and_throttles_say_when_to_retry(
    synthesized: Synthesized,
) -> None:
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in synthesized.resources("AWS::ApiGateway::GatewayResponse").values()
    }
    assert set(responses) == {"DEFAULT_4XX", "DEFAULT_5XX", "THROTTLED"}
    for response in responses.values():
        headers = response["ResponseParameters"]
        assert headers["gatewayresponse.header.Cache-Control"] == "'no-store'"
        # The shop's pages can read API Gateway's own errors too: the same origin as /client's.
        assert headers["gatewayresponse.header.Access-Control-Allow-Origin"] == f"'{SHOP_ORIGIN}'"
    assert (
        responses["THROTTLED"]["ResponseParameters"]["gatewayresponse.header.Retry-After"] == "'2'"
    )


def test_the_stage_answers_only_requests_that_came_through_the_edge(
    synthesized: Synthesized,
) -> None:
    """The origin lock: a regional web ACL on the stage that lets through exactly the requests
    carrying the edge's header with the stack's own secret, and refuses the rest with 403."""
    acl_id, acl = synthesized.only("AWS::WAFv2::WebACL")
    properties = acl["Properties"]
    assert properties["Scope"] == "REGIONAL"
    assert properties["DefaultAction"]["Block"]["CustomResponse"]["ResponseCode"] == 403
    (rule,) = properties["Rules"]
    assert rule["Action"] == {"Allow": {}}
    match = rule["Statement"]["ByteMatchStatement"]
    assert match["FieldToMatch"] == {"SingleHeader": {"Name": ORIGIN_HEADER}}
    assert match["PositionalConstraint"] == "EXACTLY"
    _, distribution = synthesized.only("AWS::CloudFront::Distribution")
    (origin,) = distribution["Properties"]["DistributionConfig"]["Origins"]
    (header,) = origin["OriginCustomHeaders"]
    assert header["HeaderName"] == ORIGIN_HEADER
    # The stack's own UUID, on both sides: fixed for the stack's life, unknown outside it.
    secret = {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}
    assert header["HeaderValue"] == secret
    assert match["SearchString"] == secret
    stage_id, _ = synthesized.only("AWS::ApiGateway::Stage")
    _, association = synthesized.only("AWS::WAFv2::WebACLAssociation")
    assert flatten(association["Properties"]["WebACLArn"]) == f"<GetAtt:{acl_id}.Arn>"
    assert f"<Ref:{stage_id}>" in flatten(association["Properties"]["ResourceArn"])
