"""One request to a DynamoDB-backed route run the way API Gateway runs it, against a DynamoDB.

Used by local mode and the tests (with moto); never by the stack. The steps are API Gateway's
for a REST API method with an AWS (non-proxy) integration to DynamoDB:

1. method request: only the route's method is routed (GET; POST for /leave); a Content-Type
   the route has no request template for is refused with 415 (passthrough behaviour NEVER);
2. the request template is rendered; a Velocity runtime failure is a 500;
3. the rendered text is sent as the DynamoDB action's JSON body (to a `DynamoDbTarget`: a boto3
   client in tests, the room's store in local mode); DynamoDB refuses a body that is not
   valid JSON or not a valid request with a 400;
4. the integration response is chosen by DynamoDB's status code, by the selection patterns of
   `beekeeper.vtl.integration.integration_settings` (no pattern matching: the default), and
   its template is rendered; overrides the template sets ($context.responseOverride) win;
5. the method response carries the integration response's headers.

Steps 4 and 5 follow `integration_settings`, the table the CDK stack configures, so the
stack and this module can not drift apart.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import formatdate
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError, ParamValidationError

from beekeeper.core.gateway_answers import (
    MISSING_ROUTE_MESSAGE,
    MISSING_ROUTE_STATUS,
    gateway_error,
    route_method,
)
from beekeeper.local.velocity import RenderInput, VelocityRuntimeError, render, render_response
from beekeeper.vtl import load_template, routes, template_values
from beekeeper.vtl.integration import (
    IntegrationResponseSetting,
    integration_settings,
    request_content_types,
)


@dataclass(frozen=True)
class HttpRequest:
    """What API Gateway received. Query values are already URL-decoded."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: str


def _gateway_error(status: int, message: str, origin: str) -> HttpResponse:
    """API Gateway's own error answer (core/gateway_answers.py)."""
    code, headers, body = gateway_error(status, message, origin)
    return HttpResponse(code, headers, body)


class DynamoDbTarget(Protocol):
    """Where the integration's requests go, as API Gateway sends them: the action and the
    rendered JSON body in, DynamoDB's HTTP status code and JSON body out."""

    def __call__(self, action: str, body: str) -> tuple[int, str]: ...


_ACTIONS = {"BatchGetItem": "batch_get_item", "GetItem": "get_item", "UpdateItem": "update_item"}
# How DynamoDB names an error in its JSON body's __type.
ERROR_TYPE_PREFIX = "com.amazonaws.dynamodb.v20120810#"


class Boto3DynamoDb:
    """A boto3 DynamoDB client (moto's in tests) as the integration's target."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        try:
            request = json.loads(body)
        except ValueError:
            return 400, json.dumps({"__type": "SerializationException"})
        if not isinstance(request, dict):
            return 400, json.dumps({"__type": "SerializationException"})
        try:
            answer = getattr(self._client, _ACTIONS[action])(**request)
        except ParamValidationError as error:
            return 400, json.dumps({"__type": "ValidationException", "message": str(error)})
        except ClientError as error:
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 500)
            code = error.response.get("Error", {}).get("Code", "")
            message = error.response.get("Error", {}).get("Message", "")
            answer = {"__type": ERROR_TYPE_PREFIX + code, "message": message}
            # A failed condition's item (ReturnValuesOnConditionCheckFailure ALL_OLD) travels
            # in DynamoDB's error body beside the type, as botocore parsed it out.
            if "Item" in error.response:
                answer["Item"] = error.response["Item"]
            return int(status), json.dumps(answer)
        answer = {key: value for key, value in answer.items() if key != "ResponseMetadata"}
        return 200, json.dumps(answer)


class IntegrationRunner(Protocol):
    """`run_integration`'s shape: what local mode's gateway calls for /polling and /client."""

    def __call__(
        self,
        route: str,
        request: Any,
        *,
        dynamodb: DynamoDbTarget,
        table_name: str,
        origin: str,
        request_time_ms: int,
        request_id: str = "local",
        session_seconds: int = 0,
    ) -> Any: ...


@functools.lru_cache(maxsize=32)
def _route_templates(
    route: str, table_name: str, origin: str, session_seconds: int
) -> tuple[str, tuple[IntegrationResponseSetting, ...]]:
    """The route's request template filled in and its integration responses, once per room:
    local mode answers every poll with them, and the same string objects keep the renderer's
    cache of parsed templates a dictionary hit."""
    request_name, _response_name, _action = routes(capacity=session_seconds > 0)[route]
    values = template_values(table_name=table_name, origin=origin, session_seconds=session_seconds)
    responses = integration_settings(
        route, table_name=table_name, origin=origin, session_seconds=session_seconds
    )
    return load_template(request_name, values), responses


def _chosen(
    responses: tuple[IntegrationResponseSetting, ...], status: int
) -> IntegrationResponseSetting:
    """The integration response API Gateway takes for DynamoDB's `status`."""
    for response in responses:
        pattern = response.selection_pattern
        if pattern is not None and re.fullmatch(pattern, str(status)):
            return response
    return next(response for response in responses if response.selection_pattern is None)


