"""The room's push channel: where waiting pages subscribe, what the room publishes there, and
when (docs/pipeline.md, "The push channel").

A room has one AWS AppSync Event API (stacks/channel.py) with one channel namespace, NAMESPACE,
and one channel per room, `channel_of(name)`. Pages subscribe over the Event API's WebSocket
with an API key that can connect and subscribe and nothing else; the room's writers publish
over its HTTP endpoint, signed with their IAM credentials (room/push.py). `beekeeper local`
serves the same protocol on loopback (local/channel.py).

What is published: a message (`message`) carrying the whole shared state document
(core/shared_state.py's `document`), so a page applies a pushed document exactly as a fetched
one. When: once per change of what the document says a page must show (`signal`, `reason`),
at most one publish a second per room (COALESCE_SECONDS), a capacity room's full / not full
at most once a minute (FULL_EVERY_SECONDS), and a full copy every RESYNC_SECONDS anyway. The
last publish is marked on the state copy (`Mark`), so every writer (the CLI, the governor, the
trigger and the consumers, in any container) knows what pages were last told and when.

The protocol's figures are AWS's, from "Understanding the Event API WebSocket protocol" (AWS
AppSync Events developer guide, event-api-websocket-protocol.html) unless a comment says
otherwise. Standard library only: the Lambda asset ships it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from beekeeper.core.datamodel import CONFIG_FRESH_SECONDS
from beekeeper.core.serving import (
    DOCUMENT_EVERY_SECONDS,
    EXTRAPOLATE_AT_MOST_SECONDS,
    HIDDEN_DOCUMENT_MAX_SECONDS,
)
from beekeeper.core.shared_state import parse_history

# -- the Event API's protocol -----------------------------------------------------------------

# The channel namespace every room's Event API defines ("You can only publish and subscribe to
# channels that belong to a defined namespace": Understanding channel namespaces).
NAMESPACE = "room"
# The HTTP endpoint's path (publishing: "Publishing is the only supported action over the
# endpoint", Publish events via HTTP) and the real-time endpoint's (subscribing).
HTTP_PATH = "/event"
REALTIME_PATH = "/event/realtime"
# The subprotocol a client offers, beside the auth header as `header-<base64url JSON>`.
SUBPROTOCOL = "aws-appsync-event-ws"
AUTH_SUBPROTOCOL_PREFIX = "header-"
# "The keep-alive interval is 60 seconds"; "The connection timeout period is 5 minutes": the
# `connection_ack` says connectionTimeoutMs, after which a client that had no `ka` closes.
KEEP_ALIVE_SECONDS = 60
CONNECTION_TIMEOUT_MS = 300_000
# "The connection remains open as long as the client remains connected, up to a maximum of 24
# hours."
CONNECTION_MAX_SECONDS = 24 * 3600
# At most 5 events a publish (HTTP and WebSocket), each "a maximum size of 240 KB" (AWS
# AppSync Events concepts; Publish events via HTTP).
MAX_EVENTS_PER_PUBLISH = 5
MAX_EVENT_BYTES = 240 * 1024
# What AWS accepts as a subscription id and a channel path (the protocol page's patterns).
ID_PATTERN = re.compile(r"[a-zA-Z0-9_+-]{1,128}")
_SEGMENT = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?"
CHANNEL_PATTERN = re.compile(rf"/?{_SEGMENT}(?:/{_SEGMENT}){{0,4}}/?")
# Outbound deliveries are metered by the 5 KB (AWS AppSync Events quotas, "Rate of outbound
# messages per API", as Service Quotas names it; docs/stack.md): a message stays under it.
METERED_MESSAGE_BYTES = 5 * 1024

# The page's API key lives at most 365 days ("with a minimum of 1 day and a maximum of 365
# days", AWS::AppSync::ApiKey Expires, CloudFormation template reference); every deploy sets it
# a day short of that from now, and `beekeeper status` warns when fewer than KEY_WARN_DAYS are
# left. AppSync counts an expiry in whole hours ("rounded down to the nearest hour", ApiKey,
# AWS AppSync API reference).
KEY_LIFETIME_DAYS = 364
KEY_WARN_DAYS = 30
_HOUR = 3600
_DAY = 86_400


def channel_of(room: str) -> str:
    """The room's channel: `/room/<name>` (a room's name is a valid channel segment: lower-case
    letters, digits and inner hyphens, at most 32 characters)."""
    channel = f"/{NAMESPACE}/{room}"
    if not CHANNEL_PATTERN.fullmatch(channel):
        raise ValueError(f"{room!r} can not name a channel")
    return channel


def key_expiry(now: float) -> int:
    """When a key set now expires: KEY_LIFETIME_DAYS from now, on the hour before."""
    return int(now + KEY_LIFETIME_DAYS * _DAY) // _HOUR * _HOUR


def key_days_left(expires: int, now: float) -> float:
    return (expires - now) / _DAY


@dataclass(frozen=True)
class PageChannel:
    """What a waiting page needs to subscribe, and the source its Content-Security-Policy must
    allow for it. In AWS: the Event API's real-time endpoint (wss://<Dns.Realtime>), its HTTP
    endpoint's host (the auth header's `host`: AWS validates the connection with it "even if
    the wss:// call is made against the real-time endpoint") and the page's API key; in a local
    room, the loopback channel's (local/channel.py)."""

    realtime_url: str  # wss://<realtime host>/event/realtime
    host: str  # the HTTP endpoint's host
    key: str
    channel: str

    @classmethod
    def of(cls, *, realtime_host: str, http_host: str, key: str, room: str) -> PageChannel:
        return cls(
            realtime_url=f"wss://{realtime_host}{REALTIME_PATH}",
            host=http_host,
            key=key,
            channel=channel_of(room),
        )

    @property
    def connect_source(self) -> str:
        """The page's `connect-src` source for the socket: its scheme and host, spelled out
        ("'self' does not resolve to websocket schemes in all browsers", MDN, connect-src)."""
        parts = urlsplit(self.realtime_url)
        return f"{parts.scheme}://{parts.netloc}"

    def config(self) -> dict[str, str]:
        """The page's room config's `channel`: where, as whom, to what."""
        return {
            "url": self.realtime_url,
            "host": self.host,
            "key": self.key,
            "channel": self.channel,
        }


