"""A ticket verified offline, as docs/shop-integration.md tells a shop to: the signature
(ES256) against the key its header names in the room's /jwks.json, then every claim.

`cryptography` verifies (a base dependency); the claims are core/tickets.py's. Each refusal is
a sentence that says what was wrong and where to look.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from beekeeper.core import tickets as facts
from beekeeper.core.tickets import TICKET_PATTERN, admission_subject

# Clocks of the operator's machine and the room's differ a little.
CLOCK_SKEW_SECONDS = 60


class TicketRefused(Exception):
    """The ticket does not verify; the message says why."""


def _b64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise TicketRefused("the ticket is not base64url") from error


def _json_part(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(_b64(text))
    except ValueError as error:
        raise TicketRefused(f"the ticket's {what} is not JSON") from error
    if not isinstance(value, dict):
        raise TicketRefused(f"the ticket's {what} is not a JSON object")
    return value


def verify(
    ticket: str,
    key_set: Any,
    *,
    issuer: str,
    audience: str,
    room: str,
    token_id: str,
    now: float,
) -> dict[str, Any]:
    """The ticket's claims, once its signature and every claim check out."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    if not TICKET_PATTERN.fullmatch(ticket):
        raise TicketRefused("the ticket is not a compact JWS (three base64url parts)")
    header_part, claims_part, signature_part = ticket.split(".")
    header = _json_part(header_part, "header")
    if header.get("alg") != facts.ALGORITHM:
        raise TicketRefused(f"the ticket's alg is {header.get('alg')!r}, not {facts.ALGORITHM}")
    kid = header.get("kid")
    keys = key_set.get("keys") if isinstance(key_set, Mapping) else None
    if not isinstance(keys, list):
        raise TicketRefused("/jwks.json holds no list of keys")
    published = [key for key in keys if isinstance(key, Mapping) and key.get("kid") == kid]
    if not published:
        raise TicketRefused(
            f"its key {kid!r} is not among the {len(keys)} key(s) /jwks.json publishes, so "
            "every shop refuses it"
        )
    jwk = published[0]
    try:
        x, y = (int.from_bytes(_b64(str(jwk[name])), "big") for name in ("x", "y"))
        public_key = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    except (KeyError, ValueError) as error:
        raise TicketRefused(f"the published key {kid!r} is not a P-256 key") from error
    raw = _b64(signature_part)
    if len(raw) != 64:
        raise TicketRefused("the ticket's signature is not 64 bytes (ES256's r and s)")
    signature = encode_dss_signature(
        int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
    )
    try:
        public_key.verify(
            signature, f"{header_part}.{claims_part}".encode("ascii"), ec.ECDSA(hashes.SHA256())
        )
    except InvalidSignature as error:
        raise TicketRefused(
            f"its signature does not verify with the published key {kid!r}"
        ) from error
    claims = _json_part(claims_part, "claims")
    missing = [name for name in facts.CLAIMS if name not in claims]
    if missing:
        raise TicketRefused(f"the ticket lacks the claim(s) {', '.join(missing)}")
    expected = {
        "iss": issuer,
        "aud": audience,
        "room": room,
        "sub": admission_subject(token_id),
        facts.TEST_CLAIM: True,
    }
    for name, value in expected.items():
        if claims.get(name) != value:
            raise TicketRefused(f"its {name} is {claims.get(name)!r}, not {value!r}")
    exp, iat = claims["exp"], claims["iat"]
    if not isinstance(exp, int) or not isinstance(iat, int):
        raise TicketRefused("its exp and iat are not whole seconds")
    if exp <= now:
        raise TicketRefused(f"it expired {now - exp:.0f} s ago")
    if iat > now + CLOCK_SKEW_SECONDS:
        raise TicketRefused(f"it was issued {iat - now:.0f} s in the future (a clock is wrong)")
    return claims
