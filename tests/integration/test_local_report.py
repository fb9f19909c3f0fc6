"""`beekeeper report local` after a rehearsal: a local room's functions write their metrics into
its own CloudWatch in its shortened minutes, and the report reads them through the operator
endpoint as it reads a deployed room's."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from beekeeper.charts.event_data import LOCAL_REQUESTS
from tests.support.html_page import Page, fetches_nothing
from tests.support.localroom.http import get
from tests.support.localroom.process import LocalProcess, operator, start_local, wait_until
from tests.support.localroom.visitor import join, polling

pytestmark = pytest.mark.slow

MINUTE_SECONDS = 2
RATE = 10  # a room minute: 10 visitors in 2 s, so 24 joining at once make a line
FEWEST_JOINS = 24
MOST_JOINS = 120


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


def report(room: LocalProcess, *args: str) -> dict[str, Any]:
    result = operator(room.config_dir, "report", "local", "--json", *args)
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def line_counted(room: LocalProcess) -> bool:
    """Whether a minute began with at least a minute's rate waiting, as the room's own
    trigger counted it."""
    return max(w or 0 for w in report(room)["waiting_per_minute"]) >= RATE


def test_a_rehearsal_is_reported_from_the_rooms_own_metrics(
    room: LocalProcess, tmp_path: Path
) -> None:
    # Visitors join eight at a time until the room's trigger has counted a line of a minute's
    # rate as a minute began: on a busy machine joins come slower, and it takes more of them
    # to outpace the room's admissions.
    first: list[str] = []
    enough = threading.Event()

    def keep_joining() -> None:
        while not enough.is_set() and len(first) < MOST_JOINS:
            first.append(join(room))

    with ThreadPoolExecutor(8) as pool:
        joiners = [pool.submit(keep_joining) for _ in range(8)]
        built = wait_until(
            lambda: len(first) >= FEWEST_JOINS and line_counted(room),
            timeout=120,
            interval=MINUTE_SECONDS,
        )
        enough.set()
        for joiner in joiners:
            joiner.result()
    assert built, f"{len(first)} joins never made a line of {RATE}"
    time.sleep(2 * MINUTE_SECONDS)  # a later minute than the joins'
    # A later visitor: the producer writes the joins' last minute when it next answers.
    later = [join(room) for _ in range(6)]
    tokens = first + later
    # The line's own minutes, and a minute's worth of seconds for a busy machine each.
    admitting = (len(tokens) / RATE + 1) * MINUTE_SECONDS
    assert wait_until(lambda: all(allowed(room, t) for t in tokens), timeout=admitting + 60)
    # The last consumer's run has ended and written its line: every admission and its wait.
    assert wait_until(
        lambda: admissions_written(report(room)) == len(tokens), timeout=60, interval=MINUTE_SECONDS
    )

    out = tmp_path / "rehearsal.html"
    started = time.monotonic()
    data = report(room, "--out", str(out))
    took = time.monotonic() - started
    assert data["local"] is True and data["window"] == "last event"
    assert data["minute_seconds"] == MINUTE_SECONDS  # the room's own minutes
    assert sum(data["admitted_per_minute"]) == len(tokens)
    # A minute admits its rate, and a lane may carry one batch of unused slots into it.
    assert max(data["admitted_per_minute"]) <= RATE + 10
    assert sum(a or 0 for a in data["arrivals_per_minute"]) >= len(first)
    assert set(r for r in data["rate_per_minute"] if r is not None) == {RATE}
    assert max(w or 0 for w in data["waiting_per_minute"]) >= RATE  # a line built up
    waits = data["waits"]
    assert waits["timed"] == len(tokens) and sum(waits["counts"]) == len(tokens)
    # A line of at least a minute's rate as a minute began: its last waited a minute or more.
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


def admissions_written(data: dict[str, Any]) -> int:
    """The admissions the report counts, when its per-minute counts and its waits agree."""
    admitted = sum(a or 0 for a in data["admitted_per_minute"])
    return admitted if data["waits"]["timed"] == admitted else -1


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