def auth_header(host: str, key: str) -> dict[str, str]:
    """The API key auth object a client sends (base64url in the `header-` subprotocol, and as
    each subscribe's `authorization`)."""
    return {"host": host, "x-api-key": key}


# -- what a waiting page does with it (waiting_room_site/channel.js; docs/pipeline.md) ----------

# A page waits this long for `connection_ack`, then for `subscribe_success`, before it takes the
# channel as refused: AWS documents no answer for a throttled connect (a failed upgrade, a
# `connection_error` or nothing at all), so any failure to reach both in time is a refusal.
HANDSHAKE_TIMEOUT_SECONDS = 10
# Without any frame (a `ka` or a `data`) for this long a subscribed page takes its socket as
# dropped: 1.5 keep-alive intervals, well inside AWS's own connectionTimeoutMs.
SILENCE_SECONDS = 90
# Without the channel (refused, throttled, dropped) the page fetches the shared document every
# FALLBACK_DOCUMENT_SECONDS at most, each delay drawn from [1 - FALLBACK_JITTER, 1] of it so a
# crowd refused together does not fetch in step; a change then reaches it within that plus the
# edge copy's age.
FALLBACK_DOCUMENT_SECONDS = 30
FALLBACK_JITTER = 0.25
# The socket is tried again with full-jitter exponential backoff ("the client should do a
# jittered exponential backoff" on network errors, the protocol page): a delay drawn from
# [0, min(SOCKET_RETRY_MAX_SECONDS, SOCKET_RETRY_FIRST_SECONDS x 2^(failures - 1))].
SOCKET_RETRY_FIRST_SECONDS = 2
SOCKET_RETRY_MAX_SECONDS = 120
# A tab hidden this long closes its socket (it costs connection-minutes and deliveries nobody
# sees); shown again, it fetches the document at once and subscribes again.
HIDDEN_CLOSE_SECONDS = 60
# A hidden page without its socket fetches the document only to plan its own /polling (it shows
# nothing meanwhile): HIDDEN_LEAD_SECONDS before the moment predicted for it (within the shared
# rule's reach, so the poll is planned from that copy), and at least every
# HIDDEN_AT_MOST_SECONDS until then (HIDDEN_DOCUMENT_MAX_SECONDS while nothing is predicted; in
# capacity mode within half the claim window), so a background tab costs a few fetches.
HIDDEN_LEAD_SECONDS = 60
HIDDEN_AT_MOST_SECONDS = 900
# When the line moves again (a resume, `on`, the draw) the room's lanes restart their lattice
# at once: the first in line goes in within a look at the config (every second while the line
# stands still, within CONFIG_FRESH_SECONDS at most), up to a slot before the pages' lattice
# says. A subscribed page is not told the serving number's moves, so the page at the front of
# the line, answered "waiting" by its own /polling then, asks again every
# OWN_POLL_EVERY_SECONDS for this long rather than at the slot the lattice gives it (a minute
# away at 1 a minute).
RESTART_ASK_SECONDS = 2 * CONFIG_FRESH_SECONDS


