"""What API Gateway itself answers for a room, defined once for the stack and local mode.

The stack configures API Gateway from these (stacks/rest_api.py, stacks/api.py); local mode's
gateway is built from the same definition (beekeeper.apigateway); tests/stack/test_local_parity.py
holds the two equal on a synthesized stack. The templated routes themselves are the registry's
(core/routes.py). Standard library only.
"""

from __future__ import annotations

from typing import Any

from beekeeper.core.headers import cors_headers
from beekeeper.core.presence import SCRIPT_ROUTE
from beekeeper.core.routes import (
    CAPACITY,
    LEAVE_METHOD,
    LEAVE_ROUTE,
    REGISTRY,
    Mode,
    route,
    routes,
)

# The routes answered by a Lambda or a static page rather than a template; a capacity-mode room
# also serves the presence script (core/presence.py).
OTHER_ROUTES = ("beekeeper", "room", "work")
CAPACITY_OTHER_ROUTES = (SCRIPT_ROUTE,)
# Routes the shop's own pages may call with the visitor's cookie: CORS for the origin only, and
# an OPTIONS preflight (the registry's `cors` routes, and /leave).
CORS_ROUTES = (*(found.name for found in REGISTRY if found.cors), LEAVE_ROUTE)


def route_method(name: str) -> str:
    """The method a route answers (its preflight aside): the registry's, or /leave's."""
    return LEAVE_METHOD if name == LEAVE_ROUTE else route(name).method


def route_methods(mode: Mode) -> dict[str, tuple[str, ...]]:
    """Every path of a room's API in `mode` and the methods it has. Anything else (another
    path, another method, HEAD included) is API Gateway's "Missing Authentication Token": 403."""
    others = OTHER_ROUTES + (CAPACITY_OTHER_ROUTES if mode == CAPACITY else ())
    methods: dict[str, tuple[str, ...]] = {f"/{name}": ("GET",) for name in others}
    for found in routes(mode).values():
        preflight = ("OPTIONS",) if found.cors else ()
        methods[f"/{found.name}"] = (found.method, *preflight)
    if mode == CAPACITY:
        methods[f"/{LEAVE_ROUTE}"] = (LEAVE_METHOD, "OPTIONS")
    return methods


# Seconds a client should wait after API Gateway itself throttles it.
THROTTLED_RETRY_AFTER_SECONDS = 2

# The body template of API Gateway's own error answers (throttled, WAF-blocked, missing route,
# unsupported media type, a failed integration), and the headers they carry.
GATEWAY_ERROR_TEMPLATE = '{"error": $context.error.messageString}'


def gateway_error_headers(origin_url: str) -> dict[str, str]:
    """JSON that is never cached, readable by the shop's front end."""
    return {"Cache-Control": "no-store", **cors_headers(origin_url)}


def gateway_responses(origin_url: str) -> dict[str, dict[str, Any]]:
    """The room's gateway responses as CloudFormation's AWS::ApiGateway::GatewayResponse
    properties (RestApiId aside), by response type: what the stack deploys and local mode's
    gateway answers by. A type without its own (a missing route's 403, a 415) takes
    DEFAULT_4XX's or DEFAULT_5XX's, with its own status code."""
    headers = gateway_error_headers(origin_url)
    throttled = {**headers, "Retry-After": str(THROTTLED_RETRY_AFTER_SECONDS)}
    return {
        kind: {
            "ResponseType": kind,
            "ResponseParameters": {
                f"gatewayresponse.header.{name}": f"'{value}'" for name, value in carried.items()
            },
            "ResponseTemplates": {"application/json": GATEWAY_ERROR_TEMPLATE},
        }
        for kind, carried in (
            ("DEFAULT_4XX", headers),
            ("DEFAULT_5XX", headers),
            ("THROTTLED", throttled),
        )
    }


# The CORS preflight of the CORS_ROUTES, for the shop's pages.
PREFLIGHT_STATUS = 204
PREFLIGHT_MAX_AGE_SECONDS = 600
PREFLIGHT_ALLOWED_HEADERS = (
    "Content-Type",
    "X-Amz-Date",
    "Authorization",
    "X-Api-Key",
    "X-Amz-Security-Token",
    "X-Amz-User-Agent",
)


def preflight_headers(origin_url: str, method: str = "GET") -> dict[str, str]:
    """What the preflight of a route answering `method` carries."""
    return {
        **cors_headers(origin_url),
        "Access-Control-Allow-Methods": method,
        "Access-Control-Allow-Headers": ",".join(PREFLIGHT_ALLOWED_HEADERS),
        "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_SECONDS),
    }
