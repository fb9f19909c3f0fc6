"""A returning visitor at the marketing link, over HTTP in a local room: never stuck in a loop.

The page sends a visitor whose place is gone back to the marketing link; the link must then
give them a new place, send an admitted visitor to the shop, and let a waiting visitor keep
their place. Each case is set up in the room's table (as the room's own code would leave it)
and checked through both doors: /polling and the marketing link must agree.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from beekeeper.core import datamodel, polling
from beekeeper.core.datamodel import CONFIG_FRESH_SECONDS
from tests.support.localroom.http import Answer, cookie_value, follow_link, get
from tests.support.localroom.process import LocalProcess, start_local

pytestmark = pytest.mark.slow

ORIGIN = "http://127.0.0.1:9/shop"  # never followed: the tests read the redirects


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    # One admission a minute: a visitor behind a few others waits for minutes.
    room = start_local(
        ["--origin", ORIGIN, "--rate", "1"], tmp_path_factory.mktemp("config"), name="returning"
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


def marketing_link(room: LocalProcess, token: str | None = None, raw: str | None = None) -> Answer:
    cookie = (
        raw
        if raw is not None
        else (f"theme=dark; {datamodel.COOKIE_NAME}={token}" if token else None)
    )
    answer = follow_link(room.urls["marketing URL"], cookie=cookie)
    assert answer.status == 302, answer.text
    return answer


def new_token(answer: Answer) -> str | None:
    cookies = answer.headers_named("Set-Cookie")
    return cookie_value(cookies[0], datamodel.COOKIE_NAME) if cookies else None


def polling_answer(room: LocalProcess, cookie: str) -> dict[str, Any]:
    answer = get(room.urls["page URL"].replace("/room", "/polling"), cookie=cookie)
    assert answer.status == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def put(room: LocalProcess, item: dict[str, Any]) -> None:
    room.client("dynamodb").put_item(TableName=room.record["TableName"], Item=item)


def admission(token: datamodel.Token, expires_at: float) -> dict[str, Any]:
    return {
        "pk": {"S": datamodel.visitor_key(token.id)},
        "ordinal": {"N": str(token.ordinal)},
        "admitted_at": {"N": str(int(expires_at) - 3600)},
        "expires_at": {"N": str(int(expires_at))},
    }


def a_token(ordinal: int) -> datamodel.Token:
    return datamodel.Token.issue(ordinal, secrets.token_bytes)


def test_each_returning_visitor_is_answered_as_polling_sees_them(room: LocalProcess) -> None:
    for _ in range(5):  # others ahead in line
        assert new_token(marketing_link(room)) is not None

    # Still in line: back to the page, the same cookie, nothing queued twice.
    waiting = new_token(marketing_link(room))
    assert waiting is not None
    assert polling_answer(room, f"{datamodel.COOKIE_NAME}={waiting}")["state"] == "waiting"
    again = marketing_link(room, waiting)
    ordinal = waiting.rsplit(".", 1)[1]
    assert again.header("Location") == f"room#turn={ordinal}" and new_token(again) is None

    # Admitted and valid: straight to the shop with the token, as /polling would send them.
    admitted = a_token(2)
    put(room, admission(admitted, time.time() + 3600))
    assert polling_answer(room, f"{datamodel.COOKIE_NAME}={admitted}")["allow"] is True
    shop = marketing_link(room, str(admitted))
    assert shop.header("Location") == f"{ORIGIN}?beekeeper_token={admitted}"
    assert new_token(shop) is None

    # Admission expired: /polling says so, and the link gives a new place.
    expired = a_token(3)
    put(room, admission(expired, time.time() - 60))
    assert polling_answer(room, f"{datamodel.COOKIE_NAME}={expired}")["state"] == "expired"
    rejoined = marketing_link(room, str(expired))
    fresh = new_token(rejoined)
    assert fresh is not None and fresh != str(expired)
    assert rejoined.header("Location") == f"room#turn={fresh.rsplit('.', 1)[1]}"
    assert polling_answer(room, f"{datamodel.COOKIE_NAME}={fresh}")["state"] == "waiting"

    # A quoted value is malformed to /polling, and so to the link: a new place, no loop.
    quoted = f'{datamodel.COOKIE_NAME}="{waiting}"'
    assert polling_answer(room, quoted)["state"] == "malformed"
    assert new_token(marketing_link(room, raw=quoted)) not in (None, waiting)

    # Unknown: the line passed the token's place long ago and it has no admission item (a
    # forged token, or one an earlier deployment issued).
    stale = a_token(1)
    passed = stale.ordinal + polling.unknown_margin(1) + 1
    copy = datamodel.status_key(datamodel.status_copy_for(stale.ordinal))
    put(room, {"pk": {"S": datamodel.ADMITTED_COUNTER_KEY}, "n": {"N": str(passed)}})
    put(
        room,
        {
            "pk": {"S": copy},
            "admitted_total": {"N": str(passed)},
            "arrivals_total": {"N": str(passed + 10)},
            "rate": {"N": "1"},
            "enabled": {"BOOL": True},
            "slowed": {"BOOL": False},
            "updated_at": {"N": str(int(time.time()))},
        },
    )
    assert polling_answer(room, f"{datamodel.COOKIE_NAME}={stale}")["state"] == "unknown"
    time.sleep(CONFIG_FRESH_SECONDS + 0.5)  # the link's cached counters catch up
    assert new_token(marketing_link(room, str(stale))) not in (None, str(stale))
