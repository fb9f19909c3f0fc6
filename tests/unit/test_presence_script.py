"""The presence script as the room serves it: its bytes, the integrity hash of exactly those
bytes, and what a shop's page carries to load it."""

from __future__ import annotations

import base64
import hashlib
import re

from beekeeper.apigateway.http import HttpRequest
from beekeeper.apigateway.model import load
from beekeeper.apigateway.runtime import invoke
from beekeeper.core.paths import PACKAGE_ROOT, SITE_DIR
from beekeeper.stacks.rest_api import definition, local_references
from beekeeper.waiting_room_site import presence
from tests.support.stack_testkit import CHANGED_ROOM

ROOM = "https://abc123.execute-api.eu-west-1.amazonaws.com/prod"
TOKEN = "Ab0_-" + "x" * 17 + ".12"
# What "small" means: a tenth of the waiting room page, with its comments.
MAX_SCRIPT_BYTES = 5_000


def test_the_integrity_is_sha384_of_the_files_bytes_with_the_heartbeats_path() -> None:
    source = (SITE_DIR / presence.SCRIPT_FILE).read_bytes()
    body = source.replace(b"{{HEARTBEAT}}", b"presence")
    assert body != source
    assert presence.script_bytes() == body
    digest = base64.b64encode(hashlib.sha384(body).digest()).decode("ascii")
    assert presence.integrity() == f"sha384-{digest}"
    # One byte more is another hash: a browser would refuse the script.
    assert presence.integrity(body + b"\n") != presence.integrity()


def served_bytes() -> bytes:
    """GET /presence.js of a capacity room, answered as API Gateway answers it from the
    room's own API definition (what the stack deploys and local mode serves)."""
    api = definition(CHANGED_ROOM, local_references("beekeeper-test"), page_html="<p>room")
    room = load(api.methods, api.gateway_responses)
    method = room.method("/presence.js", "GET")
    assert method is not None
    answer = invoke(
        room,
        method,
        HttpRequest("GET", "/presence.js", {}, {"Accept": "*/*"}, ""),
        dynamodb=lambda action, body: (500, ""),
        request_time_ms=0,
    )
    assert answer.status == 200
    return answer.body.encode("utf-8")


def test_the_docs_hash_is_the_hash_of_the_bytes_the_room_serves() -> None:
    served = presence.integrity(served_bytes())
    text = (PACKAGE_ROOT / "docs" / "shop-integration.md").read_text(encoding="utf-8")
    documented = re.findall(r'integrity="(sha384-[A-Za-z0-9+/=]+)"', text)
    assert documented and set(documented) == {served}
    assert served == presence.integrity()


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
