"""The real-AWS journey's write steps (tests/support/realroom/journey.py: /client's check,
redeem and second redeem; capacity mode's /enter and /leave), run against a local room in this
process: the real room code, the real templates through API Gateway's emulation, over HTTP.

tests/aws runs the same steps on a deployed room (opt-in); here they run in the gate, so the
steps are right before anyone spends money on them.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import boto3
import pytest

from beekeeper.core.settings import RoomSettings
from beekeeper.local.room import LocalOptions, LocalRoom, local_room
from beekeeper.vtl import REDEEM_WITHOUT_TOKEN_ANSWER
from tests.support.realroom import journey

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the journey reads redirects


def _no_operator(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    raise AssertionError(f"these steps run no `beekeeper {' '.join(args)}`")


def _running(settings: RoomSettings, config_dir: Path) -> Iterator[journey.JourneyRoom]:
    options = LocalOptions(port=0, operator_port=0, minute_seconds=2, save_line=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BEEKEEPER_CONFIG_DIR", str(config_dir))
        room = LocalRoom(settings, options)
        room.start()
        try:
            assert room.urls is not None
            yield journey.JourneyRoom(
                name=settings.name,
                marketing_url=room.urls.marketing_url,
                page_url=room.urls.page_url,
                client_check_url=room.urls.client_check_url,
                origin=ORIGIN,
                display_name=settings.display_name,
                beekeeper=_no_operator,
                dynamodb=boto3.client(
                    "dynamodb",
                    endpoint_url=room.endpoint_url,
                    region_name="us-east-1",
                    aws_access_key_id="testing",
                    aws_secret_access_key="testing",
                ),
                table=room.resources.table_name,
            )
        finally:
            room.stop()


def _settings(name: str, **capacity: float) -> RoomSettings:
    return local_room(rate=600, origin=ORIGIN, name=name, **capacity)


@pytest.fixture(scope="module")
def rate_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[journey.JourneyRoom]:
    yield from _running(_settings("writes"), tmp_path_factory.mktemp("config"))


@pytest.fixture(scope="module")
def capacity_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[journey.JourneyRoom]:
    settings = _settings("seats", max_inside=3, session_minutes=1, claim_minutes=1)
    yield from _running(settings, tmp_path_factory.mktemp("config"))


def test_a_check_a_redeem_and_a_second_redeem(rate_room: journey.JourneyRoom) -> None:
    tokens = journey.join(rate_room, visitors=2)
    journey.admitted_once_and_in_order(rate_room, tokens, timeout=30)
    journey.client_redeems_once(rate_room, tokens[0])
    (line,) = [line for line in rate_room.report if line.startswith("/client writes")]
    # The report prints each answer as the room gave it.
    assert line == (
        "/client writes: redeem with the cookie alone 400 "
        f"{json.dumps(REDEEM_WITHOUT_TOKEN_ANSWER)}; "
        'check 200 {"allow": true}; redeem 200 {"allow": true}; '
        'second redeem 200 {"allow": false, "state": "redeemed"}'
    )


def test_enter_then_leave_and_a_redeem_in_a_capacity_room(
    capacity_room: journey.JourneyRoom,
) -> None:
    tokens = journey.join(capacity_room, visitors=2)
    journey.admitted_once_and_in_order(capacity_room, tokens, timeout=30)
    journey.enter_then_leave(capacity_room, tokens[0])
    journey.client_redeems_once(capacity_room, tokens[1])
    (line,) = [line for line in capacity_room.report if line.startswith("/enter and /leave")]
    assert "enter 302 Location http://127.0.0.1:9/shop?beekeeper_token=" in line
    assert 'leave 200 {"left": true}; leave again 200 {"left": false}' in line
