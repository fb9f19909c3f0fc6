"""A scheduled event in a local room over HTTP (`beekeeper local --starts-in 30`): the real room
code and templates. Visitors who come before the start are told "prequeue" with the start; after
it they are drawn and admitted; a visitor who comes after the start goes in behind them."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.localroom.process import LocalProcess, start_local, wait_until
from tests.support.localroom.visitor import join, polling

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the test reads the answers
# The early visitors must join and be answered before the start: no work per place (the work
# is not what this test is about, and on a busy machine five solves could outlast the wait),
# and a start far enough ahead that a busy machine's room start and five joins come before it.
STARTS_IN = 30


@pytest.fixture()
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = start_local(
        ["--origin", ORIGIN, "--rate", "600", "--minute-seconds", "4", "--starts-in",
         str(STARTS_IN), "--join-work", "0"],
        tmp_path_factory.mktemp("config"),
        name="drop",
    )  # fmt: skip
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


def test_prequeue_before_the_start_then_admissions_after_it(room: LocalProcess) -> None:
    started = time.time()
    early = [join(room) for _ in range(5)]
    starts_at = polling(room, early[0])["starts_at"]
    assert time.time() < starts_at, "the early visitors must be answered before the start"
    for token in early:
        answer = polling(room, token)
        assert answer["allow"] is False
        assert answer["state"] == "prequeue"
        assert answer["starts_at"] == starts_at <= started + STARTS_IN + 2
        # The last minute before the start: the poll comes at the start itself.
        assert 1 <= answer["poll_after"] <= STARTS_IN + 1
    # Nobody is let in before the start.
    assert not any(polling(room, token)["allow"] for token in early)

    assert wait_until(lambda: time.time() > starts_at + 0.5, STARTS_IN + 2)
    late = join(room)
    assert wait_until(lambda: all(polling(room, t)["allow"] for t in early), 30)
    assert wait_until(lambda: polling(room, late)["allow"], 15)
