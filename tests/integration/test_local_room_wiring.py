"""The local room's own wiring, in process, with a double of the room code.

Emulator, gateway (waitress), proxy events, scheduler, record and demo shop are all real; only
the producer/trigger/consumer/template code is the `RoomCode` double, so these tests say what
local mode itself does. tests/integration/test_local_mode.py runs the real room code.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core import names
from beekeeper.core.datamodel import COOKIE_NAME, Token
from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.core.local_room import LOCAL_OUTPUTS_KEY, LOCAL_PID_KEY, LOCAL_SETTINGS_KEY
from beekeeper.local.edge import METHOD_REFUSED_BODY
from beekeeper.local.room import LocalOptions, LocalRoom, local_room
from tests.support.localroom.doubles import double_code
from tests.support.localroom.http import cookie_value, enter_shop, get
from tests.support.localroom.process import wait_until

pytestmark = pytest.mark.slow


@pytest.fixture()
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path))
    return tmp_path


def test_the_room_is_recorded_for_the_operator_cli_and_removed_at_stop(config_dir: Path) -> None:
    # Another room of this module may be running meanwhile: only this room's threads count.
    before = set(threading.enumerate())
    room = LocalRoom(
        local_room(rate=60, origin="http://localhost:9/", name="recorded"),
        LocalOptions(port=0, operator_port=0),
        code_loader=double_code,
    )
    room.start()
    record_path = config_dir / "rooms" / "recorded.local.json"
    try:
        saved = json.loads(record_path.read_text())
        assert set(saved) == {LOCAL_PID_KEY, LOCAL_SETTINGS_KEY, LOCAL_OUTPUTS_KEY}
        assert saved[LOCAL_SETTINGS_KEY]["origin"] == "http://localhost:9/"
        # It holds the endpoint's secret: its owner alone may read it.
        assert record_path.stat().st_mode & 0o077 == 0
        record = saved[LOCAL_OUTPUTS_KEY]
        # Recorded under the deployed stack's output keys, with the stack's resource names.
        assert set(record) == {
            *names.STACK_OUTPUTS,
            names.ENDPOINT_URL_OUTPUT,
            names.MINUTE_SECONDS_OUTPUT,
        }
        expected = names.ResourceNames("recorded")
        assert record[names.TABLE_NAME_OUTPUT] == expected.table == "beekeeper-recorded"
        assert record[names.QUEUE_URL_OUTPUT].endswith(f"/{expected.queue}")
        assert record[names.DEAD_LETTER_QUEUE_URL_OUTPUT].endswith(f"/{expected.dead_letter_queue}")
        for role in names.FUNCTION_ROLES:
            assert record[names.function_output(role)] == expected.function(role)
        assert room.urls is not None
        assert record["MarketingUrl"] == room.urls.marketing_url
        assert record["EndpointUrl"] == room.endpoint_url
        assert record["EndpointUrl"].startswith("http://127.0.0.1:")
        # Local mode writes no room file and no AWS deployment record.
        assert sorted(p.name for p in (config_dir / "rooms").iterdir()) == ["recorded.local.json"]
        threads_during = {t.name for t in threading.enumerate()}
        assert "beekeeper-scheduler" in threads_during
    finally:
        room.stop()
    assert not record_path.exists()
    # stop() joins every thread the room started: none is left the moment it returns.
    threads = {t.name for t in set(threading.enumerate()) - before}
    assert not {"beekeeper-scheduler", "beekeeper-reporter"} & threads
    assert not any(name.startswith(("beekeeper-http-", "waitress-")) for name in threads)


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRoom]:
    settings = local_room(rate=600, name="wiring")
    options = LocalOptions(
        port=0, operator_port=0, demo=True, demo_port=0, origin_is_demo=True, minute_seconds=1
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
        room = LocalRoom(settings, options, code_loader=double_code)
        room.start()
        try:
            yield room
        finally:
            room.stop()


def _join(room: LocalRoom) -> str:
    assert room.urls is not None
    answer = get(room.urls.marketing_url)
    assert answer.status == 302
    set_cookie = answer.header("Set-Cookie")
    assert set_cookie is not None
    token = cookie_value(set_cookie, COOKIE_NAME)
    assert token is not None
    return token


def test_the_marketing_link_runs_the_producer_with_a_loopback_proxy_event(room: LocalRoom) -> None:
    assert room.urls is not None
    answer = get(room.urls.marketing_url)
    assert answer.status == 302
    (set_cookie,) = answer.headers_named("Set-Cookie")
    # The page learns its turn from the fragment (the cookie is HttpOnly).
    ordinal = set_cookie.split(";", 1)[0].rsplit(".", 1)[1]
    assert answer.header("Location") == f"room#turn={ordinal}"
    # X-Forwarded-Proto http reached the handler: the cookie leaves out Secure only here.
    assert "Secure" not in set_cookie
    assert Token.parse(cookie_value(set_cookie, COOKIE_NAME)) is not None


def test_a_joined_visitor_is_admitted_on_schedule_and_the_demo_shop_confirms(
    room: LocalRoom,
) -> None:
    assert room.urls is not None and room.shop_url is not None
    token = _join(room)
    polling_url = room.urls.page_url.replace("/room", "/polling")

    def admitted() -> dict[str, Any] | None:
        answer: dict[str, Any] = get(polling_url, cookie=f"{COOKIE_NAME}={token}").json()
        return answer if answer["allow"] else None

    # 600 a (1 s) minute: in within a few scheduled minutes.
    allowed = wait_until(admitted, timeout=10, interval=0.1)
    assert allowed is not None and allowed["allow"] is True
    # The double's room code signs no tickets: the shop asks the room's /client instead.
    arrival, shop = enter_shop(allowed["origin"])
    assert arrival.status == 303 and arrival.header("Location") == "/"
    assert shop.status == 200
    assert "You're in" in shop.text and "GET /client" in shop.text
    refused = get(room.shop_url.replace("localhost", "127.0.0.1"))
    assert refused.status == 403
    assert "You skipped the line" in refused.text


def test_the_page_and_unknown_paths(room: LocalRoom) -> None:
    assert room.urls is not None
    page = get(room.urls.page_url)
    assert page.status == 200
    # The very headers the stack configures for /room (core/headers.py).
    for name, value in PAGE_HEADERS.items():
        assert page.headers_named(name) == [value], name
    assert "Local rehearsal" in page.text
    # A method the edge's behavior does not allow: the edge refuses it, nothing goes on.
    for url, method in ((room.urls.page_url, "POST"), (room.urls.client_check_url, "DELETE")):
        answer = get(url, method=method)
        assert (answer.status, answer.body) == (403, METHOD_REFUSED_BODY), (url, method)
    # The edge kept the page: HEAD is answered from its copy (API Gateway has no HEAD method).
    head = get(room.urls.page_url, method="HEAD")
    assert (head.status, head.body, head.header("X-Cache")) == (
        200,
        b"",
        "Hit from the local edge",
    )
    # What API Gateway answers for a path the stack does not define.
    answer = get(room.urls.marketing_url.replace("/beekeeper", "/nothing"))
    assert answer.status == 403
    assert answer.json() == {"error": "Missing Authentication Token"}
