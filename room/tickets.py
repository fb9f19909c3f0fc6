"""The admission ticket, signed: the consumer's one hook, the key ring it signs from, ES256.

The consumer asks `TicketIssuer.attributes(token, admitted_at, expires_at)` for each visitor it
admits and puts the answer on the visitor's `v#` item; /polling (and the marketing link, for a
returning visitor) put the stored ticket into the redirect to the shop, since a mapping
template can not sign. What the ticket says and how keys are timed: core/tickets.py.

The private keys live in the room's secret (AWS Secrets Manager), as a JSON key ring written by
`beekeeper keys` (room/ticket_keys.py) and read here, once per KEY_REFRESH_SECONDS per
container: signing costs no AWS call per admission. A ring that can not be read, or holds no
key that signs yet, admits as before, without a ticket: nobody waits for a key.

`cryptography` (OpenSSL) signs; it is imported on first use, so the other functions, and a
consumer that issues no tickets, never load it. No key material is ever logged.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import TICKET_ATTRIBUTE, Token
from beekeeper.core.headers import browser_origin
from beekeeper.core.settings import RoomSettings

log = logging.getLogger("beekeeper.tickets")

COORDINATE_BYTES = 32  # P-256
# The order n of P-256's base point (SEC 2, secp256r1): an ECDSA signature (r, s) and its twin
# (r, n - s) both verify, so a ticket is signed with the lower of the two, s <= n / 2.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
# The JWK members of a public key, and of its private key (which adds d).
PUBLIC_MEMBERS = ("kty", "crv", "x", "y")


class KeyRingError(ValueError):
    """The secret does not hold a key ring this code can use."""


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _compact_json(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode()


def thumbprint(jwk: Mapping[str, Any]) -> str:
    """RFC 7638: the key's SHA-256 thumbprint, the `kid` it is published and signs under."""
    required = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    return b64url(hashlib.sha256(_compact_json(required)).digest())


def public_jwk(private: Mapping[str, Any]) -> dict[str, str]:
    """The public half of a ring key, as /jwks.json publishes it."""
    return {
        **{name: str(private[name]) for name in PUBLIC_MEMBERS},
        "kid": str(private["kid"]),
        "alg": facts.ALGORITHM,
        "use": "sig",
    }


def generate_private_jwk(*, signs_from: int) -> dict[str, Any]:
    """A new P-256 key as a ring entry: its private JWK, `kid` and when it may start signing."""
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    numbers = key.private_numbers()
    public = numbers.public_numbers
    jwk: dict[str, Any] = {
        "kty": facts.KEY_TYPE,
        "crv": facts.CURVE,
        "x": b64url(public.x.to_bytes(COORDINATE_BYTES, "big")),
        "y": b64url(public.y.to_bytes(COORDINATE_BYTES, "big")),
        "d": b64url(numbers.private_value.to_bytes(COORDINATE_BYTES, "big")),
    }
    jwk["kid"] = thumbprint(jwk)
    jwk["signs_from"] = int(signs_from)
    return jwk


@dataclass(frozen=True)
class KeyRing:
    """The secret's contents: the issuer (`iss`) and the private keys with their start times."""

    issuer: str
    keys: tuple[Mapping[str, Any], ...]

    @classmethod
    def parse(cls, text: str) -> KeyRing:
        try:
            data = json.loads(text)
        except ValueError as error:
            raise KeyRingError("the ticket key secret is not JSON") from error
        if not isinstance(data, dict):
            raise KeyRingError("the ticket key secret is not a JSON object")
        issuer = data.get("issuer", "")
        keys = data.get("keys", [])
        if not isinstance(issuer, str) or not isinstance(keys, list):
            raise KeyRingError("the ticket key secret's issuer or keys are malformed")
        for entry in keys:
            if not _is_ring_key(entry):
                raise KeyRingError("the ticket key secret holds a malformed key")
        return cls(issuer, tuple(keys))

    def dump(self) -> str:
        return json.dumps({"issuer": self.issuer, "keys": [dict(k) for k in self.keys]})

    def signing_key(self, now: float) -> Mapping[str, Any] | None:
        """The key that signs at `now`: the latest of those whose start has come."""
        started = [key for key in self.keys if key["signs_from"] <= now]
        return max(started, key=lambda key: key["signs_from"]) if started else None


