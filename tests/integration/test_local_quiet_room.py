"""A quiet local room over HTTP: straight through when there is room, and honest places.

The real room code on the machine, at real-length minutes: a lone visitor is let in within
seconds (the consumer woken for them), and six visitors joining one by one at one a minute are
shown places 1, 2, 3, ... in the order they joined.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.localroom.process import LocalProcess, start_local, wait_until
from tests.support.localroom.visitor import join, polling

pytestmark = pytest.mark.slow


@pytest.fixture()
def quiet_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        ["--demo", "--demo-port", "0", "--rate", "1"],
        tmp_path_factory.mktemp("config"),
        name="quiet",
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def test_one_a_minute_the_first_goes_straight_in_and_the_rest_see_their_places(
    quiet_room: LocalProcess,
) -> None:
    # Early in a minute: away from its turn, where a visitor may wait two seconds for the next
    # span, and with 40 s left for the first's admission and the next five joins, which must
    # all come before the next minute's slot admits the first of them (beside two CPU-bound
    # processes the five once took past a start at 45 s).
    while not 5 <= time.time() % 60 <= 20:
        time.sleep(0.5)
    next_minute = (time.time() // 60 + 1) * 60
    first = join(quiet_room)
    # Straight through, not at the next minute's slot (at least 15 s away).
    admitted = wait_until(
        lambda: polling(quiet_room, first)["allow"] is True, timeout=next_minute - time.time()
    )
    assert admitted and time.time() < next_minute
    others = []
    for _ in range(5):
        time.sleep(0.3)  # one by one
        others.append(join(quiet_room))
    answers = [polling(quiet_room, token) for token in others]
    late = time.time() >= next_minute  # then the next minute's slot may have admitted one
    assert [a.get("state") for a in answers] == ["waiting"] * 5, (late, answers)
    assert [a["position"] for a in answers] == [1, 2, 3, 4, 5]
    # At one a minute the front of the line waits up to a minute for the next slot.
    assert [a["eta_seconds"] for a in answers] == [60, 120, 180, 240, 300]
