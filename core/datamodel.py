"""Names and shapes shared by everything that reads or writes the room's table and queue.

docs/data-model.md is the prose of this module: the producer, trigger, consumer and governor
Lambdas, the VTL templates behind /polling and /client, the CLI and local mode all follow it.
Standard library only: shipped inside the Lambda asset.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# -- the visitor's token ---------------------------------------------------------------------

COOKIE_NAME = "beekeeper_token"
# Query parameter carrying the token on the redirect to the origin and on /client?token=.
ORIGIN_TOKEN_PARAMETER = "beekeeper_token"
CLIENT_TOKEN_PARAMETER = "token"
# Query parameter carrying the signed admission ticket beside the token on the redirect to the
# origin (core/tickets.py says what the ticket is).
ORIGIN_TICKET_PARAMETER = "beekeeper_ticket"
# A native app's token on /polling and the marketing link (docs/apps.md): read by the cookie's
# rules (cookies.read_token), and when present it wins over a cookie.
TOKEN_HEADER = "Beekeeper-Token"
# /client?token=...&redeem=1: the first such check answers allow, every later one "redeemed".
# Only this exact value redeems; any other value of the parameter is refused (400), so a shop
# that writes `redeem=true` learns it at once instead of checking without redeeming.
CLIENT_REDEEM_PARAMETER = "redeem"
CLIENT_REDEEM_VALUE = "1"

TOKEN_ID_BYTES = 16  # 128 bits: CSPRNG bytes, or CSPRNG bytes and the room's mark
TOKEN_ID_LENGTH = 22  # base64url of 16 bytes, unpadded
# A token the room issues carries its mark in the id (same length, same pattern): 8 CSPRNG bytes,
# then the first 8 bytes of HMAC-SHA256 under the room's token key of those bytes and the
# ordinal. Only the room can make one, and it can tell one from a forged token without a table
# read (room/leaving.py: a leave for a token the room never issued writes nothing). Guessing
# an issued id still means guessing 128 bits: the mark is unpredictable without the key.
TOKEN_RANDOM_BYTES = 8
TOKEN_MARK_BYTES = TOKEN_ID_BYTES - TOKEN_RANDOM_BYTES
MAX_ORDINAL_DIGITS = 12
# A token is "<id>.<ordinal>": the id is the secret that admits, the ordinal is the visitor's
# estimated place in the arrival order (it only feeds the position shown; editing it admits
# nobody). Match with fullmatch: "$" alone lets a trailing newline through. The VTL templates
# spell out the same pattern; tests keep them equal.
TOKEN_PATTERN = re.compile(
    rf"^[A-Za-z0-9_-]{{{TOKEN_ID_LENGTH}}}\.[0-9]{{1,{MAX_ORDINAL_DIGITS}}}$"
)


@dataclass(frozen=True)
class Token:
    id: str
    ordinal: int

    def __str__(self) -> str:
        return f"{self.id}.{self.ordinal}"

    @classmethod
    def parse(cls, text: object) -> Token | None:
        """The token in `text`, or None when it is not exactly a well-formed token."""
        if not isinstance(text, str) or not TOKEN_PATTERN.fullmatch(text):
            return None
        token_id, ordinal = text.split(".")
        return cls(token_id, int(ordinal))

    @property
    def is_test(self) -> bool:
        """A test visitor's (`beekeeper check`): see TEST_ORDINAL."""
        return self.ordinal == TEST_ORDINAL

    @classmethod
    def issue(
        cls, ordinal: int, token_bytes: Callable[[int], bytes], key: bytes | None = None
    ) -> Token:
        """A new token; `token_bytes` is the CSPRNG (secrets.token_bytes in production). With
        the room's token `key` its id carries the room's mark (see TOKEN_RANDOM_BYTES)."""
        if key is None:
            raw = token_bytes(TOKEN_ID_BYTES)
            if len(raw) != TOKEN_ID_BYTES:
                raise ValueError("the token source must return 16 bytes")
        else:
            random_part = token_bytes(TOKEN_RANDOM_BYTES)
            if len(random_part) != TOKEN_RANDOM_BYTES:
                raise ValueError("the token source must return 8 bytes")
            raw = random_part + _mark(key, random_part, ordinal)
        token_id = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        return cls(token_id, ordinal)

    def issued_with(self, key: bytes) -> bool:
        """Whether the room holding `key` issued this token (its id and ordinal unchanged)."""
        try:
            raw = base64.urlsafe_b64decode(self.id + "==")
        except ValueError:
            return False
        # Two ids that decode to the same bytes (the last character's unused bits) are one id
        # only in its canonical spelling: the one the room wrote.
        canonical = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if len(raw) != TOKEN_ID_BYTES or canonical != self.id:
            return False
        random_part, mark = raw[:TOKEN_RANDOM_BYTES], raw[TOKEN_RANDOM_BYTES:]
        return hmac.compare_digest(mark, _mark(key, random_part, self.ordinal))


