"""What API Gateway itself answers for a room, defined once for the stack and local mode.

The stack configures API Gateway from these (stacks/rest_api.py, stacks/api.py); local mode's
gateway is built from the same definition (beekeeper.apigateway); tests/stack/test_local_parity.py
holds the two equal on a synthesized stack. The paths themselves are the route table's
(core/routes.py). Standard library only.
"""

from __future__ import annotations

from typing import Any

from beekeeper.core.headers import cors_headers
from beekeeper.core.routes import TABLE, Mode, Route, served


def route_methods(mode: Mode, table: tuple[Route, ...] = TABLE) -> dict[str, tuple[str, ...]]:
    """Every path of a room's API in `mode` (core/routes.py) and the methods it has, the
    preflight of a CORS route included. Anything else (another path, another method, HEAD
    included) is API Gateway's "Missing Authentication Token": 403."""
    return {found.path: found.api_methods for found in served(mode, table)}


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


# The CORS preflight of the routes the shop's pages call (a route's `cors`).
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
