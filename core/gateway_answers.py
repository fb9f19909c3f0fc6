"""What API Gateway itself answers for a room, defined once for the stack and local mode.

The stack configures API Gateway from these (stacks/api.py); local mode's gateway answers by
them (local/gateway.py, local/integration.py); tests/stack/test_local_parity.py holds the two
equal on a synthesized stack. Standard library only.
"""

from __future__ import annotations

import json

from beekeeper.core.headers import cors_headers
from beekeeper.core.tickets import JWKS_ROUTE

# Every route of the room's API and the methods it has. Anything else (another path, another
# method, HEAD included) is API Gateway's "Missing Authentication Token": 403.
ROUTE_METHODS: dict[str, tuple[str, ...]] = {
    "/beekeeper": ("GET",),
    "/room": ("GET",),
    "/polling": ("GET",),
    "/client": ("GET", "OPTIONS"),
    f"/{JWKS_ROUTE}": ("GET",),
}
MISSING_ROUTE_STATUS = 403
MISSING_ROUTE_MESSAGE = "Missing Authentication Token"

# The body template of API Gateway's own error answers (throttled, WAF-blocked, missing route,
# unsupported media type, a failed integration), and the headers they carry.
GATEWAY_ERROR_TEMPLATE = '{"error": $context.error.messageString}'


def gateway_error_headers(origin_url: str) -> dict[str, str]:
    """JSON that is never cached, readable by the shop's front end."""
    return {"Cache-Control": "no-store", **cors_headers(origin_url)}


def gateway_error(status: int, message: str, origin_url: str) -> tuple[int, dict[str, str], str]:
    """API Gateway's own error answer, as the template above renders it."""
    headers = {"Content-Type": "application/json", **gateway_error_headers(origin_url)}
    return status, headers, json.dumps({"error": message})


# The CORS preflight of GET /client, for the shop's pages.
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


def preflight_headers(origin_url: str) -> dict[str, str]:
    return {
        **cors_headers(origin_url),
        "Access-Control-Allow-Methods": "GET",
        "Access-Control-Allow-Headers": ",".join(PREFLIGHT_ALLOWED_HEADERS),
        "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE_SECONDS),
    }
