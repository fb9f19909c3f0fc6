"""`beekeeper hold` on a running local room reaches a page subscribed to its push channel
within 2 s: the room (`beekeeper local`) and the operator CLI each in a process of its own, a
Python WebSocket client subscribed with what the room's page says (its config's `channel`),
the CLI publishing as it does to a deployed room (signed, to the channel's /event)."""

from __future__ import annotations

import base64
import html
import json
import re
import time
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from beekeeper.core import names, push
from tests.support.localroom.process import operator, start_local

# A room in a process of its own, and the CLI in another: seconds of real time.
pytestmark = pytest.mark.slow

PATIENCE = 30.0


def page_config(page_url: str) -> dict[str, object]:
    with urllib.request.urlopen(page_url, timeout=PATIENCE) as answer:  # noqa: S310 (loopback)
        text = answer.read().decode("utf-8")
    found = re.search(r'<script type="application/json" id="beekeeper-room">(.*?)</script>', text)
    assert found is not None
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text)
    assert policy is not None
    config: dict[str, object] = json.loads(found.group(1))
    config["policy"] = html.unescape(policy.group(1))
    return config


def test_a_hold_reaches_a_subscribed_page_within_two_seconds(tmp_path: Path) -> None:
    room = start_local(["--origin", "http://localhost:9/", "--rate", "60"], tmp_path, "pushed")
    try:
        config = page_config(room.urls["page URL"])
        channel = config["channel"]
        assert isinstance(channel, dict)
        record = room.record
        # The page subscribes where the room's record says its channel is, and its policy
        # lets it.
        realtime = record[names.CHANNEL_REALTIME_DOMAIN_OUTPUT]
        assert channel["url"] == f"ws://{realtime}/event/realtime"
        assert channel["host"] == record[names.CHANNEL_HTTP_DOMAIN_OUTPUT]
        assert channel["channel"] == "/room/pushed"
        assert f"connect-src 'self' ws://{realtime};" in str(config["policy"])
        auth = json.dumps(push.auth_header(str(channel["host"]), str(channel["key"])))
        header = "header-" + base64.urlsafe_b64encode(auth.encode()).decode().rstrip("=")
        with connect(
            str(channel["url"]),
            subprotocols=[push.SUBPROTOCOL, header],  # type: ignore[list-item]
            open_timeout=PATIENCE,
        ) as socket:
            socket.send(json.dumps({"type": "connection_init"}))
            assert json.loads(socket.recv(timeout=PATIENCE))["type"] == "connection_ack"
            socket.send(
                json.dumps(
                    {
                        "type": "subscribe",
                        "id": "page",
                        "channel": channel["channel"],
                        "authorization": push.auth_header(
                            str(channel["host"]), str(channel["key"])
                        ),
                    }
                )
            )
            assert json.loads(socket.recv(timeout=PATIENCE)) == {
                "type": "subscribe_success",
                "id": "page",
            }
            held = operator(tmp_path, "hold", "pushed")
            assert held.returncode == 0, held.stdout + held.stderr
            assert "Warning" not in held.stderr
            while True:  # a resync of the room's first minute may come first
                message = json.loads(socket.recv(timeout=PATIENCE))
                if message["type"] != "data":
                    continue
                event = json.loads(message["event"])
                if event["reason"] == "hold":
                    break
            received_ms = time.time() * 1000
            # Announced: the line moves on until the hold's moment, which the newest point
            # states (the page stops there; core/serving.py HOLD_NOTICE_SECONDS).
            newest = event["doc"]["history"].split(" ")[-1].split(":")
            assert event["doc"]["state"] == "open" and int(newest[-1]) > event["seq"]
            # From the publish (its sequence number is its time) to this page: within 2 s.
            assert received_ms - event["seq"] <= 2000
    finally:
        assert room.interrupt() == 0, room.output()
