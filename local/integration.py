"""One /polling or /client request run the way API Gateway runs it, against a DynamoDB.

Used by local mode and the tests (with moto); never by the stack. The steps are API Gateway's
for a REST API method with an AWS (non-proxy) integration to DynamoDB:

1. method request: only GET is routed; a Content-Type other than application/json finds no
   request template and is refused with 415 (passthrough behaviour NEVER);
2. the request template is rendered; a Velocity runtime failure is a 500;
3. the rendered text is sent as the DynamoDB action's JSON body (to a `DynamoDbTarget`: a boto3
   client in tests, the room's store in local mode); DynamoDB refuses a body that
   is not valid JSON or not a valid request with a 400;
4. the integration response is chosen by DynamoDB's status code: 2xx takes the route's
   response template (answer 200), 4xx/5xx the static "unavailable" answer (503);
5. the method response carries the headers of `response_headers(route, origin)`.

Steps 4 and 5 follow `beekeeper.vtl.integration`, the table the CDK stack configures, so the
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
)
from beekeeper.local.velocity import RenderInput, VelocityRuntimeError, render
from beekeeper.vtl import ROUTES, load_template, template_values
from beekeeper.vtl.integration import (
    ERROR_BODIES,
    ERROR_SELECTION_PATTERN,
    ERROR_STATUS,
    error_headers,
    response_headers,
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


_ACTIONS = {"BatchGetItem": "batch_get_item", "GetItem": "get_item"}


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
            return int(status), json.dumps({"__type": code})
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
    ) -> Any: ...


@functools.lru_cache(maxsize=32)
def _route_templates(route: str, table_name: str, origin: str) -> tuple[str, str]:
    """The route's request and response templates filled in, once per room: local mode
    answers every poll with them, and the same string object keeps the renderer's cache of
    parsed templates a dictionary hit."""
    request_name, response_name, _action = ROUTES[route]
    values = template_values(table_name=table_name, origin=origin)
    return load_template(request_name, values), load_template(response_name, values)


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
) -> HttpResponse:
    """Answer `request` on `route` ('polling' or 'client') as API Gateway would.

    `dynamodb` receives the rendered request: `Boto3DynamoDb(client)` for a boto3 client.

    Raises UnsupportedVtl when a template steps outside what the renderer can render
    faithfully: that is a bug to fix, not an answer to give.
    """
    action = ROUTES[route][2]
    headers = response_headers(route, origin)
    if request.method.upper() != "GET":
        return _gateway_error(MISSING_ROUTE_STATUS, MISSING_ROUTE_MESSAGE, origin)
    content_type = _header(request, "content-type").split(";")[0].strip().lower()
    if content_type not in ("", "application/json"):
        return _gateway_error(415, "Unsupported Media Type", origin)

    request_template, response_template = _route_templates(route, table_name, origin)
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

    if re.fullmatch(ERROR_SELECTION_PATTERN, str(status)):
        return HttpResponse(ERROR_STATUS, error_headers(route, origin), ERROR_BODIES[route])
    response_data = RenderInput(
        body=body, query=data.query, headers=data.headers, context=data.context
    )
    try:
        answer = render(response_template, response_data)
    except VelocityRuntimeError:
        return _gateway_error(500, "Internal server error", origin)
    return HttpResponse(200, headers, answer)


__all__ = [
    "Boto3DynamoDb",
    "DynamoDbTarget",
    "HttpRequest",
    "HttpResponse",
    "IntegrationRunner",
    "run_integration",
]
