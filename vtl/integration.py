"""What the stack configures around the routes' templates, and local mode obeys.

API Gateway chooses an integration response by DynamoDB's status code: 2xx takes the route's
response template (answer 200), 4xx/5xx a static "unavailable" answer (503, Retry-After).
The routes that write on a condition (/client in both modes; capacity mode's /leave) take
their route's refusal template for DynamoDB's 400 (a failed condition, or throttling), which
answers the visitor ({"allow": false}, {"allow": false, "state": "redeemed"}, {"left":
false}), a malformed redeem with 400, or throttling with 503. /enter always redirects (302)
to the shop. `integration_settings(route, ...)` describes those responses and their headers
for the CDK stack; local mode's `run_integration` (beekeeper.local.integration) answers by the
same table, so the two can not drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from beekeeper.core.gateway_answers import CORS_ROUTES
from beekeeper.core.headers import JSON_ANSWER_HEADERS, JWKS_HEADERS, cors_headers
from beekeeper.core.tickets import JWKS_ROUTE
from beekeeper.vtl import (
    ERROR_STATUS,
    REFUSAL_TEMPLATES,
    load_template,
    routes,
    template_values,
)

# The integration response for DynamoDB errors: DynamoDB's status code is matched against
# this pattern (API Gateway's selectionPattern); everything else takes the default (200).
ERROR_SELECTION_PATTERN = r"[45]\d{2}"
# Routes with a refusal template split DynamoDB's errors: 400 is a refusal (the template
# decides), any other 4xx/5xx is "unavailable". The patterns do not overlap.
REFUSAL_SELECTION_PATTERN = "400"
OTHER_ERROR_SELECTION_PATTERN = r"4(0[1-9]|[1-9]\d)|5\d{2}"
# /enter sends the visitor on to the shop whatever DynamoDB answered.
REDIRECT_STATUS = 302
REDIRECT_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
ERROR_RETRY_AFTER_SECONDS = 5
# Static bodies for that integration response: the room could not read its table. Never
# caused by client input (the templates only ever send well-formed requests).
ERROR_BODIES: dict[str, str] = {
    "polling": json.dumps(
        {"allow": False, "state": "unavailable", "poll_after": ERROR_RETRY_AFTER_SECONDS}
    ),
    "client": json.dumps({"allow": False}),
    "leave": json.dumps({"left": False}),
    # Not an empty key set: a shop's cache must keep the keys it has.
    JWKS_ROUTE: json.dumps({"message": "the room's keys can not be read right now"}),
}
# The request Content-Types each route has a request template for (anything else: 415).
# /leave takes what a page's sendBeacon and a shop's server send; its body is never read.
REQUEST_CONTENT_TYPES: dict[str, tuple[str, ...]] = {
    "leave": ("application/json", "text/plain", "application/x-www-form-urlencoded"),
}


def request_content_types(route: str) -> tuple[str, ...]:
    return REQUEST_CONTENT_TYPES.get(route, ("application/json",))


def response_headers(route: str, origin: str) -> dict[str, str]:
    """The headers every answer of `route` carries (success and error alike); /client's let
    the shop's pages read it."""
    if route == JWKS_ROUTE:
        return dict(JWKS_HEADERS)
    headers = dict(JSON_ANSWER_HEADERS)
    if route in CORS_ROUTES:
        headers |= cors_headers(origin)
    return headers


def error_headers(route: str, origin: str) -> dict[str, str]:
    """The headers of the "unavailable" answer: never cached."""
    headers = response_headers(route, origin) | dict(JSON_ANSWER_HEADERS)
    return headers | {"Retry-After": str(ERROR_RETRY_AFTER_SECONDS)}


@dataclass(frozen=True)
class IntegrationResponseSetting:
    """One integration response, in the terms the CDK's IntegrationResponse takes."""

    selection_pattern: str | None  # None: the default response
    status_code: int
    response_template: str  # the template's text (rendered by API Gateway) or a static body
    header_values: Mapping[str, str]  # header name -> value (CloudFormation wants "'value'")
    # Headers the template sets itself ($context.responseOverride.header.<Name>): the method
    # response declares them.
    overridden_headers: tuple[str, ...] = ()


def integration_settings(
    route: str, *, table_name: str, origin: str, session_seconds: int = 0
) -> tuple[IntegrationResponseSetting, ...]:
    """The integration responses the stack must configure for `route`, in order.

    `session_seconds` > 0: a capacity-mode room's route (vtl.template_values)."""
    capacity = session_seconds > 0
    _request_name, response_name, _action = routes(capacity=capacity)[route]
    values = template_values(table_name=table_name, origin=origin, session_seconds=session_seconds)
    answer = load_template(response_name, values)
    if route == "enter":
        return tuple(
            IntegrationResponseSetting(
                pattern, REDIRECT_STATUS, answer, REDIRECT_HEADERS, overridden_headers=("Location",)
            )
            for pattern in (None, ERROR_SELECTION_PATTERN)
        )
    success = IntegrationResponseSetting(None, 200, answer, response_headers(route, origin))
    unavailable = (ERROR_STATUS, ERROR_BODIES[route], error_headers(route, origin))
    if route in REFUSAL_TEMPLATES:
        refused = load_template(REFUSAL_TEMPLATES[route], values)
        return (
            success,
            IntegrationResponseSetting(
                REFUSAL_SELECTION_PATTERN, 200, refused, response_headers(route, origin)
            ),
            IntegrationResponseSetting(OTHER_ERROR_SELECTION_PATTERN, *unavailable),
        )
    return (success, IntegrationResponseSetting(ERROR_SELECTION_PATTERN, *unavailable))


__all__ = [
    "ERROR_BODIES",
    "ERROR_RETRY_AFTER_SECONDS",
    "ERROR_SELECTION_PATTERN",
    "ERROR_STATUS",
    "OTHER_ERROR_SELECTION_PATTERN",
    "REDIRECT_HEADERS",
    "REDIRECT_STATUS",
    "REFUSAL_SELECTION_PATTERN",
    "REQUEST_CONTENT_TYPES",
    "IntegrationResponseSetting",
    "error_headers",
    "integration_settings",
    "request_content_types",
    "response_headers",
]
