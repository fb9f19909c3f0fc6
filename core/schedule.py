"""Scheduled events: the start time, the pre-queue's poll rule, the operator's message and the
fair draw. The one owner of these facts (docs/pipeline.md, "Scheduled events").

Before `starts_at` every visitor joins a pre-queue; at the start the room draws them into a
uniformly random order, ahead of everyone who arrives later. The order is the visitors' ids
sorted by HMAC-SHA256(secret, id), where the secret is 32 CSPRNG bytes the room drew when it
first saw the schedule and committed to by publishing its SHA-256 (`commitment`) before the
start. After the draw the secret itself is published, so anyone holding the list of ids can
recompute the order and check it against the commitment. A visitor can not influence their
rank: the id is the producer's CSPRNG's, not the visitor's, and nobody outside the room knows
the secret until the pre-queue is closed.

Standard library only: shipped inside the Lambda asset (the /polling template mirrors
`prequeue_poll_after` and `MESSAGE_PATTERN`; tests hold them equal).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable
from datetime import UTC, datetime

from beekeeper.core.datamodel import QUEUE_RETENTION_SECONDS

# How far ahead a start may be. A pre-queue place is an item of the room's own table (not a
# queue message, which SQS keeps 14 days at most), so the queue does not limit it; the
# visitor's cookie does: it holds their place, and browsers keep a cookie 400 days at most
# (RFC 6265bis, "Max-Age" and "Expires": user agents cap both at 400 days). A start at most a
# year ahead leaves a month beyond it for the wait in line and the admission.
MAX_DAYS_AHEAD = 365
MAX_SECONDS_AHEAD = MAX_DAYS_AHEAD * 24 * 3600
# What a pre-queue place, and a visitor's mark that they left the line, must outlive: the
# latest start a room accepts, then the queue's retention after it. A DynamoDB TTL, so it only
# tidies up: the draw rewrites every place it ranks with the queue's retention from then.
PLACE_TTL_SECONDS = MAX_SECONDS_AHEAD + QUEUE_RETENTION_SECONDS
# A start the commands accept, for help texts and examples (docs/events.md's too; the test that
# runs the documents' commands fails once it no longer is: move it on then).
TIME_EXAMPLE = "2027-11-01T09:00:00Z"

# Pre-queue visitors poll rarely: at most once a minute (and at least every 5 minutes) until the
# start's last minute; then once at the start itself, which the page spreads over
# START_JITTER_SECONDS so that a countdown ending in the same second for everyone does not
# stampede the API. After the start, until their place is drawn, every few seconds.
PREQUEUE_POLL_MIN_SECONDS = 60
PREQUEUE_POLL_MAX_SECONDS = 300
PREQUEUE_LAST_MINUTE_SECONDS = 60
PREQUEUE_DRAWING_POLL_SECONDS = 5
START_JITTER_SECONDS = 8
# A held line polls at this pace: nothing moves until the operator resumes.
PAUSED_POLL_SECONDS = 30

# The operator's closing message reaches a JSON answer (through a template) and a page: it is
# plain text on one line, without quotes, backslashes, angle brackets or ampersands, so it can
# break neither. The /polling template checks the same pattern before writing it out.
MAX_MESSAGE_LENGTH = 200
MESSAGE_PATTERN = r'[^"\\<>&\x00-\x1f\x7f]{1,200}'
_MESSAGE = re.compile(MESSAGE_PATTERN)

# The draw: ids are split into chunks of this many, in drawn order. A consumer claims a chunk
# at a time, so at any moment the room admits at most (consumers x chunk) visitors out of the
# drawn order, and a lane that finds the pre-queue drained while others finish their last
# chunks admits at most that many later arrivals before them.
CHUNK_SIZE = 20
SECRET_BYTES = 32


class ScheduleError(ValueError):
    """A start time or message that can not be used; the text is one sentence for a user."""


def parse_starts_at(text: str) -> int:
    """An ISO 8601 time with a time zone (Z or +hh:mm) as epoch seconds; "" gives 0 (none)."""
    text = text.strip()
    if not text:
        return 0
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ScheduleError(
            f"{text!r} is not a time: give it in ISO 8601 with its time zone, e.g. {TIME_EXAMPLE}"
        ) from None
    if moment.tzinfo is None:
        raise ScheduleError(
            f"{text!r} has no time zone: add Z for UTC (e.g. {TIME_EXAMPLE}) or an offset "
            "such as +02:00"
        )
    epoch = moment.timestamp()
    if epoch <= 0:
        raise ScheduleError(f"{text!r} is before 1970: give the event's start, e.g. {TIME_EXAMPLE}")
    return int(epoch)


def format_starts_at(epoch: int) -> str:
    """Epoch seconds as the room file writes them (UTC, ISO 8601 with Z); 0 gives ""."""
    if epoch <= 0:
        return ""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def normalise_starts_at(text: str) -> str:
    """The room file's form of a start time given in any accepted form."""
    return format_starts_at(parse_starts_at(text))


def check_start(epoch: int, now: float) -> None:
    """Refuse a start that has passed, or one more than MAX_DAYS_AHEAD days from now."""
    if epoch <= now:
        raise ScheduleError(
            f"{format_starts_at(epoch)} has passed (it is {format_starts_at(int(now))} now): "
            "give the event's start, ahead of now"
        )
    if epoch - now > MAX_SECONDS_AHEAD:
        raise ScheduleError(
            f"{format_starts_at(epoch)} is more than {MAX_DAYS_AHEAD} days ahead: a visitor's "
            "place is kept in their cookie, which browsers keep 400 days at most; set the "
            f"schedule within {MAX_DAYS_AHEAD} days of the start"
        )


def validate_message(text: str) -> str:
    """The operator's closing message, trimmed; "" for none."""
    text = text.strip()
    if not text:
        return ""
    if len(text) > MAX_MESSAGE_LENGTH or not _MESSAGE.fullmatch(text):
        raise ScheduleError(
            f"the message must be one line of at most {MAX_MESSAGE_LENGTH} characters without "
            'quotes ("), backslashes, <, > or &'
        )
    return text


def is_message(text: str) -> bool:
    return bool(text) and _MESSAGE.fullmatch(text) is not None


def prequeue_poll_after(seconds_to_start: int) -> int:
    """When a pre-queue visitor polls again: rarely until the last minute, at the start then,
    and every few seconds once the start has passed and their place is being drawn."""
    if seconds_to_start > PREQUEUE_LAST_MINUTE_SECONDS:
        later = seconds_to_start - PREQUEUE_LAST_MINUTE_SECONDS
        return min(PREQUEUE_POLL_MAX_SECONDS, max(PREQUEUE_POLL_MIN_SECONDS, later))
    if seconds_to_start > 0:
        return seconds_to_start
    return PREQUEUE_DRAWING_POLL_SECONDS


# -- the draw ------------------------------------------------------------------------------


def commitment(secret: str) -> str:
    """The SHA-256 (hex) of the secret's text, published before the start."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def rank_key(secret: str, token_id: str) -> str:
    """HMAC-SHA256(secret, id) in hex: visitors are admitted in increasing order of it."""
    return hmac.new(secret.encode("ascii"), token_id.encode("ascii"), hashlib.sha256).hexdigest()


def drawn_order(secret: str, token_ids: Iterable[str]) -> list[str]:
    """The pre-queue's ids in drawn order (ties, which SHA-256 makes impossible, by id)."""
    return sorted(token_ids, key=lambda token_id: (rank_key(secret, token_id), token_id))
