"""The admission ticket, checked by a standard verifier (PyJWT): format, claims, keys, refusals."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import jwt
import pytest

from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import TICKET_ATTRIBUTE, Token
from beekeeper.core.settings import RoomSettings
from beekeeper.room.tickets import (
    COORDINATE_BYTES,
    P256_ORDER,
    KeyRing,
    KeyRingError,
    TicketIssuer,
    TicketSigner,
    b64url,
    b64url_decode,
    generate_private_jwk,
    public_jwk,
    thumbprint,
)

# PyJWT checks iat and exp against the real clock: tickets here are issued "now".
NOW = int(time.time())
ISSUER = "https://abc123.execute-api.eu-west-1.amazonaws.com/sale"
SETTINGS = RoomSettings(
    name="sale",
    display_name="Spring sale",
    region="eu-west-1",
    origin="https://Bücher.Example.com:8443/drop?from=room",
    rate=600,
)
AUDIENCE = "https://xn--bcher-kva.example.com:8443"
TOKEN = Token("S3cretVisitorId-abcdef", 42)


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Ring:
    """The secret's text as the consumer reads it, counting the reads; `fail` makes them fail."""

    def __init__(self, ring: KeyRing) -> None:
        self.text = ring.dump()
        self.reads = 0
        self.fail = False

    def __call__(self) -> str:
        self.reads += 1
        if self.fail:
            raise ConnectionError("secrets manager unreachable")
        return self.text


def issuer_for(ring: KeyRing, clock: Clock) -> tuple[TicketIssuer, Ring]:
    source = Ring(ring)
    counter = iter(range(1, 1000))
    issuer = TicketIssuer(
        read_ring=source,
        settings=SETTINGS,
        clock=clock,
        random_bytes=lambda n: next(counter).to_bytes(n, "big"),
    )
    return issuer, source


def verify(
    ticket: str, jwk: dict[str, str], *, verify_exp: bool = True, leeway: int = 0
) -> dict[str, object]:
    claims: dict[str, object] = jwt.decode(
        ticket,
        jwt.PyJWK(jwk),
        algorithms=["ES256"],
        audience=AUDIENCE,
        issuer=ISSUER,
        options={"require": list(facts.CLAIMS), "verify_exp": verify_exp},
        leeway=leeway,
    )
    return claims


@pytest.fixture
def key() -> dict[str, object]:
    return generate_private_jwk(signs_from=NOW - 10)


def test_a_ticket_is_an_es256_jws_with_exactly_the_issues_claims(key: dict[str, object]) -> None:
    clock = Clock()
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), clock)
    ticket = issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert ticket is not None and facts.TICKET_PATTERN.fullmatch(ticket)
    header = jwt.get_unverified_header(ticket)
    assert header == {"alg": "ES256", "kid": key["kid"], "typ": "JWT"}
    claims = verify(ticket, public_jwk(key))
    assert set(claims) == set(facts.CLAIMS)
    assert claims["iss"] == ISSUER
    assert claims["aud"] == AUDIENCE  # the origin's scheme://host:port, in ASCII
    assert claims["room"] == "sale"
    assert (claims["iat"], claims["exp"]) == (NOW, NOW + 3600)
    # sub names the admission without the token's id, the secret that admits.
    assert claims["sub"] == facts.admission_subject(TOKEN.id)
    assert TOKEN.id not in ticket and TOKEN.id not in json.dumps(claims)
    assert "d" not in header and str(key["d"]) not in ticket


def test_each_ticket_has_its_own_random_jti(key: dict[str, object]) -> None:
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    first, second = (issuer.ticket(TOKEN, NOW, NOW + 3600) for _ in range(2))
    assert first and second
    jtis = {verify(t, public_jwk(key))["jti"] for t in (first, second)}
    assert len(jtis) == 2
    assert all(len(b64url_decode(str(j))) == facts.JTI_BYTES for j in jtis)


def signature_pair(ticket: str) -> tuple[int, int]:
    raw = b64url_decode(ticket.rsplit(".", 1)[1])
    assert len(raw) == 2 * COORDINATE_BYTES
    return int.from_bytes(raw[:COORDINATE_BYTES], "big"), int.from_bytes(
        raw[COORDINATE_BYTES:], "big"
    )


