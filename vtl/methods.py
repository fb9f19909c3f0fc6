"""The templated routes' API Gateway methods, in CloudFormation's own shape.

`route_method(...)` turns one templated route of the route table (beekeeper.core.routes)
into the properties of an AWS::ApiGateway::Method (RestApiId and ResourceId aside): an AWS
integration with DynamoDB, its request templates by Content-Type, its integration responses
and its method responses. The stack deploys exactly these (stacks/rest_api.py, stacks/api.py);
local mode and the simulator load the very same properties into their API Gateway
(beekeeper.apigateway), so the two can not drift apart. Pure functions, no CDK.

Integration responses are keyed by status code in API Gateway (PutIntegrationResponse takes
the status in its path; GetMethod returns them as a map), so each has a status of its own:

- the default (no selection pattern) -> 200 with the route's response template;
- a route that writes on a condition (`refusal_template`): DynamoDB's 400 -> 400 with the
  refusal template, which sets the status the visitor sees ($context.responseOverride.status:
  200 for a refusal, 400 for a malformed redeem, 503 for throttling: each a status with a
  method response of its own); any other 4xx/5xx -> 503 with the static "unavailable" body
  and Retry-After;
- any other route: DynamoDB's 4xx/5xx -> 503 "unavailable";
- a redirect (/enter): the default alone (it catches every status) -> 302, the template setting
  Location.

Every integration response's status has a method response declaring each header it maps and
each header its template sets (beekeeper.apigateway.model checks that at synth).
"""

from __future__ import annotations

from typing import Any

from beekeeper.core.gateway_answers import PREFLIGHT_STATUS, preflight_headers
from beekeeper.core.headers import JSON_ANSWER_HEADERS, JWKS_HEADERS, cors_headers
from beekeeper.core.presence import NO_PRESENCE, Presence
from beekeeper.core.routes import ERROR_RETRY_AFTER_SECONDS, Route
from beekeeper.core.settings import Mode
from beekeeper.vtl import ERROR_STATUS, load_template, template_values

JSON = "application/json"
# DynamoDB's 4xx/5xx, matched against its status code (API Gateway's selectionPattern for an
# AWS integration; the default response catches whatever no pattern matches).
ERROR_SELECTION_PATTERN = r"[45]\d{2}"
# A route with a refusal template splits DynamoDB's errors: 400 is a refusal (the template
# decides), any other 4xx/5xx is "unavailable". The patterns do not overlap.
REFUSAL_SELECTION_PATTERN = "400"
OTHER_ERROR_SELECTION_PATTERN = r"4(0[1-9]|[1-9]\d)|5\d{2}"
# The integration response of DynamoDB's 400 on a refusal route; its template overrides it.
REFUSAL_STATUS = 400
SUCCESS_STATUS = 200
# /enter sends the visitor on to the shop whatever DynamoDB answered.
REDIRECT_STATUS = 302
REDIRECT_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
# What API Gateway sends DynamoDB: its JSON protocol's media type, set as an integration
# request header (as AWS's tutorials set Kinesis's), so no Content-Type a client sends (a
# beacon's text/plain, a form) reaches DynamoDB. DynamoDB's API reference:
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.LowLevelAPI.html
DYNAMODB_CONTENT_TYPE = "application/x-amz-json-1.0"


def response_headers(route: Route, origin: str) -> dict[str, str]:
    """The headers every answer of `route` carries (success and refusal alike); the CORS
    routes' let the shop's pages read them."""
    if route.templates().public_cache:
        return dict(JWKS_HEADERS)
    if route.edge.seconds:
        # The same for everyone: the edge and browsers keep it that long (its EdgeRule).
        return {
            "Content-Type": JSON_ANSWER_HEADERS["Content-Type"],
            "Cache-Control": f"public, max-age={route.edge.seconds}",
        }
    headers = dict(JSON_ANSWER_HEADERS)
    if route.cors:
        headers |= cors_headers(origin)
    return headers


def error_headers(route: Route, origin: str) -> dict[str, str]:
    """The headers of the "unavailable" answer: never cached, with when to ask again."""
    headers = response_headers(route, origin) | dict(JSON_ANSWER_HEADERS)
    return headers | {"Retry-After": str(ERROR_RETRY_AFTER_SECONDS)}


def dynamodb_uri(action: str, *, region: str, partition: str) -> str:
    """The AWS integration's URI for a DynamoDB action (API Gateway's action-based form)."""
    return f"arn:{partition}:apigateway:{region}:dynamodb:action/{action}"


def static_headers(headers: dict[str, str]) -> dict[str, str]:
    """Header mappings with static values, as API Gateway writes them: 'value'."""
    return {f"method.response.header.{name}": f"'{value}'" for name, value in headers.items()}


def declared_headers(*names: str) -> dict[str, bool]:
    """A method response's header declarations (not required: False is never used here)."""
    return {f"method.response.header.{name}": True for name in names}


