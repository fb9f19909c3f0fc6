"""The mapping templates that turn DynamoDB errors into the visitor's JSON answers.

Rendered with airspeed (Velocity in Python) and a small double of API Gateway's $input; the
template uses only #set, #if and String.contains, which behave the same in Java's Velocity.
"""

from __future__ import annotations

import json
from typing import Any

import airspeed
import pytest

from beekeeper.stacks.api import DYNAMODB_4XX_TEMPLATE, DYNAMODB_5XX_TEMPLATE


class _Input:
    """$input for an integration response: path('$.field') reads the DynamoDB error body."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body

    def path(self, expression: str) -> Any:
        assert expression.startswith("$.")
        return self._body.get(expression[2:], "")


def _render(template: str, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    override: dict[str, Any] = {"status": None, "header": {}}
    text = airspeed.Template(template).merge(
        {"input": _Input(body), "context": {"responseOverride": override}}
    )
    return json.loads(text), override


@pytest.mark.parametrize(
    "error_type",
    [
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "com.amazonaws.dynamodb.v20120810#ThrottlingException",
        "com.amazonaws.dynamodb.v20120810#RequestLimitExceeded",
    ],
)
def test_a_dynamodb_throttle_is_a_503_with_retry_after(error_type: str) -> None:
    body, override = _render(DYNAMODB_4XX_TEMPLATE, {"__type": error_type, "message": "slow"})
    assert body == {"error": "busy", "retry_after": 2}
    assert override == {"status": 503, "header": {"Retry-After": "2"}}


@pytest.mark.parametrize(
    "error_type",
    [
        "com.amazon.coral.validate#ValidationException",
        "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
        "com.amazon.coral.service#AccessDeniedException",
        "",
    ],
)
def test_any_other_dynamodb_4xx_is_a_plain_500_without_details(error_type: str) -> None:
    body, override = _render(
        DYNAMODB_4XX_TEMPLATE, {"__type": error_type, "message": "table beekeeper-x secret"}
    )
    assert body == {"error": "internal"}
    assert override == {"status": None, "header": {}}  # the integration response's 500 stands


def test_a_dynamodb_5xx_asks_to_retry() -> None:
    assert json.loads(DYNAMODB_5XX_TEMPLATE) == {"error": "unavailable", "retry_after": 2}
