"""The whole journey a shop relies on (tests/realroom/journey.py), against `beekeeper local`.

The same steps run against a room in AWS in tests/aws (opt-in); here they run in the gate, on
the same code, with 2 s minutes. What only AWS has (metrics in CloudWatch, alarm notices,
leftovers after destroy) is tested against moto in tests/functional/test_real_room_checks.py.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Sequence

import pytest

from tests.support.localroom.process import BEEKEEPER, LocalProcess, start_local
from tests.support.realroom import journey

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the journey reads redirects


@pytest.fixture(scope="module")
def local_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    room = start_local(
        # 3 admissions a second: eight visitors join well before the last is let in, even on
        # a loaded machine, so the last ones are still seen waiting.
        ["--origin", ORIGIN, "--rate", "6", "--minute-seconds", "2"],
        tmp_path_factory.mktemp("config"),
        name="journey",
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def as_journey_room(room: LocalProcess) -> journey.JourneyRoom:
    def beekeeper(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(room.config_dir)}
        return subprocess.run(
            [BEEKEEPER, *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )

    return journey.JourneyRoom(
        name=room.name,
        marketing_url=room.urls["marketing URL"],
        page_url=room.urls["page URL"],
        client_check_url=room.urls["client check URL"],
        origin=ORIGIN,
        display_name="Local rehearsal",
        beekeeper=beekeeper,
        dynamodb=room.client("dynamodb"),
        table=room.record["TableName"],
    )


def test_the_journey_a_shop_relies_on(local_room: LocalProcess) -> None:
    room = as_journey_room(local_room)
    tokens = journey.join(room, visitors=8)
    journey.polling_shows_a_position(room, tokens)
    journey.admitted_once_and_in_order(room, tokens, timeout=60)
    journey.tickets_verify_offline(room, tokens)
    journey.client_says_who_came_through(room, tokens)
    journey.off_lets_new_visitors_into_the_shop(room)
    # Delivered, without a bound: here the publish crosses three processes of this machine
    # (the CLI, the room, this test), so how long it takes is the machine's scheduling (0.1 s
    # on a quiet one, 2.5 s seen beside two busy processes). AppSync's delivery is held to 2 s
    # in tests/aws; a page's, in a browser, in tests/browser/test_page_channel_in_browser.py.
    journey.a_subscribed_page_sees_a_hold(room, within=None)
    journey.rate_changes_the_status(room, 120)
    steps = ["marketing link", "marketing link", "the work of 8 visitors"]
    steps += ["marketing link with the solution"]
    steps += ["page", "state", "/polling"]
    steps += ["admission", "tickets", "/client", "off", "push", "rate"]
    assert [line.split(":")[0] for line in room.report] == steps
    print("\n".join(room.report))