def _integration_response(
    status: int, template: str, headers: dict[str, str], pattern: str | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "StatusCode": str(status),
        "ResponseParameters": static_headers(headers),
        "ResponseTemplates": {JSON: template},
    }
    if pattern is not None:
        response["SelectionPattern"] = pattern
    return response


def route_method(
    route: Route,
    *,
    mode: Mode,
    table_name: str,
    origin: str,
    session_seconds: int,
    credentials: str,
    region: str,
    partition: str,
    presence: Presence = NO_PRESENCE,
) -> dict[str, Any]:
    """The AWS::ApiGateway::Method properties of `route` in a room of `mode`.

    `table_name`, `credentials` (the integration role's ARN), `region` and `partition` are
    CloudFormation tokens in the stack and plain names locally; `session_seconds` is a
    capacity-mode room's session length (0 in rate mode) and `presence` its presence settings
    (vtl.template_values)."""
    vtl = route.templates()
    values = template_values(
        table_name=table_name,
        origin=origin,
        mode=mode,
        session_seconds=session_seconds,
        presence=presence,
    )
    request = load_template(vtl.request_template(mode), values)
    answer = load_template(vtl.response_template, values)
    if vtl.redirect:
        responses = [_integration_response(REDIRECT_STATUS, answer, REDIRECT_HEADERS)]
        declared = {REDIRECT_STATUS: declared_headers(*REDIRECT_HEADERS, "Location")}
    else:
        if vtl.error_body is None:
            raise ValueError(f"route {route.name} needs an error body or a redirect")
        headers = response_headers(route, origin)
        unavailable = error_headers(route, origin)
        responses = [_integration_response(SUCCESS_STATUS, answer, headers)]
        declared = {SUCCESS_STATUS: declared_headers(*headers)}
        error_pattern = ERROR_SELECTION_PATTERN
        if vtl.refusal_template is not None:
            refused = load_template(vtl.refusal_template, values)
            responses.append(
                _integration_response(REFUSAL_STATUS, refused, headers, REFUSAL_SELECTION_PATTERN)
            )
            declared[REFUSAL_STATUS] = declared_headers(*headers)
            error_pattern = OTHER_ERROR_SELECTION_PATTERN
        responses.append(
            _integration_response(ERROR_STATUS, vtl.error_body, unavailable, error_pattern)
        )
        declared[ERROR_STATUS] = declared_headers(*unavailable)
    return {
        "HttpMethod": route.method,
        "AuthorizationType": "NONE",
        "Integration": {
            "Type": "AWS",
            "IntegrationHttpMethod": "POST",
            "Uri": dynamodb_uri(vtl.action, region=region, partition=partition),
            "Credentials": credentials,
            # Never forward a request the templates do not shape: a Content-Type without a
            # request template gets 415, not a raw body sent to DynamoDB.
            "PassthroughBehavior": "NEVER",
            "RequestParameters": {
                "integration.request.header.Content-Type": f"'{DYNAMODB_CONTENT_TYPE}'"
            },
            "RequestTemplates": dict.fromkeys(vtl.request_content_types, request),
            "IntegrationResponses": responses,
        },
        "MethodResponses": [
            {"StatusCode": str(status), "ResponseParameters": parameters}
            for status, parameters in declared.items()
        ],
    }


def preflight_method(route: Route, origin: str) -> dict[str, Any]:
    """OPTIONS: the CORS preflight the shop's pages may send to a templated route."""
    return preflight_for(route.method, origin)


def preflight_for(method: str, origin: str) -> dict[str, Any]:
    """OPTIONS: the CORS preflight of a route answering `method` (a templated route, or a
    producer's route), answered by API Gateway itself (a MOCK integration)."""
    headers = preflight_headers(origin, method)
    return {
        "HttpMethod": "OPTIONS",
        "AuthorizationType": "NONE",
        "Integration": {
            "Type": "MOCK",
            "PassthroughBehavior": "NEVER",
            "RequestTemplates": {JSON: f'{{"statusCode": {PREFLIGHT_STATUS}}}'},
            "IntegrationResponses": [
                {"StatusCode": str(PREFLIGHT_STATUS), "ResponseParameters": static_headers(headers)}
            ],
        },
        "MethodResponses": [
            {
                "StatusCode": str(PREFLIGHT_STATUS),
                "ResponseParameters": declared_headers(*headers),
            }
        ],
    }


__all__ = [
    "DYNAMODB_CONTENT_TYPE",
    "ERROR_SELECTION_PATTERN",
    "OTHER_ERROR_SELECTION_PATTERN",
    "REDIRECT_HEADERS",
    "REDIRECT_STATUS",
    "REFUSAL_SELECTION_PATTERN",
    "REFUSAL_STATUS",
    "declared_headers",
    "dynamodb_uri",
    "error_headers",
    "preflight_for",
    "preflight_method",
    "response_headers",
    "route_method",
    "static_headers",
]
