"""The presence script (presence.js beside this module) as the room serves it, and what a shop
needs to load it: the tag with its integrity hash, and the Content-Security-Policy sources.

The room serves the script at its route (core/routes.py's PRESENCE_SCRIPT; a capacity-mode
room: stacks/rest_api.py) byte for byte as `script_bytes()` makes it: the file with its one
placeholder, `{{HEARTBEAT}}`, replaced by the heartbeat's path (PRESENCE) relative to the
script's own. Its Subresource Integrity hash is computed from these very bytes; tests hold the
hash of what local mode's gateway serves, and the one docs/shop-integration.md prints, equal
to `integrity()`. The file is ASCII: no text encoding between the file and the wire can change
a byte. What the script does: core/presence.py.
"""

from __future__ import annotations

import base64
import functools
import hashlib

from beekeeper.core.paths import SITE_DIR
from beekeeper.core.routes import PRESENCE, PRESENCE_SCRIPT

SCRIPT_FILE = "presence.js"
# Where the heartbeat's path goes in the file (relative to the script's own URL).
HEARTBEAT_PLACEHOLDER = "{{HEARTBEAT}}"
# SRI's hash: SHA-384, the strongest every browser takes and the one its specification's
# examples use.
INTEGRITY_ALGORITHM = "sha384"


@functools.cache
def script_bytes() -> bytes:
    """The script, exactly as served."""
    source = (SITE_DIR / SCRIPT_FILE).read_bytes()
    if not source.isascii():
        raise ValueError(f"{SCRIPT_FILE} must be ASCII: its integrity hash is of its bytes")
    placeholder = HEARTBEAT_PLACEHOLDER.encode("ascii")
    if source.count(placeholder) != 1:
        raise ValueError(f"{SCRIPT_FILE} must name {HEARTBEAT_PLACEHOLDER} once")
    return source.replace(placeholder, PRESENCE.relative.encode("ascii"))


def integrity(body: bytes | None = None) -> str:
    """The `integrity` attribute's value for `body` (the script's when None)."""
    digest = hashlib.new(INTEGRITY_ALGORITHM, script_bytes() if body is None else body).digest()
    return f"{INTEGRITY_ALGORITHM}-{base64.b64encode(digest).decode('ascii')}"


def script_url(room_base: str) -> str:
    """Where a room at `room_base` (its stage URL, `https://<api>/<stage>`) serves the script."""
    return f"{room_base.rstrip('/')}{PRESENCE_SCRIPT.path}"


def heartbeat_url(room_base: str) -> str:
    return f"{room_base.rstrip('/')}{PRESENCE.path}"


def script_tag(room_base: str, token: str, *, gone_url: str = "") -> str:
    """The tag a shop's page carries, for a visitor's `token` (HTML-escaped by the caller's
    rules: tokens hold only URL-safe characters and a dot)."""
    gone = f' data-gone-url="{gone_url}"' if gone_url else ""
    return (
        f'<script src="{script_url(room_base)}" data-token="{token}"{gone} '
        f'integrity="{integrity()}" crossorigin="anonymous" async></script>'
    )


def content_security_policy(room_base: str) -> str:
    """The sources a shop's Content-Security-Policy must allow for the script and its
    heartbeats (and nothing else of the room's)."""
    return f"script-src {script_url(room_base)}; connect-src {heartbeat_url(room_base)}"


__all__ = [
    "HEARTBEAT_PLACEHOLDER",
    "INTEGRITY_ALGORITHM",
    "SCRIPT_FILE",
    "content_security_policy",
    "heartbeat_url",
    "integrity",
    "script_bytes",
    "script_tag",
    "script_url",
]