def _is_ring_key(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    texts = ("kty", "crv", "x", "y", "d", "kid")
    return (
        all(isinstance(entry.get(name), str) for name in texts)
        and entry["kty"] == facts.KEY_TYPE
        and entry["crv"] == facts.CURVE
        and isinstance(entry.get("signs_from"), int)
        and not isinstance(entry.get("signs_from"), bool)
    )


class TicketSigner:
    """Signs tickets with one key: a compact JWS, ES256, the key's `kid` in the header."""

    def __init__(self, key: Mapping[str, Any]) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self.kid = str(key["kid"])
        private_value = int.from_bytes(b64url_decode(str(key["d"])), "big")
        self._key = ec.derive_private_key(private_value, ec.SECP256R1())
        public = self._key.public_key().public_numbers()
        x, y = (b64url(n.to_bytes(COORDINATE_BYTES, "big")) for n in (public.x, public.y))
        if (x, y) != (key["x"], key["y"]):
            raise KeyRingError(f"key {self.kid}: its private and public parts do not match")
        header = {"alg": facts.ALGORITHM, "kid": self.kid, "typ": "JWT"}
        self._header = b64url(_compact_json(header))

    def sign(self, claims: Mapping[str, Any]) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        signing_input = f"{self._header}.{b64url(_compact_json(dict(claims)))}"
        der = self._key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        # Canonical (low-S): one encoding per signature, so a ticket string can not be re-encoded
        # into a second string that verifies too (shops still redeem by `jti`).
        s = min(s, P256_ORDER - s)
        # JWS wants the raw pair r || s, 32 bytes each (RFC 7518 3.4), not DER.
        raw = r.to_bytes(COORDINATE_BYTES, "big") + s.to_bytes(COORDINATE_BYTES, "big")
        return f"{signing_input}.{b64url(raw)}"


class TicketHook(Protocol):
    """What the consumer calls for each admitted visitor: attributes for the `v#` item."""

    def attributes(
        self, token: Token, admitted_at: int, expires_at: int
    ) -> dict[str, dict[str, str]]: ...


class NoTickets:
    """Issues nothing: a room without ticket keys, the simulator, tests of other things."""

    def attributes(
        self, token: Token, admitted_at: int, expires_at: int
    ) -> dict[str, dict[str, str]]:
        return {}


NO_TICKETS = NoTickets()


class TicketIssuer:
    """Signs a ticket for each admitted visitor with the room's current key.

    `read_ring` returns the secret's text (a GetSecretValue); it is called at most once per
    KEY_REFRESH_SECONDS. A failed read keeps the ring read before, until it is older than
    KEY_STALE_SECONDS (then no tickets until a read succeeds: a consumer that can not see a
    rotation must not go on signing with a key that is about to retire).
    """

    def __init__(
        self,
        *,
        read_ring: Callable[[], str],
        settings: RoomSettings,
        clock: Callable[[], float],
        random_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        self._read_ring = read_ring
        self._audience = browser_origin(settings.origin)
        self._room = settings.name
        self._clock = clock
        self._random_bytes = random_bytes
        self._ring: KeyRing | None = None
        self._read_at = float("-inf")
        self._tried_at = float("-inf")
        self._signers: dict[str, TicketSigner] = {}
        self._unsigned_said_at = float("-inf")
        self.signed = 0
        self.unsigned = 0

    def attributes(
        self, token: Token, admitted_at: int, expires_at: int
    ) -> dict[str, dict[str, str]]:
        ticket = self.ticket(token, admitted_at, expires_at)
        return {TICKET_ATTRIBUTE: {"S": ticket}} if ticket else {}

    def ticket(self, token: Token, admitted_at: int, expires_at: int) -> str | None:
        now = self._clock()
        signer = self._signer(now)
        if signer is None or self._ring is None:
            self.unsigned += 1
            return None
        claims: dict[str, Any] = {
            "iss": self._ring.issuer,
            "aud": self._audience,
            "sub": facts.admission_subject(token.id),
            "jti": b64url(self._random_bytes(facts.JTI_BYTES)),
            "room": self._room,
            "iat": int(admitted_at),
            "exp": int(expires_at),
        }
        if token.is_test:
            claims[facts.TEST_CLAIM] = True
        self.signed += 1
        return signer.sign(claims)

    def _signer(self, now: float) -> TicketSigner | None:
        if now - self._tried_at >= facts.KEY_REFRESH_SECONDS:
            self._refresh(now)
        ring = self._ring
        reason = ""
        if ring is None:
            reason = "no key ring could be read"
        elif now - self._read_at > facts.KEY_STALE_SECONDS:
            reason = f"the key ring was last read {now - self._read_at:.0f} s ago"
        elif not ring.issuer:
            reason = "the key ring names no issuer"
        key = ring.signing_key(now) if ring is not None and not reason else None
        if key is None and not reason:
            reason = "no key signs yet (`beekeeper keys rotate` publishes one)"
        if key is None:
            if now - self._unsigned_said_at >= facts.KEY_REFRESH_SECONDS:
                self._unsigned_said_at = now
                log.warning("admitting without tickets: %s", reason)
            return None
        kid = str(key["kid"])
        signer = self._signers.get(kid)
        if signer is None:
            signer = self._signers[kid] = TicketSigner(key)
        return signer

    def _refresh(self, now: float) -> None:
        self._tried_at = now
        try:
            ring = KeyRing.parse(self._read_ring())
        except KeyRingError as error:
            log.error("the ticket key ring is unusable: %s", error)
            return
        except Exception as error:
            # The exception's text only: never the secret's value.
            log.warning("could not read the ticket key ring: %s", type(error).__name__)
            return
        self._ring, self._read_at = ring, now
        # A retired key's signer goes with it.
        kids = {str(key["kid"]) for key in ring.keys}
        self._signers = {kid: s for kid, s in self._signers.items() if kid in kids}


def secret_reader(secretsmanager: Any, secret_id: str) -> Callable[[], str]:
    """`read_ring` for an AWS Secrets Manager secret (the consumer's only call for tickets)."""

    def read() -> str:
        return str(secretsmanager.get_secret_value(SecretId=secret_id)["SecretString"])

    return read
