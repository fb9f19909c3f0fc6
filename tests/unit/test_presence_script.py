"""The presence script as the room serves it: its bytes, the integrity hash of exactly those
bytes, and what a shop's page carries to load it."""

from __future__ import annotations

import base64
import hashlib

from beekeeper.core.paths import SITE_DIR
from beekeeper.waiting_room_site import presence

ROOM = "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"
TOKEN = "Ab0_-" + "x" * 17 + ".12"
# What "small" means: a tenth of the waiting room page, with its comments.
MAX_SCRIPT_BYTES = 5_000


def test_the_integrity_is_sha384_of_the_files_bytes() -> None:
    body = (SITE_DIR / presence.SCRIPT_FILE).read_bytes()
    assert presence.script_bytes() == body
    digest = base64.b64encode(hashlib.sha384(body).digest()).decode("ascii")
    assert presence.integrity() == f"sha384-{digest}"
    # One byte more is another hash: a browser would refuse the script.
    assert presence.integrity(body + b"\n") != presence.integrity()


def test_the_script_is_small_ascii_and_names_no_other_host() -> None:
    body = presence.script_bytes()
    assert body.isascii() and len(body) <= MAX_SCRIPT_BYTES
    text = body.decode("ascii")
    # No third-party request: it names no host; every URL it builds is the room's (from its
    # own src, or data-room). And no cookie or lasting storage.
    assert "://" not in text
    assert "document.cookie" not in text and "localStorage" not in text


def test_a_shops_tag_and_policy_name_the_rooms_script_and_heartbeat() -> None:
    tag = presence.script_tag(ROOM + "/", TOKEN, gone_url="/cart")
    assert tag == (
        f'<script src="{ROOM}/presence.js" data-token="{TOKEN}" data-gone-url="/cart" '
        f'integrity="{presence.integrity()}" crossorigin="anonymous" async></script>'
    )
    assert presence.content_security_policy(ROOM) == (
        f"script-src {ROOM}/presence.js; connect-src {ROOM}/presence"
    )
