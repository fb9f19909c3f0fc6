"""Every handler imported as Lambda and local mode do (governor runs: test_governor_run)."""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from pipeline_support import Aws, room

from beekeeper.lambdas import runtime


@pytest.fixture
def lambda_environment(aws: Aws) -> Iterator[Aws]:
    values = {
        **room().to_lambda_environment(),
        "TABLE_NAME": aws.table,
        "QUEUE_URL": aws.queue_url,
        "CONSUMER_FUNCTION_NAME": "beekeeper-shop-consumer",
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
    producer._producer = None
    response = producer.handler({"httpMethod": "GET", "path": "/beekeeper", "headers": {}}, None)
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
    assert result["claimed"] and result["quotas"] == [1]
    assert invoked[0]["quota"] == 1

    consumer = importlib.import_module("beekeeper.lambdas.consumer")
    assert consumer.handler({"minute": 1}, None)["admitted"] == 0  # refused, logged

    governor = importlib.import_module("beekeeper.lambdas.governor")
    assert governor.handler({}, None) == {"decision": "disabled"}
    assert aws.item("status#0") is not None


def test_producer_handler_talks_to_an_emulator_through_aws_endpoint_url() -> None:
    """What local mode does: import the handler with AWS_ENDPOINT_URL set to a moto server."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    try:
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint)
        dynamodb.create_table(
            TableName="local-room",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        sqs = boto3.client("sqs", endpoint_url=endpoint)
        queue_url = sqs.create_queue(QueueName="local-room")["QueueUrl"]
        values = {
            **room(origin="http://127.0.0.1:9000/").to_lambda_environment(),
            "TABLE_NAME": "local-room",
            "QUEUE_URL": queue_url,
            "AWS_ENDPOINT_URL": endpoint,
        }
        saved = {k: os.environ.get(k) for k in values}
        os.environ.update(values)
        runtime.reset_for_tests()
        producer = importlib.import_module("beekeeper.lambdas.producer")
        producer._producer = None
        try:
            response = producer.handler(
                {
                    "httpMethod": "GET",
                    "path": "/beekeeper",
                    "headers": {"Host": f"127.0.0.1:{port}", "X-Forwarded-Proto": "http"},
                    "requestContext": {"path": "/beekeeper"},
                },
                None,
            )
        finally:
            producer._producer = None
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            runtime.reset_for_tests()
        cookie = response["headers"]["Set-Cookie"]
        assert "Secure" not in cookie and "Path=/;" in cookie
        body = sqs.receive_message(QueueUrl=queue_url)["Messages"][0]["Body"]
        assert cookie.startswith(f"beekeeper_token={body};")
    finally:
        server.stop()
