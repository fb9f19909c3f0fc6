"""`beekeeper report local` after a rehearsal: a local room's functions write their metrics into
its own CloudWatch in its shortened minutes, and the report reads them through the operator
endpoint as it reads a deployed room's."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from beekeeper.charts.event_data import LOCAL_REQUESTS
from tests.support.html_page import Page, fetches_nothing
from tests.support.localroom.http import get
from tests.support.localroom.process import LocalProcess, operator, start_local, wait_until
from tests.support.localroom.visitor import join, polling

pytestmark = pytest.mark.slow

MINUTE_SECONDS = 2
RATE = 10  # a room minute: 10 visitors in 2 s, so 30 make a line of three minutes


@pytest.fixture()
def room(tmp_path: Path) -> Iterator[LocalProcess]:
    started = start_local(
        # 35 visitors: a place costs little work here.
        [
            "--demo",
            "--rate",
            str(RATE),
            "--minute-seconds",
            str(MINUTE_SECONDS),
            "--join-work",
            "20",
        ],
        tmp_path,
        "local",
    )
    yield started
    if started.process.poll() is None:
        started.interrupt()


def allowed(room: LocalProcess, token: str) -> bool:
    return bool(get(f"{room.urls['client check URL']}?token={token}").json()["allow"])


def test_a_rehearsal_is_reported_from_the_rooms_own_metrics(
    room: LocalProcess, tmp_path: Path
) -> None:
    # The first burst joins at once (eight at a time), so a line builds up in the room's
    # first minutes however slow each join is on a busy machine.
    with ThreadPoolExecutor(8) as pool:
        first = list(pool.map(lambda _: join(room), range(24)))
    time.sleep(2 * MINUTE_SECONDS)
    # A later visitor: the producer writes the first burst's minute when it next answers.
    later = [join(room) for _ in range(6)]
    tokens = first + later
    assert wait_until(lambda: all(allowed(room, t) for t in tokens), timeout=60)
    time.sleep(MINUTE_SECONDS + 0.5)  # the last consumer's run has ended and written its line

    out = tmp_path / "rehearsal.html"
    started = time.monotonic()
    result = operator(room.config_dir, "report", "local", "--out", str(out), "--json")
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["local"] is True and data["window"] == "last event"
    assert data["minute_seconds"] == MINUTE_SECONDS  # the room's own minutes
    assert sum(data["admitted_per_minute"]) == 30
    # A minute admits its rate, and a lane may carry one batch of unused slots into it.
    assert max(data["admitted_per_minute"]) <= RATE + 10
    assert sum(a or 0 for a in data["arrivals_per_minute"]) >= 24
    assert set(r for r in data["rate_per_minute"] if r is not None) == {RATE}
    assert max(w or 0 for w in data["waiting_per_minute"]) >= RATE  # a line built up
    waits = data["waits"]
    assert waits["timed"] == 30 and sum(waits["counts"]) == 30
    # 30 visitors at 10 a room minute (and a batch of 10 carried): the last waited a minute
    # or more.
    assert 0 <= waits["p50"] <= waits["p90"] <= waits["p99"] <= waits["longest"]
    assert waits["longest"] >= MINUTE_SECONDS
    # Its edge and origin are in its own process: one sentence says where they are counted,
    # none says the room has no edge.
    assert [n for n in data["notes"] if "request" in n] == [LOCAL_REQUESTS + "."]

    document = out.read_text(encoding="utf-8")
    assert fetches_nothing(document) == []
    assert {"per-minute", "waiting", "waits"} <= set(Page(document).ids())
    assert "were let in, at 10 a minute" in document
    print(f"local report: {len(document.encode()):,} bytes in {took:.1f} s")


def test_a_local_room_is_reset_for_its_next_event(room: LocalProcess) -> None:
    admitted = [join(room) for _ in range(5)]
    assert wait_until(lambda: all(allowed(room, t) for t in admitted), timeout=30)
    keys_before = get(room.urls["JWKS URL"]).json()
    assert operator(room.config_dir, "off", "local").returncode == 0

    refused = operator(room.config_dir, "reset", "local")  # no answer given: nothing happens
    assert refused.returncode == 1
    assert all(allowed(room, t) for t in admitted)
    started = time.monotonic()
    reset = operator(room.config_dir, "reset", "local", "--yes")
    assert reset.returncode == 0, reset.stderr
    assert time.monotonic() - started < 30  # the local store purges at once: no minute's wait
    assert "Room local (local) is off. A reset empties it for the next event:" in reset.stderr
    assert "the admissions: 5 let in since the last reset" in reset.stderr
    assert reset.stdout.startswith("Room local is reset: the line purged, ")

    # Tickets issued before the reset no longer redeem; the keys that signed them stay.
    assert not any(allowed(room, t) for t in admitted)
    assert get(room.urls["JWKS URL"]).json() == keys_before
    status = json.loads(operator(room.config_dir, "status", "local", "--json").stdout)
    assert (status["arrivals_total"], status["admitted_total"], status["waiting"]) == (0, 0, 0)
    assert status["rate"] == RATE and status["enabled"] is False

    # The next event: places count from one again, and visitors are let in.
    assert operator(room.config_dir, "on", "local").returncode == 0
    newcomer = join(room)
    # Its place is the first of the new line (the reset's ordinals are never given again, so
    # the token's own number is above them): admitted already, or waiting at place 1.
    answer = polling(room, newcomer)
    assert answer["allow"] is True or answer.get("position") == 1, answer
    assert wait_until(lambda: allowed(room, newcomer), timeout=30)
