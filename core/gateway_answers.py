"""What API Gateway itself answers for a room, defined once for the stack and local mode.

The stack configures API Gateway from these (stacks/api.py); local mode's gateway answers by
them (local/gateway.py, local/integration.py); tests/stack/test_local_parity.py holds the two
equal on a synthesized stack. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from beekeeper.core.headers import cors_headers
from beekeeper.core.tickets import JWKS_ROUTE

# The method each templated route answers (vtl.ROUTES, vtl.CAPACITY_ROUTES), GET unless named:
# /leave is a POST, so that a page's sendBeacon and a shop's server can call it.
TEMPLATE_ROUTE_METHODS: dict[str, str] = {"leave": "POST"}
# Routes the shop's own pages may call with the visitor's cookie: CORS for the origin only, and
# an OPTIONS preflight.
CORS_ROUTES = ("client", "leave")
# The routes answered by a Lambda or a static page rather than a template.
OTHER_ROUTES = ("beekeeper", "room")


def route_method(route: str) -> str:
    """The method a templated route answers (its preflight aside)."""
    return TEMPLATE_ROUTE_METHODS.get(route, "GET")


def route_methods(template_routes: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Every path of a room's API and the methods it has, given its templated routes.
    Anything else (another path, another method, HEAD included) is API Gateway's "Missing
    Authentication Token": 403."""
    methods: dict[str, tuple[str, ...]] = {f"/{route}": ("GET",) for route in OTHER_ROUTES}
    for route in template_routes:
        preflight = ("OPTIONS",) if route in CORS_ROUTES else ()
        methods[f"/{route}"] = (route_method(route), *preflight)
    return methods


# A rate-mode room's (vtl.ROUTES).
ROUTE_METHODS = route_methods(("polling", "client", JWKS_ROUTE))
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