def _mark(key: bytes, random_part: bytes, ordinal: int) -> bytes:
    keyed = _keyed(key).copy()
    keyed.update(random_part + b"." + str(ordinal).encode("ascii"))
    return keyed.digest()[:TOKEN_MARK_BYTES]


@functools.lru_cache(maxsize=16)
def _keyed(key: bytes) -> hmac.HMAC:
    """HMAC-SHA256 under `key` with nothing hashed yet: copied for each mark, which saves
    setting the key up again for every token a room issues (a room has a key or two)."""
    return hmac.new(key, digestmod=hashlib.sha256)


# -- test visitors (`beekeeper check`, docs/data-model.md "Test visitors") -------------------

# A test visitor holds place 0, which no real visitor's ordinal can be ((n - 1) x shards + k +
# 1 >= 1): the producer gives it only for a test pass the operator wrote, and only the producer
# sends the queue's messages, so a place 0 in the queue is always the operator's test visitor.
# It is counted in no counter (arrivals, admitted, the minute's admitted) and no metric, and
# takes no admission slot: real visitors' places, waits and the operator's figures are as if it
# had never come.
TEST_ORDINAL = 0
# The marketing link's query parameter carrying a test pass (beside `work`; not in the edge's
# cache key, whose answers to a solution are never shared).
TEST_PASS_PARAMETER = "check"
# A pass is 16 CSPRNG bytes, base64url: the key of its item, never guessable.
TEST_PASS_BYTES = 16
TEST_PASS_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")
# How long a pass can be used: long enough for a check's joins, short enough to be gone soon.
TEST_PASS_SECONDS = 600
# On a test visitor's `v#` item (BOOL true), beside the `test` claim in its ticket.
TEST_ATTRIBUTE = "test"


def check_pass_key(pass_id: str) -> str:
    """A test pass: how many test visitors it may still bring, until when (`beekeeper check`
    writes it with the operator's credentials; the producer spends it, one join at a time)."""
    return f"check#{pass_id}"


# -- table keys (partition key "pk", string; no sort key) -----------------------------------

PARTITION_KEY = "pk"
TTL_ATTRIBUTE = "ttl"
STATUS_COPIES = 10  # /polling reads status#<last digit of the ordinal>


def visitor_key(token_id: str) -> str:
    return f"v#{token_id}"


def arrival_shard_key(shard: int) -> str:
    return f"arrivals#{shard}"


def deadline_key(epoch_second: int) -> str:
    """The visitors whose place falls due in this second (unless renewed meanwhile)."""
    return f"deadlines#{epoch_second}"


# A visitor's `v#` item in capacity mode: where they are.
STATE_ADMITTED = "admitted"  # let in, not arrived at the shop yet: holds a place until the claim
STATE_INSIDE = "inside"  # arrived (a /client check): holds a place while the session lasts
STATE_LEFT = "left"  # left with /leave: waiting visitors are never admitted
STATE_ENDED = "ended"  # the claim or the session ran out: the place was freed
HOLDING_STATES = (STATE_ADMITTED, STATE_INSIDE)
# Written on a `v#` item by /client: when the admission was redeemed (epoch s; present once
# redeemed, never removed), and in rate mode when it was last checked (epoch s).
REDEEMED_ATTRIBUTE = "redeemed_at"
CHECKED_ATTRIBUTE = "checked_at"


