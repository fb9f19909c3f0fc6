"""The governor against moto, and every handler imported the way Lambda and local mode do."""

from __future__ import annotations

import importlib
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from beekeeper.core import names
from beekeeper.lambdas import runtime
from beekeeper.lambdas.governor import Sample, fetch_once, run_governor, sample
from beekeeper.lambdas.room_state import read_config, write_config
from tests.support.pipeline import Aws, FakeClock, room


def run(aws: Aws, clock: FakeClock, ms: float, failed: int = 0) -> str:
    calls = iter(range(100))

    def fetch(url: str, timeout: float) -> Sample:
        return Sample(ok=next(calls) >= failed, ms=ms)

    return run_governor(
        settings=room(rate=1000), table=aws.table, dynamodb=aws.dynamodb, fetch=fetch, clock=clock
    )


def test_governor_halves_recovers_and_records_every_decision(aws: Aws, clock: FakeClock) -> None:
    settings = room(rate=1000)
    assert run(aws, clock, 100.0) == "baseline"
    clock.now += 60
    assert run(aws, clock, 400.0) == "halve"
    config = read_config(aws.dynamodb, aws.table, settings)
    assert config.rate == 500 and config.operator_rate == 1000 and config.slowed
    clock.now += 60
    assert run(aws, clock, 100.0) == "raise"
    assert read_config(aws.dynamodb, aws.table, settings).rate == 625
    decision = aws.item(f"governor#{int(clock() // 60)}")
    assert decision is not None and decision["rate_after"]["N"] == "625"
    assert aws.item("governor")["state"]["S"] == "throttled"  # type: ignore[index]


def test_an_operator_rate_change_wins_and_resets_the_governor(aws: Aws, clock: FakeClock) -> None:
    settings = room(rate=1000)
    run(aws, clock, 100.0)
    clock.now += 60
    run(aws, clock, 400.0)
    write_config(aws.dynamodb, aws.table, settings, now=clock(), operator_rate=3000)
    clock.now += 60
    assert run(aws, clock, 400.0) == "baseline"  # new rate, new baseline
    assert read_config(aws.dynamodb, aws.table, settings).rate == 3000


def test_sampling_counts_timeouts_and_errors_as_degraded() -> None:
    class Slow(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/slow":
                time.sleep(0.5)
            self.send_response(500 if self.path == "/error" else 200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        assert all(s.ok for s in sample(base + "/", fetch_once, count=3, timeout=2))
        assert not any(s.ok for s in sample(base + "/error", fetch_once, count=2, timeout=2))
        assert not any(s.ok for s in sample(base + "/slow", fetch_once, count=2, timeout=0.1))
    finally:
        server.shutdown()


@pytest.fixture
def lambda_environment(aws: Aws) -> Iterator[Aws]:
    # The environment the stack gives the functions, named by the owner the stack uses.
    values = {
        **room().to_lambda_environment(),
        names.TABLE_NAME_VARIABLE: aws.table,
        names.QUEUE_URL_VARIABLE: aws.queue_url,
        names.CONSUMER_FUNCTION_VARIABLE: names.ResourceNames("shop").function("consumer"),
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
        importlib.import_module("beekeeper.lambdas.producer")._producer = None


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