def _context(
    request: HttpRequest, route: str, request_time_ms: int, request_id: str
) -> dict[str, Any]:
    return {
        "requestTimeEpoch": request_time_ms,
        "requestTime": formatdate(request_time_ms / 1000, usegmt=True),
        "requestId": request_id,
        "httpMethod": request.method,
        "resourcePath": f"/{route}",
        "path": request.path,
        "stage": "local",
        "identity": {"sourceIp": "127.0.0.1", "userAgent": _header(request, "user-agent")},
    }


def _header(request: HttpRequest, name: str) -> str:
    for key, value in request.headers.items():
        if key.lower() == name:
            return value
    return ""


def run_integration(
    route: str,
    request: HttpRequest,
    *,
    dynamodb: DynamoDbTarget,
    table_name: str,
    origin: str,
    request_time_ms: int,
    request_id: str = "local",
    session_seconds: int = 0,
) -> HttpResponse:
    """Answer `request` on `route` as API Gateway would: 'polling' or 'client', and in a
    capacity-mode room (`session_seconds` > 0, vtl.template_values) also 'enter' and 'leave'.

    `dynamodb` receives the rendered request: `Boto3DynamoDb(client)` for a boto3 client.

    Raises UnsupportedVtl when a template steps outside what the renderer can render
    faithfully: that is a bug to fix, not an answer to give.
    """
    action = routes(capacity=session_seconds > 0)[route][2]
    if request.method.upper() != route_method(route):
        return _gateway_error(MISSING_ROUTE_STATUS, MISSING_ROUTE_MESSAGE, origin)
    content_type = _header(request, "content-type").split(";")[0].strip().lower()
    if content_type and content_type not in request_content_types(route):
        return _gateway_error(415, "Unsupported Media Type", origin)

    request_template, responses = _route_templates(route, table_name, origin, session_seconds)
    data = RenderInput(
        query=dict(request.query),
        headers=dict(request.headers),
        context=_context(request, route, request_time_ms, request_id),
    )
    try:
        rendered = render(request_template, data)
    except VelocityRuntimeError:
        return _gateway_error(500, "Internal server error", origin)
    try:
        status, body = dynamodb(action, rendered)
    except BotoCoreError:
        return _gateway_error(500, "Internal server error", origin)

    chosen = _chosen(responses, status)
    response_data = RenderInput(
        body=body, query=data.query, headers=data.headers, context=data.context
    )
    try:
        answer = render_response(chosen.response_template, response_data)
    except VelocityRuntimeError:
        return _gateway_error(500, "Internal server error", origin)
    headers = {**chosen.header_values, **answer.headers}
    return HttpResponse(answer.status or chosen.status_code, headers, answer.text)


__all__ = [
    "Boto3DynamoDb",
    "DynamoDbTarget",
    "HttpRequest",
    "HttpResponse",
    "IntegrationRunner",
    "run_integration",
]
