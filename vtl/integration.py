"""What the stack configures around the /polling and /client templates, and local mode obeys.

API Gateway chooses an integration response by DynamoDB's status code: 2xx takes the route's
response template (answer 200), 4xx/5xx a static "unavailable" answer (503, Retry-After).
`integration_settings(route, ...)` describes those responses and their headers for the CDK
stack; local mode's `run_integration` (beekeeper.local.integration) answers by the same table,
so the two can not drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from beekeeper.core.headers import JSON_ANSWER_HEADERS, JWKS_HEADERS, cors_headers
from beekeeper.core.tickets import JWKS_ROUTE
from beekeeper.vtl import ROUTES, load_template, template_values

# The integration response for DynamoDB errors: DynamoDB's status code is matched against
# this pattern (API Gateway's selectionPattern); everything else takes the default (200).
ERROR_SELECTION_PATTERN = r"[45]\d{2}"
ERROR_STATUS = 503
ERROR_RETRY_AFTER_SECONDS = 5
# Static bodies for that integration response: the room could not read its table. Never
# caused by client input (the templates only ever send well-formed requests).
ERROR_BODIES: dict[str, str] = {
    "polling": json.dumps(
        {"allow": False, "state": "unavailable", "poll_after": ERROR_RETRY_AFTER_SECONDS}
    ),
    "client": json.dumps({"allow": False}),
    # Not an empty key set: a shop's cache must keep the keys it has.
    JWKS_ROUTE: json.dumps({"message": "the room's keys can not be read right now"}),
}


def response_headers(route: str, origin: str) -> dict[str, str]:
    """The headers every answer of `route` carries (success and error alike); /client's let
    the shop's pages read it."""
    if route == JWKS_ROUTE:
        return dict(JWKS_HEADERS)
    headers = dict(JSON_ANSWER_HEADERS)
    if route == "client":
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


def integration_settings(
    route: str, *, table_name: str, origin: str
) -> tuple[IntegrationResponseSetting, ...]:
    """The integration responses the stack must configure for `route`, in order."""
    _request_name, response_name, _action = ROUTES[route]
    values = template_values(table_name=table_name, origin=origin)
    return (
        IntegrationResponseSetting(
            None, 200, load_template(response_name, values), response_headers(route, origin)
        ),
        IntegrationResponseSetting(
            ERROR_SELECTION_PATTERN, ERROR_STATUS, ERROR_BODIES[route], error_headers(route, origin)
        ),
    )


__all__ = [
    "ERROR_BODIES",
    "ERROR_RETRY_AFTER_SECONDS",
    "ERROR_SELECTION_PATTERN",
    "ERROR_STATUS",
    "IntegrationResponseSetting",
    "error_headers",
    "integration_settings",
    "response_headers",
]