def with_signature(ticket: str, r: int, s: int) -> str:
    raw = r.to_bytes(COORDINATE_BYTES, "big") + s.to_bytes(COORDINATE_BYTES, "big")
    return f"{ticket.rsplit('.', 1)[0]}.{b64url(raw)}"


def test_every_signature_is_the_canonical_low_s_one_and_verifies(key: dict[str, object]) -> None:
    """ECDSA's (r, s) and (r, n - s) both verify; a ticket always carries s <= n / 2, so it
    has one string only. ECDSA's s is uniform below n, so of 500 signings about half would
    carry the high one without the canonical form."""
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    tickets = [issuer.ticket(TOKEN, NOW, NOW + 3600) for _ in range(500)]
    for ticket in tickets:
        assert ticket is not None
        _, s = signature_pair(ticket)
        assert 0 < s <= P256_ORDER // 2
        assert verify(ticket, public_jwk(key))["sub"] == facts.admission_subject(TOKEN.id)


def test_the_high_s_twin_verifies_too_so_shops_redeem_by_jti(key: dict[str, object]) -> None:
    """Why the signature is canonical, and why the shop remembers `jti`, not the string: the
    twin (r, n - s) of a ticket is a second string that verifies, with the same claims (this
    also holds P256_ORDER to the curve's order: with a wrong n the twin would not verify)."""
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    ticket = issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert ticket is not None
    r, s = signature_pair(ticket)
    twin = with_signature(ticket, r, P256_ORDER - s)
    assert twin != ticket
    assert verify(twin, public_jwk(key)) == verify(ticket, public_jwk(key))


def test_the_consumer_gets_the_ticket_as_the_visitor_items_attribute(
    key: dict[str, object],
) -> None:
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    attributes = issuer.attributes(TOKEN, NOW, NOW + 3600)
    assert list(attributes) == [TICKET_ATTRIBUTE]
    assert verify(attributes[TICKET_ATTRIBUTE]["S"], public_jwk(key))["room"] == "sale"


def _tampered(ticket: str) -> str:
    header, payload, signature = ticket.split(".")
    claims = json.loads(b64url_decode(payload))
    claims["exp"] += 86_400
    return ".".join((header, b64url(json.dumps(claims).encode()), signature))


@pytest.mark.parametrize(
    ("spoil", "error"),
    [
        (_tampered, jwt.InvalidSignatureError),
        (
            lambda t: t[:-4] + ("AAAA" if not t.endswith("AAAA") else "BBBB"),
            jwt.InvalidSignatureError,
        ),
    ],
)
def test_a_changed_ticket_is_refused(
    key: dict[str, object], spoil: Callable[[str], str], error: type[Exception]
) -> None:
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    ticket = issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert ticket is not None
    with pytest.raises(error):
        verify(spoil(ticket), public_jwk(key))


def test_another_rooms_key_or_audience_or_an_expired_ticket_is_refused(
    key: dict[str, object],
) -> None:
    issuer, _ = issuer_for(KeyRing(ISSUER, (key,)), Clock())
    ticket = issuer.ticket(TOKEN, NOW - 7200, NOW - 3600)
    assert ticket is not None
    with pytest.raises(jwt.ExpiredSignatureError):
        verify(ticket, public_jwk(key))
    fresh = issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert fresh is not None
    other = generate_private_jwk(signs_from=0)
    with pytest.raises(jwt.InvalidSignatureError):
        verify(fresh, public_jwk(other), verify_exp=False)
    with pytest.raises(jwt.InvalidAudienceError):
        jwt.decode(
            fresh, jwt.PyJWK(public_jwk(key)), algorithms=["ES256"], audience="https://x.example"
        )


def test_the_kid_is_the_keys_rfc7638_thumbprint_and_the_public_jwk_has_no_private_part(
    key: dict[str, object],
) -> None:
    published = public_jwk(key)
    assert "d" not in published
    assert published["kid"] == key["kid"] == thumbprint(published)
    assert (published["alg"], published["use"], published["crv"]) == ("ES256", "sig", "P-256")
    assert facts.PUBLIC_JWK_PATTERN.fullmatch(json.dumps(published, separators=(",", ":")))


