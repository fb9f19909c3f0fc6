"""A room's templated route answered as API Gateway answers it: the route's method as the
stack defines it (beekeeper.vtl.methods), loaded as API Gateway stores it and run by the
emulation. For the simulator (capacity mode's crowd) and the tests; local mode's gateway loads
the room's whole API the same way (beekeeper.local.gateway)."""

from __future__ import annotations

import functools
from typing import Any

from beekeeper.apigateway.dynamodb import Boto3DynamoDb, DynamoDbTarget
from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import RestApi, load
from beekeeper.apigateway.runtime import MISSING_ROUTE, gateway_response, invoke
from beekeeper.core.gateway_answers import gateway_responses
from beekeeper.core.local_room import LOCAL_INTEGRATION_ROLE, LOCAL_PARTITION, LOCAL_REGION
from beekeeper.core.presence import NO_PRESENCE, Presence
from beekeeper.core.routes import route as named
from beekeeper.core.routes import templated
from beekeeper.core.settings import Mode
from beekeeper.vtl.methods import preflight_method, route_method


@functools.lru_cache(maxsize=32)
def route_api(
    route: str,
    table_name: str,
    origin: str,
    mode: Mode = Mode.RATE,
    session_seconds: int = 0,
    presence: Presence = NO_PRESENCE,
) -> RestApi:
    """The API of one templated route (its preflight too) and the room's gateway responses,
    as API Gateway stores them; once per room: the same template strings keep the renderer's
    cache of parsed templates a dictionary hit."""
    found = templated(mode)[route]
    methods: dict[tuple[str, str], dict[str, Any]] = {
        (found.path, found.method): route_method(
            found,
            mode=mode,
            table_name=table_name,
            origin=origin,
            session_seconds=session_seconds,
            presence=presence,
            credentials=LOCAL_INTEGRATION_ROLE,
            region=LOCAL_REGION,
            partition=LOCAL_PARTITION,
        )
    }
    if found.cors:
        methods[(found.path, "OPTIONS")] = preflight_method(found, origin)
    return load(methods, gateway_responses(origin))


def run_integration(
    route: str,
    request: HttpRequest,
    *,
    dynamodb: DynamoDbTarget,
    table_name: str,
    origin: str,
    request_time_ms: int,
    request_id: str = "local",
    mode: Mode = Mode.RATE,
    session_seconds: int = 0,
    presence: Presence = NO_PRESENCE,
) -> HttpResponse:
    """Answer `request` on the templated route named `route` (core/routes.py) as API Gateway
    would; in a room of `mode` (capacity mode with its `session_seconds`, vtl.template_values)
    with the room's `presence` settings (capacity mode's leave is the producer's:
    room/leaving.py). `dynamodb` receives the rendered request (`Boto3DynamoDb(client)` for
    boto3).

    Raises UnsupportedVtl when a template steps outside what the renderer can render
    faithfully: that is a bug to fix, not an answer to give."""
    api = route_api(route, table_name, origin, mode, session_seconds, presence)
    method = api.method(named(route).path, request.method.upper())
    if method is None:
        return gateway_response(api, *MISSING_ROUTE)
    return invoke(
        api,
        method,
        request,
        dynamodb=dynamodb,
        request_time_ms=request_time_ms,
        request_id=request_id,
    )


__all__ = [
    "Boto3DynamoDb",
    "DynamoDbTarget",
    "HttpRequest",
    "HttpResponse",
    "route_api",
    "run_integration",
]