def work_key(spent: str) -> str:
    """A spent proof-of-work solution (core/join_work.py, `Solution.spent_as`): the challenge's
    nonce, with the visitor's for a shared challenge, gave a place once."""
    return f"work#{spent}"


def prequeue_key(token_id: str) -> str:
    """A visitor who joined before a scheduled start: their place until the draw ranks it."""
    return f"p#{token_id}"


# The draw of a scheduled event's pre-queue (docs/pipeline.md, "Scheduled events"): its state
# and secret, and the drawn order in chunks `draw#<c>` (chunk c holds ranks c x size + 1 ..).
DRAW_KEY = "draw"
DRAW_COMMITTED = "committed"  # a schedule exists; the secret is drawn and its hash published
DRAW_DRAWING = "drawing"  # a trigger is writing the order (a lease: another takes over later)
DRAW_DRAWN = "drawn"  # the order is fixed: admissions take it chunk by chunk


def draw_chunk_key(chunk: int) -> str:
    return f"draw#{chunk}"


def minute_key(epoch_minute: int) -> str:
    return f"minute#{epoch_minute}"


def status_key(copy: int) -> str:
    return f"status#{copy}"


def status_copy_for(ordinal: int) -> int:
    return ordinal % STATUS_COPIES


# The copy the shared state document is read from (core/shared_state.py): the one copy that
# also carries the serving number's history. The edge keeps the document, so the origin reads
# it a few times a second at most, far below what one item serves.
STATE_COPY = 0
STATE_KEY = status_key(STATE_COPY)


CONFIG_KEY = "config"
# How stale a container's copy of the config item may get: the producer caches it this long,
# a consumer re-reads it this often (its long polls end within it). So an operator's change
# (off, on, rate, capacity, schedule, hold, resume, close) reaches every container within
# seconds, without a redeploy.
CONFIG_FRESH_SECONDS = 5.0
# What the operator is told: in effect everywhere within twice that (a consumer that read the
# config just before the change reads it again within CONFIG_FRESH_SECONDS, once the long
# poll it may be in, itself at most CONFIG_FRESH_SECONDS, has ended).
CONFIG_IN_EFFECT_SECONDS = 2 * CONFIG_FRESH_SECONDS
# The room's public ticket keys, which GET /jwks.json publishes (core/tickets.py).
TICKET_KEYS_KEY = "ticket-keys"
# Its list of public keys (room/ticket_keys.py writes it, the /jwks.json template reads it).
TICKET_KEYS_PUBLISHED = "published"
# The `v#` item's attribute holding the ticket the consumer signed at admission.
TICKET_ATTRIBUTE = "ticket"
ADMITTED_COUNTER_KEY = "admitted"
# Capacity mode (docs/pipeline.md, "Capacity and sessions"): the places taken inside the shop
# (`n`) and the recent turnover. The deadlines that fall due in each second are `deadlines#<s>`.
INSIDE_KEY = "inside"
# A visitor who left with /leave and whose place has not been released yet carries
# LEAVING_ATTRIBUTE; the sparse index LEAVING_INDEX (partition key LEAVING_ATTRIBUTE, sort key
# `left_at`) lists exactly them, oldest first, so the warden finds them without a hot item.
LEAVING_INDEX = "leaving"
LEAVING_ATTRIBUTE = "leaving"
LEAVING_VALUE = "1"
LEFT_AT_ATTRIBUTE = "left_at"
# On a capacity-mode visitor's item once the warden freed their place (BOOL true): until then
# the item must stay, or the place could never be freed.
PLACE_FREED_ATTRIBUTE = "place_freed"
# On the item of a visitor who left the line: the consumers passed over their place and counted
# it (`admitted`'s `skipped`), once, whatever the deliveries of their message.
PASSED_OVER_ATTRIBUTE = "passed_over"
GOVERNOR_KEY = "governor"
# The governor's last few decisions with their reasons. Apart from `governor`, which the CLI's
# `rate` deletes to start the governor over, so the history survives an operator's change.
GOVERNOR_LOG_KEY = "governor-log"
# Capacity mode: the warden's progress through the deadline buckets (shared by every warden of
# the room).
WARDEN_KEY = "warden"

