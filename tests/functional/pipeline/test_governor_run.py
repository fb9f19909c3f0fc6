"""The governor's run against moto (table items, the operator's precedence) and its HTTP samples
against loopback servers (what counts as failed, and why)."""

from __future__ import annotations

import itertools
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from statistics import NormalDist
from typing import Any

import pytest

from beekeeper.core.datamodel import STATE_KEY
from beekeeper.core.shared_state import parse_history
from beekeeper.room.governor import (
    BASELINE,
    BASELINE_CHECKS,
    BASELINE_PENDING,
    HALVE,
    SAMPLES,
    SUPERSEDED,
    run_governor,
)
from beekeeper.room.governor_records import (
    RECENT_DECISIONS,
    Decision,
    GovernorState,
    recent_decisions,
)
from beekeeper.room.governor_sampling import REDIRECT_FAILURE, TIMEOUT, Sample, fetch_once
from beekeeper.room.room_state import read_config, reset_governor, write_config
from tests.support.pipeline import Aws, FakeClock, room


def shop(median: float, failed: int = 0) -> Callable[[str, float], Sample]:
    """A fetch answering like a shop: lognormal latencies, the first `failed` of a check 502s."""
    normal = NormalDist()
    values = [median * math.exp(0.3 * normal.inv_cdf((i + 0.5) / SAMPLES)) for i in range(SAMPLES)]
    calls = itertools.count()
    lock = threading.Lock()

    def fetch(url: str, timeout: float) -> Sample:
        assert url == "https://shop.example.com/sale" and timeout == 5.0
        with lock:
            n = next(calls)
        if n < failed:
            return Sample(False, values[n], "HTTP 502")
        return Sample(True, values[n % SAMPLES])

    return fetch