def test_the_latest_key_that_has_started_signs() -> None:
    old = generate_private_jwk(signs_from=NOW - 1000)
    new = generate_private_jwk(signs_from=NOW + facts.JWKS_MAX_AGE_SECONDS)
    clock = Clock()
    issuer, _ = issuer_for(KeyRing(ISSUER, (old, new)), clock)
    before = issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert before and jwt.get_unverified_header(before)["kid"] == old["kid"]
    clock.now = NOW + facts.JWKS_MAX_AGE_SECONDS
    after = issuer.ticket(TOKEN, int(clock.now), int(clock.now) + 3600)
    assert after and jwt.get_unverified_header(after)["kid"] == new["kid"]
    verify(after, public_jwk(new), leeway=facts.JWKS_MAX_AGE_SECONDS)


def test_the_ring_is_read_once_a_minute_and_a_failed_read_keeps_it_until_it_is_stale(
    key: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    issuer, source = issuer_for(KeyRing(ISSUER, (key,)), clock)
    for _ in range(100):
        assert issuer.ticket(TOKEN, NOW, NOW + 3600)
    assert source.reads == 1  # no AWS call per admission
    source.fail = True
    clock.now += facts.KEY_REFRESH_SECONDS
    assert issuer.ticket(TOKEN, NOW, NOW + 3600)  # the ring read a minute ago still signs
    assert source.reads == 2
    clock.now = NOW + facts.KEY_STALE_SECONDS + 1
    with caplog.at_level(logging.WARNING, logger="beekeeper.tickets"):
        assert issuer.ticket(TOKEN, NOW, NOW + 3600) is None
    assert "admitting without tickets" in caplog.text
    assert str(key["d"]) not in caplog.text
    source.fail = False
    clock.now += facts.KEY_REFRESH_SECONDS
    assert issuer.ticket(TOKEN, NOW, NOW + 3600)


def test_no_key_yet_or_an_unusable_secret_admits_without_a_ticket(
    caplog: pytest.LogCaptureFixture,
) -> None:
    later = generate_private_jwk(signs_from=NOW + 3600)
    issuer, _ = issuer_for(KeyRing(ISSUER, (later,)), Clock())
    assert issuer.attributes(TOKEN, NOW, NOW + 3600) == {}
    empty, _ = issuer_for(KeyRing("", ()), Clock())
    assert empty.ticket(TOKEN, NOW, NOW + 3600) is None
    broken, source = issuer_for(KeyRing(ISSUER, ()), Clock())
    source.text = '{"issuer": "x", "keys": [{"kty": "EC", "d": "secret-material"}]}'
    with caplog.at_level(logging.WARNING, logger="beekeeper.tickets"):
        assert broken.ticket(TOKEN, NOW, NOW + 3600) is None
    assert "unusable" in caplog.text
    assert "secret-material" not in caplog.text


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"keys": {}}', '{"issuer": 3}', '{"keys": [{"kty": "RSA"}]}'],
)
def test_a_malformed_ring_is_refused(text: str) -> None:
    with pytest.raises(KeyRingError):
        KeyRing.parse(text)


def test_the_stacks_placeholder_is_an_empty_ring() -> None:
    ring = KeyRing.parse('{"keys": [], "unused": "Xy12"}')
    assert ring == KeyRing("", ())
    assert ring.signing_key(NOW) is None


def test_a_key_whose_halves_do_not_match_is_refused(key: dict[str, object]) -> None:
    other = generate_private_jwk(signs_from=0)
    with pytest.raises(KeyRingError, match="do not match"):
        TicketSigner({**key, "x": other["x"]})


def test_the_issuer_is_the_marketing_link_without_beekeeper() -> None:
    assert facts.issuer_of(f"{ISSUER}/beekeeper") == ISSUER
    assert facts.jwks_url(ISSUER) == f"{ISSUER}/jwks.json"
    with pytest.raises(ValueError, match="marketing link"):
        facts.issuer_of(f"{ISSUER}/room")