def page_timing() -> dict[str, float]:
    """The figures above as the page's room config carries them (waiting_room_site's
    `page_timing`, read by channel.js and room.js)."""
    return {
        "handshakeSeconds": HANDSHAKE_TIMEOUT_SECONDS,
        "silenceSeconds": SILENCE_SECONDS,
        "fallbackSeconds": FALLBACK_DOCUMENT_SECONDS,
        "fallbackJitter": FALLBACK_JITTER,
        "retryFirstSeconds": SOCKET_RETRY_FIRST_SECONDS,
        "retryMaxSeconds": SOCKET_RETRY_MAX_SECONDS,
        "hiddenCloseSeconds": HIDDEN_CLOSE_SECONDS,
        "hiddenLeadSeconds": HIDDEN_LEAD_SECONDS,
        "hiddenAtMostSeconds": HIDDEN_AT_MOST_SECONDS,
        "restartAskSeconds": RESTART_ASK_SECONDS,
        "pushedReachSeconds": SUBSCRIBED_EXTRAPOLATE_SECONDS,
    }


def hidden_document_delay(
    *, now: float, own_poll_at: float | None, claim_seconds: int = 0
) -> float:
    """Seconds to a hidden page's next fetch of the document once its socket is closed."""
    most = float(HIDDEN_AT_MOST_SECONDS)
    if claim_seconds > 0:
        most = min(most, max(DOCUMENT_EVERY_SECONDS, claim_seconds / 2))
    if own_poll_at is None:
        return min(most, HIDDEN_DOCUMENT_MAX_SECONDS)
    ahead = own_poll_at - now
    lead = HIDDEN_LEAD_SECONDS
    return min(most, max(DOCUMENT_EVERY_SECONDS, ahead - lead if ahead > lead else ahead + lead))


def fallback_delay(random: float) -> float:
    """Seconds to the next fetch of the document while the page has no channel."""
    return FALLBACK_DOCUMENT_SECONDS * (1 - FALLBACK_JITTER * random)


def socket_retry_delay(failures: int, random: float) -> float:
    """Seconds before the socket is tried again after `failures` failures in a row (>= 1)."""
    return _RETRY_CEILINGS[min(max(0, failures - 1), _RETRY_DOUBLINGS)] * random