def run(aws: Aws, clock: FakeClock, fetch: Callable[[str, float], Sample], **kw: Any) -> Decision:
    decision = run_governor(
        settings=room(rate=1000, dynamic_rate_throttling=True),
        table=aws.table,
        dynamodb=kw.get("dynamodb", aws.dynamodb),
        fetch=fetch,
        clock=clock,
        sleep=clock.sleep,
        pauses=clock.pauses(),
        push=kw.get("push"),
    )
    clock.now = (clock.now // 60 + 1) * 60  # the next minute's run
    return decision


def logged(aws: Aws) -> list[Decision]:
    return recent_decisions(aws.item("governor-log"))


def test_a_baseline_then_a_halving_written_to_the_table_with_every_decision(
    aws: Aws, clock: FakeClock
) -> None:
    settings = room(rate=1000)
    for _ in range(BASELINE_CHECKS):
        assert run(aws, clock, shop(100.0)).decision == BASELINE
    # 60 samples spread over the first half of the minute: a start every half second.
    assert clock.slept[: SAMPLES - 1] == [0.5] * (SAMPLES - 1)
    state = GovernorState.from_item(aws.item("governor"))
    assert state is not None and state.baseline is not None and state.state == "passing"
    assert run(aws, clock, shop(100.0, failed=3)).decision == "pass"  # logged, not acted on
    decision_time = clock.now
    decision = run(aws, clock, shop(100.0, failed=6))
    assert (decision.decision, decision.rate_before, decision.rate_after) == (HALVE, 1000, 500)
    config = read_config(aws.dynamodb, aws.table, settings)
    assert (config.rate, config.operator_rate, config.slowed) == (500, 1000, True)
    assert aws.item("governor")["state"]["S"] == "throttled"  # type: ignore[index]
    history = logged(aws)
    assert [d.decision for d in history] == [BASELINE] * BASELINE_CHECKS + ["pass", HALVE]
    assert history[-1].reason == "6 of 60 samples failed (degraded at 6): HTTP 502 x6"
    assert history[-1].errors == 6 and history[-1].median_ms == pytest.approx(102, abs=3)
    assert history[-2].reason == "healthy; 3 failed, below the 6 that count"
    # The waiting pages learn the halved rate from the shared state at once (its next copy).
    state_copy: Any = aws.item(STATE_KEY)
    assert state_copy["rate"]["N"] == "500" and state_copy["slowed"]["BOOL"] is True
    *_, newest = parse_history(state_copy["history"]["S"])
    # Published at the decision, once the check's samples were taken.
    assert newest.flow == 500 and decision_time * 1000 < newest.at_ms < (decision_time + 60) * 1000


def test_the_log_keeps_the_last_ten_decisions_across_an_operator_reset(
    aws: Aws, clock: FakeClock
) -> None:
    for _ in range(RECENT_DECISIONS + 2):
        run(aws, clock, shop(100.0))
    settings = room(rate=1000)
    write_config(aws.dynamodb, aws.table, settings, now=clock(), operator_rate=3000)
    reset_governor(aws.dynamodb, aws.table)  # what `beekeeper rate` does
    decision = run(aws, clock, shop(100.0))
    assert (decision.decision, decision.rate_after) == (BASELINE, 3000)
    assert decision.reason == f"taking a baseline: 1 of {BASELINE_CHECKS} healthy checks"
    history = logged(aws)
    assert len(history) == RECENT_DECISIONS and history[-1] == decision


def test_a_url_that_never_answers_2xx_is_one_clear_log_line(
    aws: Aws, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    def redirect_loop(url: str, timeout: float) -> Sample:
        return Sample(False, 4.0, f"HTTP 302: {REDIRECT_FAILURE}")

    with caplog.at_level(logging.INFO, logger="beekeeper.governor"):
        decision = run(aws, clock, redirect_loop)
    assert decision.decision == BASELINE_PENDING and decision.rate_after == 1000
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "governor of https://shop.example.com/sale: baseline-pending, rate 1,000: no baseline "
        f"can be taken: all 60 samples failed (HTTP 302: {REDIRECT_FAILURE} x60); point "
        "health_check_url (or the origin) at a page that answers 2xx, redirects followed "
        "(errors 60/60)"
    )


class OperatorActsFirst:
    """moto's DynamoDB client, with the operator's `rate` landing just before the governor's
    conditional write of its own rate."""

    def __init__(self, dynamodb: Any) -> None:
        self._dynamodb = dynamodb

    def update_item(self, **request: Any) -> Any:
        if "ConditionExpression" in request:
            write_config(self._dynamodb, request["TableName"], room(), now=0, operator_rate=700)
        return self._dynamodb.update_item(**request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dynamodb, name)


def test_an_operator_change_made_meanwhile_wins(aws: Aws, clock: FakeClock) -> None:
    for _ in range(BASELINE_CHECKS):
        run(aws, clock, shop(100.0))
    decision = run(aws, clock, shop(100.0, failed=30), dynamodb=OperatorActsFirst(aws.dynamodb))
    assert decision.decision == SUPERSEDED
    config = read_config(aws.dynamodb, aws.table, room())
    assert (config.rate, config.operator_rate) == (700, 700)
    assert [d.decision for d in logged(aws)] == [BASELINE] * BASELINE_CHECKS  # not recorded


# -- HTTP samples ------------------------------------------------------------------------------


class Shop(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(0.5)
        if self.path in ("/loop", "/moved"):
            self.send_response(302)
            self.send_header("Location", "/loop" if self.path == "/loop" else "/")
            self.end_headers()
            return
        self.send_response(503 if self.path == "/busy" else 200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a sample that timed out closed its end: writing to it fails, as expected


@pytest.fixture
def loopback_shop() -> Iterator[str]:
    server = QuietServer(("127.0.0.1", 0), Shop)
    # shutdown() waits for the loop's next look at its flag: every 50 ms, not the default 0.5 s.
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("path", "failure"),
    [
        ("/", ""),
        ("/moved", ""),  # redirects are followed; the page they reach is what counts
        ("/busy", "HTTP 503"),
        ("/loop", f"HTTP 302: {REDIRECT_FAILURE}"),
        ("/slow", TIMEOUT),
    ],
)
def test_what_a_sample_counts_as_failed(loopback_shop: str, path: str, failure: str) -> None:
    got = fetch_once(loopback_shop + path, 0.2)
    assert (got.ok, got.failure) == (not failure, failure)
    assert got.ms > 0


def test_a_closed_port_is_connection_refused() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    got = fetch_once(f"http://127.0.0.1:{port}/", 1.0)
    assert (got.ok, got.failure) == (False, "connection refused")
