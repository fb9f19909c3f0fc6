"""Every handler imported as Lambda does, from its environment (governor runs:
test_governor_run)."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from beekeeper.core import names
from beekeeper.core.join_work import Challenge, solve
from beekeeper.lambdas import runtime
from tests.support.pipeline import Aws, room


@pytest.fixture
def lambda_environment(aws: Aws) -> Iterator[Aws]:
    # The environment the stack gives the functions, named by the owner the stack uses.
    values = {
        **room().to_lambda_environment(),
        names.TABLE_NAME_VARIABLE: aws.table,
        names.QUEUE_URL_VARIABLE: aws.queue_url,
        names.CONSUMER_FUNCTION_VARIABLE: names.ResourceNames("shop").function("consumer"),
        names.JOIN_SECRET_VARIABLE: aws.join_secret,
    }
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    runtime.reset_for_tests()
    try:
        yield aws
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        runtime.reset_for_tests()


def test_handlers_run_from_the_environment(lambda_environment: Aws) -> None:
    aws = lambda_environment
    producer = importlib.import_module("beekeeper.lambdas.producer")
    # The room's default join_work: the link asks for work first, then gives the place.
    bare = producer.handler({"httpMethod": "GET", "path": "/beekeeper", "headers": {}}, None)
    location = bare["headers"]["Location"]
    assert bare["statusCode"] == 302 and location.startswith("work#")
    challenge = Challenge.parse(location.removeprefix("work#"))
    assert challenge is not None
    solved = {"work": str(solve(challenge))}
    response = producer.handler(
        {"httpMethod": "GET", "path": "/beekeeper", "headers": {}, "queryStringParameters": solved},
        None,
    )
    assert response["statusCode"] == 302 and "Set-Cookie" in response["headers"]

    trigger = importlib.import_module("beekeeper.lambdas.trigger")
    invoked: list[dict[str, Any]] = []
    real_client = runtime.client

    class Lambda:
        def invoke(self, **kwargs: Any) -> None:
            invoked.append(json.loads(kwargs["Payload"]))
            assert kwargs["InvocationType"] == "Event"

    runtime.client = lambda name: Lambda() if name == "lambda" else real_client(name)  # type: ignore[assignment]
    try:
        result = trigger.handler({"source": "aws.events"}, None)
    finally:
        runtime.client = real_client  # type: ignore[assignment]
    assert result["claimed"] and result["consumers"] == 1
    assert invoked[0]["consumers"] == 1 and invoked[0]["index"] == 0

    consumer = importlib.import_module("beekeeper.lambdas.consumer")
    assert consumer.handler({"minute": 1}, None)["admitted"] == 0  # refused, logged

    governor = importlib.import_module("beekeeper.lambdas.governor")
    assert governor.handler({}, None) == {"decision": "disabled"}
    assert aws.item("status#0") is not None