# The backoff's ceiling after 1, 2, ... failures: the simulator draws hundreds of thousands of
# retries of a crowd's pages (simulator/push.py).
_RETRY_DOUBLINGS = 16
_RETRY_CEILINGS = tuple(
    min(SOCKET_RETRY_MAX_SECONDS, SOCKET_RETRY_FIRST_SECONDS * 2**doublings)
    for doublings in range(_RETRY_DOUBLINGS + 1)
)


# -- what the room publishes --------------------------------------------------------------------

# The message's schema version.
VERSION = 1
# Why a message was published: the state changed (by the document's own words), the flow
# moved (a rate change), a capacity room filled or emptied, or a full copy was due.
OFF, ON, HOLD, CLOSE, RESUME = "off", "on", "hold", "close", "resume"
PREQUEUE, DRAW = "prequeue", "draw"
RATE, CAPACITY, FULL, RESYNC = "rate", "capacity", "full", "resync"
# The line started or stopped moving with the state as it was: the status write that carried a
# hold's end or a draw's result could not add its moving point to the history (a copy keeps
# the point pages anchor on: core/shared_state.extend_history), a later one did.
MOVING = "moving"
REASONS = (OFF, ON, HOLD, CLOSE, RESUME, PREQUEUE, DRAW, RATE, CAPACITY, FULL, MOVING, RESYNC)

# At most one publish a second per room: one publish to a million pages is a million outbound
# messages, the per-API default of a whole second (docs/stack.md, "The push channel").
COALESCE_SECONDS = 1.0
# A full copy at least this often: pages extrapolate the serving number between messages, and
# a page that missed one (a dropped message, a socket reconnected) is right again within it.
RESYNC_SECONDS = 300.0
# While subscribed a page extrapolates the serving number this long past the newest point: a
# change it must know is pushed, and a full copy comes every RESYNC_SECONDS, so the line moves
# as the document says until the next copy, and the shared rule's own reach past that (without
# the channel the page keeps that shorter reach, core/serving.py's).
SUBSCRIBED_EXTRAPOLATE_SECONDS = RESYNC_SECONDS + EXTRAPOLATE_AT_MOST_SECONDS
# In a full shop every departure lets one more in, so `full` can flip every few seconds: a
# change of it alone is published at most this often.
FULL_EVERY_SECONDS = 60.0

# What of the document a page must be told at once when it changes: the serving number and
# the history are not (pages extrapolate them), nor `now`, `updated_at` or the flow.
_SIGNAL_FIELDS = (
    "state",
    "rate",
    "slowed",
    "message",
    "starts_at",
    "drawn",
    "ranked",
    "max_inside",
    "full",
    # Not fields of the document, both of its newest history point: the moment an announced
    # hold stops the line (its `until`; 0: none), which pages must know before it comes, and
    # whether the line moves (its flow above 0), without which a subscribed page would
    # extrapolate a line standing still until the next full copy.
    "hold_at",
    "moving",
)
_DOCUMENT_FIELDS = _SIGNAL_FIELDS[:-2]
_FROM_STATE = {
    "off": OFF,
    "closed": CLOSE,
    "paused": HOLD,
    "prequeue": PREQUEUE,
    "drawing": DRAW,
}


def signal(document: Mapping[str, Any]) -> str:
    """What a page must be told when it changes, as compact JSON (kept on the state copy)."""
    fields = [document.get(name) for name in _DOCUMENT_FIELDS]
    points = parse_history(str(document.get("history") or ""))
    newest = points[-1] if points else None
    fields.append(newest.until_ms if newest else 0)
    fields.append(1 if newest and newest.flow > 0 else 0)
    return json.dumps(fields, separators=(",", ":"))


