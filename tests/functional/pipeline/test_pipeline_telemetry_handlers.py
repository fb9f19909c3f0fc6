"""The handlers as Lambda runs them: metrics on stdout and INFO lines that name the room."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from beekeeper.core import telemetry
from beekeeper.lambdas import log_context, runtime, trigger
from tests.support.pipeline import Aws, room


@pytest.fixture
def handler_environment(aws: Aws, monkeypatch: pytest.MonkeyPatch) -> Iterator[Aws]:
    values = {
        **room().to_lambda_environment(),
        "TABLE_NAME": aws.table,
        "QUEUE_URL": aws.queue_url,
        "CONSUMER_FUNCTION_NAME": "beekeeper-shop-consumer",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(runtime.IN_LAMBDA_VARIABLE, raising=False)
    runtime.reset_for_tests()
    yield aws
    runtime.reset_for_tests()
    log_context.uninstall()


def test_in_lambda_the_trigger_prints_one_metric_line_and_logs_the_room(
    handler_environment: Aws,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(runtime.IN_LAMBDA_VARIABLE, "beekeeper-shop-trigger")
    caplog.set_level(logging.INFO, logger="beekeeper")
    result = trigger.handler({"source": "aws.events"}, None)
    assert result["claimed"]

    (line,) = capsys.readouterr().out.splitlines()
    document = json.loads(line)
    (directive,) = document["_aws"]["CloudWatchMetrics"]
    assert directive["Namespace"] == telemetry.METRIC_NAMESPACE
    assert directive["Dimensions"] == [[telemetry.ROOM_DIMENSION]]
    assert document[telemetry.ROOM_DIMENSION] == "shop"
    assert {m["Name"] for m in directive["Metrics"]} == {
        "Rate",
        "OperatorRate",
        "Backlog",
        "Planned",
    }
    assert document["Rate"] == room().rate and document["Backlog"] == 0

    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert infos, "the trigger tells its minute's story at INFO"
    for record in infos:
        assert getattr(record, "room", None) == "shop"
        assert f"minute {result['minute']}" in record.getMessage()


def test_outside_lambda_no_metric_line_is_printed(
    handler_environment: Aws, capsys: pytest.CaptureFixture[str]
) -> None:
    assert runtime.metrics() is not None
    trigger.handler({"source": "aws.events"}, None)
    assert capsys.readouterr().out == ""
