"""Names and shapes shared by everything that reads or writes the room's table and queue.

docs/data-model.md is the prose of this module: the producer, trigger, consumer and governor
Lambdas, the VTL templates behind /polling and /client, the CLI and local mode all follow it.
Standard library only: shipped inside the Lambda asset.
"""

from __future__ import annotations

import base64
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
# /client?token=...&redeem=1: the first such check answers allow, every later one "redeemed".
# Only this exact value redeems; any other value of the parameter is refused (400), so a shop
# that writes `redeem=true` learns it at once instead of checking without redeeming.
CLIENT_REDEEM_PARAMETER = "redeem"
CLIENT_REDEEM_VALUE = "1"

TOKEN_ID_BYTES = 16  # 128 bits from a CSPRNG
TOKEN_ID_LENGTH = 22  # base64url of 16 bytes, unpadded
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

    @classmethod
    def issue(cls, ordinal: int, token_bytes: Callable[[int], bytes]) -> Token:
        """A new token; `token_bytes` is the CSPRNG (secrets.token_bytes in production)."""
        raw = token_bytes(TOKEN_ID_BYTES)
        if len(raw) != TOKEN_ID_BYTES:
            raise ValueError("the token source must return 16 bytes")
        token_id = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        return cls(token_id, ordinal)


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
# The room's public ticket keys, which GET /jwks.json publishes (core/tickets.py).
TICKET_KEYS_KEY = "ticket-keys"
# Its list of public keys (lambdas/ticket_keys.py writes it, the /jwks.json template reads it).
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
# On the item of a visitor who left the line: the consumers passed over their place and counted
# it (`admitted`'s `skipped`), once, whatever the deliveries of their message.
PASSED_OVER_ATTRIBUTE = "passed_over"
GOVERNOR_KEY = "governor"
# The governor's last few decisions with their reasons. Apart from `governor`, which the CLI's
# `rate` deletes to start the governor over, so the history survives an operator's change.
GOVERNOR_LOG_KEY = "governor-log"

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