# What `beekeeper reset` empties for a room's next event (docs/data-model.md, "Reset"): every
# visitor's item (so a ticket issued before no longer redeems: /client and /polling find no
# admission), the pre-queue and its draw, the counters, minutes, status copies and the
# governor's state and history. It keeps the config item (the settings live there; the last
# event's hold, close and past start are cleared) and the published ticket keys; a minute's
# claim from the current minute on stays, so a late trigger delivery still finds its minute
# taken.
RESET_KEEPS = (CONFIG_KEY, TICKET_KEYS_KEY)
# The arrival shards are not emptied: levelled, they go on giving ordinals above the last
# event's, whose places the reset took (the config's `reset_ordinal` bounds them).
RESET_EMPTIES_PREFIXES = ("v#", "p#", "deadlines#", "draw#", "minute#", "status#")
RESET_EMPTIES_KEYS = (
    DRAW_KEY,
    ADMITTED_COUNTER_KEY,
    INSIDE_KEY,
    GOVERNOR_KEY,
    GOVERNOR_LOG_KEY,
    WARDEN_KEY,
)


def emptied_by_reset(pk: str, *, current_minute: int) -> bool:
    """Whether `beekeeper reset` deletes the item `pk` (an unknown key is kept)."""
    if pk in RESET_EMPTIES_KEYS:
        return True
    if pk.startswith("minute#"):
        minute = pk.removeprefix("minute#")
        return not (minute.lstrip("-").isdigit() and int(minute) >= current_minute)
    return pk.startswith(RESET_EMPTIES_PREFIXES)


# How long bookkeeping items (minutes) stay before TTL removes them.
BOOKKEEPING_TTL_SECONDS = 7 * 24 * 3600
# Admitted visitors' items stay this long after expires_at before TTL removes them, so /polling
# can still say "expired" rather than "unknown" for a while. Expiry itself is enforced against
# the request time, never left to TTL.
VISITOR_TTL_GRACE_SECONDS = 24 * 3600


def origin_url_with_token(origin: str, token: str, ticket: str | None = None) -> str:
    """The origin URL the waiting room sends an admitted visitor to, with the signed ticket
    when the admission has one (a token and a compact JWS hold only URL-safe characters)."""
    separator = "&" if "?" in origin else "?"
    url = f"{origin}{separator}{ORIGIN_TOKEN_PARAMETER}={token}"
    return f"{url}&{ORIGIN_TICKET_PARAMETER}={ticket}" if ticket else url


# -- resource definitions shared by the CDK stack and local mode --------------------------


def table_definition(table_name: str) -> dict[str, Any]:
    """CreateTable parameters for the room's table: what the stack deploys, as an API call.

    The `leaving` index is sparse: only visitors who left and still hold a place have its key,
    so it is empty (and costs nothing) in a rate-mode room. Its projection is the keys only:
    the warden reads the items themselves, consistently."""
    return {
        "TableName": table_name,
        "KeySchema": [{"AttributeName": PARTITION_KEY, "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": LEAVING_ATTRIBUTE, "AttributeType": "S"},
            {"AttributeName": LEFT_AT_ATTRIBUTE, "AttributeType": "N"},
        ],
        "GlobalSecondaryIndexes": [
            {
                "IndexName": LEAVING_INDEX,
                "KeySchema": [
                    {"AttributeName": LEAVING_ATTRIBUTE, "KeyType": "HASH"},
                    {"AttributeName": LEFT_AT_ATTRIBUTE, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }


# A consumer receives only what it is about to admit and deletes it seconds later; a message
# comes back only after a consumer crashed or its write failed, 60 s later.
QUEUE_VISIBILITY_TIMEOUT_SECONDS = 60
# The longest event the room can hold a visitor for: SQS's maximum retention.
QUEUE_RETENTION_SECONDS = 14 * 24 * 3600
# After this many receives without a successful admission a message moves to the dead-letter
# queue, where an alarm asks a person to look (it is never silently dropped).
QUEUE_MAX_RECEIVE_COUNT = 5
