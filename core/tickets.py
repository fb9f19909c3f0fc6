"""The signed admission ticket: what it says, how its keys are timed, where they are published.

When a visitor is admitted the consumer signs a ticket (room/tickets.py) and the redirect to
the shop carries it as `?beekeeper_ticket=<ticket>` beside the token. It is a compact JWS,
ES256 (ECDSA P-256 with SHA-256), with the header `kid` naming the key, so a shop verifies it
with the JWT library it already uses against the room's public keys at `GET /jwks.json`,
without a call to the room. Asymmetric, so no shop can mint one. Nothing in it is secret.
docs/shop-integration.md is the prose of this module. Standard library only: the Lambda asset
ships it.
"""

from __future__ import annotations

import base64
import hashlib
import re

from beekeeper.core.routes import JWKS, MARKETING_LINK

ALGORITHM = "ES256"
KEY_TYPE = "EC"
CURVE = "P-256"
# The ticket's claims, exactly these: iss (the room's base URL: the marketing link without
# /beekeeper, stage included), aud (the shop's origin as a browser sends it), sub (which
# admission: `admission_subject`, never the token's id, the secret that admits), jti (random,
# for a shop that redeems offline), room (the room's name), iat (admitted at) and exp (the
# admission's expiry), both epoch seconds.
CLAIMS = ("iss", "aud", "sub", "jti", "room", "iat", "exp")
# One more claim, only in a test visitor's ticket (`beekeeper check`; core/datamodel.py's
# TEST_ORDINAL): `"test": true`, so a shop can tell the operator's check from a customer.
TEST_CLAIM = "test"
JTI_BYTES = 16

# A compact JWS: three base64url parts. The /polling template spells out the same pattern
# before it puts a stored ticket into a redirect; tests keep them equal.
TICKET_PATTERN = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")

# A public JWK as the room stores it: compact JSON of base64url values only. The /jwks.json
# template publishes only what matches, so nothing else can reach the answer.
PUBLIC_JWK_PATTERN = re.compile(r'^\{[A-Za-z0-9_":,-]+\}$')

# GET /jwks.json (core/routes.py's JWKS): the room's public keys, cacheable for
# JWKS_MAX_AGE_SECONDS.
JWKS_MAX_AGE_SECONDS = 300

# Key timing (room/ticket_keys.py applies it):
# - a new key is published at once and signs only JWKS_MAX_AGE_SECONDS later, when every
#   shop's cached copy of the key set has it;
# - a consumer re-reads its keys every KEY_REFRESH_SECONDS and signs nothing with keys it read
#   more than KEY_STALE_SECONDS ago, so no consumer signs with a superseded key after its
#   successor starts signing;
# - a superseded key stays published until every ticket it signed has expired, plus
#   RETIRE_MARGIN_SECONDS for clocks that disagree, and then retires.
KEY_REFRESH_SECONDS = 60
KEY_STALE_SECONDS = JWKS_MAX_AGE_SECONDS
RETIRE_MARGIN_SECONDS = 60

# The ticket keys' secret as the stack and local mode create it: a key ring without keys
# (`beekeeper deploy`, `beekeeper local` and `beekeeper keys` write them; room/tickets.py).
EMPTY_KEY_RING = '{"keys": []}'


def issuer_of(marketing_url: str) -> str:
    """The room's base URL (`iss`): its marketing link without `/beekeeper`, stage included."""
    if not marketing_url.endswith(MARKETING_LINK.path):
        raise ValueError(
            f"{marketing_url!r} is not a room's marketing link (…{MARKETING_LINK.path})"
        )
    return marketing_url.removesuffix(MARKETING_LINK.path)


def jwks_url(issuer: str) -> str:
    return f"{issuer}{JWKS.path}"


def admission_subject(token_id: str) -> str:
    """`sub`: names the admission without revealing the token's id.

    A one-way digest of the id, so the operator can tell which admission a ticket belongs to
    from the visitor's token, while the ticket (which travels through the shop's logs) does not
    give the id away: the id is 128 random bits, out of reach of a search.
    """
    digest = hashlib.sha256(f"beekeeper admission {token_id}".encode()).digest()
    return base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode("ascii")