def reason(before: str, after: str) -> str | None:
    """Why `after` must be published, pages having been told `before` (both `signal`s; "" for
    nothing known, which makes a resync); None when they say the same."""
    if before == after:
        return None
    try:
        old = dict(zip(_SIGNAL_FIELDS, json.loads(before), strict=True))
    except (ValueError, TypeError):
        return RESYNC
    new = dict(zip(_SIGNAL_FIELDS, json.loads(after), strict=True))
    if old["state"] != new["state"]:
        if new["state"] in _FROM_STATE:
            return _FROM_STATE[new["state"]]
        if old["state"] == "off":
            return ON
        # Open again: after a hold or a close, or once the start's draw is made.
        return RESUME if old["state"] in ("paused", "closed") else DRAW
    if old["hold_at"] != new["hold_at"]:
        # A hold announced (`beekeeper hold` takes effect HOLD_NOTICE_SECONDS later), or one
        # still to come called off by a resume.
        return HOLD if new["hold_at"] else RESUME
    if old["message"] != new["message"]:
        return CLOSE
    if old["starts_at"] != new["starts_at"]:
        return PREQUEUE
    if (old["drawn"], old["ranked"]) != (new["drawn"], new["ranked"]):
        return DRAW
    if (old["rate"], old["slowed"]) != (new["rate"], new["slowed"]):
        return RATE
    if old["max_inside"] != new["max_inside"]:
        return CAPACITY
    if old["moving"] != new["moving"] and not new["max_inside"]:
        return MOVING
    # A capacity room's line stops and moves as its shop fills and empties: as `full`.
    return FULL


@dataclass(frozen=True)
class Mark:
    """The room's last publish, as the state copy keeps it: its sequence number (the publish
    time in ms, or one more than the publish before when a writer's clock is behind) and the
    `signal` it told pages ("" when that publish failed: the next status write sends again)."""

    seq: int = 0
    told: str = ""


NEVER = Mark()


@dataclass(frozen=True)
class Due:
    """A publish the room owes its pages: why, and the earliest moment it may go (ms)."""

    reason: str
    not_before_ms: int


def due(mark: Mark, told: str, now_ms: int) -> Due | None:
    """Whether the document saying `told` must be published, pages last told `mark`."""
    why = reason(mark.told, told) if mark.seq else RESYNC
    if why is None:
        if now_ms - mark.seq < RESYNC_SECONDS * 1000:
            return None
        why = RESYNC
    wait = FULL_EVERY_SECONDS if why == FULL else COALESCE_SECONDS
    return Due(why, mark.seq + round(wait * 1000) if mark.seq else now_ms)


def next_seq(mark: Mark, now_ms: int) -> int:
    return max(now_ms, mark.seq + 1)


def message(seq: int, why: str, document: Mapping[str, Any]) -> str:
    """The published event: `{"v": 1, "seq": N, "reason": "...", "doc": {...}}`, where `doc` is
    the shared state document as GET /state answers it, with its `seq` and its `now` (the
    publish time) set."""
    if why not in REASONS:
        raise ValueError(f"no such reason: {why!r}")
    body = {"v": VERSION, "seq": seq, "reason": why, "doc": dict(document)}
    text = json.dumps(body, separators=(",", ":"))
    if len(text.encode("utf-8")) > METERED_MESSAGE_BYTES:
        raise ValueError(f"a message of {len(text):,} bytes is over one metered 5 KB message")
    return text


__all__ = [
    "AUTH_SUBPROTOCOL_PREFIX",
    "CHANNEL_PATTERN",
    "COALESCE_SECONDS",
    "CONNECTION_TIMEOUT_MS",
    "FULL_EVERY_SECONDS",
    "HTTP_PATH",
    "ID_PATTERN",
    "KEEP_ALIVE_SECONDS",
    "MAX_EVENTS_PER_PUBLISH",
    "MOVING",
    "NAMESPACE",
    "NEVER",
    "REALTIME_PATH",
    "REASONS",
    "RESYNC_SECONDS",
    "SUBPROTOCOL",
    "Due",
    "Mark",
    "PageChannel",
    "auth_header",
    "channel_of",
    "due",
    "key_days_left",
    "key_expiry",
    "message",
    "next_seq",
    "reason",
    "signal",
]
