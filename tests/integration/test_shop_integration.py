"""docs/shop-integration.md's Python example, run as written against a local room: an admitted
visitor's ticket is verified offline, redeemed once, traded for the shop's session and stripped
from the URL; every ticket a shop must refuse is refused; the /client variant admits once. The
"Capacity mode" section's functions run against a capacity-mode room: /client renews the
session, /leave ends it once.

The same for the Node.js example: tests/js/shop_integration.test.mjs (node --test).
"""

from __future__ import annotations

import io
import types
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import jwt
import pytest

from beekeeper.core import tickets as facts
from beekeeper.core.settings import DEFAULT_CLAIM_MINUTES
from beekeeper.room.tickets import P256_ORDER, b64url, b64url_decode
from tests.support.localroom.http import get
from tests.support.shop_room import ShopRoom, shop_room
from tests.support.snippets import snippet

pytestmark = pytest.mark.slow
CLAIM_SECONDS = round(DEFAULT_CLAIM_MINUTES * 60)  # the capacity room's claim window


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShopRoom]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
        with shop_room() as running:
            yield running


@pytest.fixture(scope="module")
def capacity_room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShopRoom]:
    """A capacity-mode room (one place), for the page's "Capacity mode" section."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BEEKEEPER_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
        with shop_room(max_inside=1) as running:
            yield running


def load_example(
    monkeypatch: pytest.MonkeyPatch, room_url: str, room_name: str, origin: str
) -> types.ModuleType:
    """The page's Python example as a fresh module, configured as a shop would configure it."""
    monkeypatch.setenv("BEEKEEPER_ROOM_URL", room_url)
    monkeypatch.setenv("BEEKEEPER_ROOM_NAME", room_name)
    monkeypatch.setenv("SHOP_ORIGIN", origin)
    module = types.ModuleType("shop_example")
    exec(compile(snippet("shop.py"), "docs/shop-integration.md (shop.py)", "exec"), module.__dict__)  # noqa: S102 - the documented example itself
    return module


@pytest.fixture
def example(room: ShopRoom, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    return load_example(monkeypatch, room.room_url, room.room_name, room.shop_origin)


def visit(app: Any, url: str, cookie: str = "") -> tuple[str, dict[str, str], bytes]:
    """One request to the example's WSGI app, as a server would pass it."""
    parts = urlsplit(url)
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer.update(status=status, headers=dict(headers))

    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": parts.path,
        "QUERY_STRING": parts.query,
        "HTTP_COOKIE": cookie,
        "wsgi.input": io.BytesIO(),
    }
    body = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], body


def test_an_admitted_visitor_is_let_in_once_and_the_ticket_leaves_the_url(
    room: ShopRoom, example: types.ModuleType
) -> None:
    status, headers, _ = visit(example.shop, room.admission_url)
    assert status == "303 See Other"
    # The shop's own page and query, without the token or the ticket.
    assert headers["Location"] == "/sale?from=email"
    cookie = headers["Set-Cookie"].split(";")[0]
    assert cookie.startswith("shop_session=") and "HttpOnly" in headers["Set-Cookie"]
    status, _, body = visit(example.shop, "http://localhost:3000/sale?from=email", cookie)
    assert (status, body) == ("200 OK", b"Welcome to the sale.")

    # The same link again (shared, bookmarked, replayed) lets nobody in.
    status, headers, _ = visit(example.shop, room.admission_url)
    assert status == "403 Forbidden" and "Set-Cookie" not in headers
    assert visit(example.shop, "http://localhost:3000/sale")[0] == "403 Forbidden"


@pytest.mark.parametrize(
    "kind", ["tampered", "other_room", "other_origin", "expired", "unknown_key"]
)
def test_a_ticket_a_shop_must_not_trust_is_refused(
    room: ShopRoom, example: types.ModuleType, kind: str
) -> None:
    ticket = room.tickets[kind]
    assert example.verify_ticket(ticket) is None
    status, headers, _ = visit(
        example.shop, f"http://localhost:3000/sale?beekeeper_ticket={ticket}"
    )
    assert status == "403 Forbidden" and "Set-Cookie" not in headers


def test_the_genuine_ticket_verifies_with_the_documented_claims(
    room: ShopRoom, example: types.ModuleType
) -> None:
    claims = example.verify_ticket(room.tickets["valid"])
    assert claims is not None
    assert set(claims) == set(facts.CLAIMS)
    assert (claims["iss"], claims["aud"], claims["room"]) == (
        room.room_url,
        "http://localhost:3000",
        room.room_name,
    )


def test_the_rooms_keys_are_a_cacheable_jwk_set(room: ShopRoom) -> None:
    answer = get(facts.jwks_url(room.room_url))
    assert answer.status == 200
    assert answer.header("Cache-Control") == f"public, max-age={facts.JWKS_MAX_AGE_SECONDS}"
    (key,) = answer.json()["keys"]
    assert {key["kty"], key["crv"], key["alg"], key["use"]} == {"EC", "P-256", "ES256", "sig"}
    assert "d" not in key
    assert jwt.get_unverified_header(room.tickets["valid"])["kid"] == key["kid"]


def test_the_client_variant_admits_a_token_once(room: ShopRoom, example: types.ModuleType) -> None:
    assert example.admitted_by_room(room.token) is True
    assert example.admitted_by_room(room.token) is False
    assert example.admitted_by_room("forged" + room.token[6:]) is False


def test_in_capacity_mode_the_shop_renews_the_session_and_ends_it_with_leave(
    capacity_room: ShopRoom, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = capacity_room
    example = load_example(monkeypatch, room.room_url, room.room_name, room.shop_origin)
    # The ticket verifies as in rate mode; it proves the admission up to the claim deadline.
    claims = example.verify_ticket(room.tickets["valid"])
    assert claims is not None
    assert claims["exp"] - claims["iat"] == CLAIM_SECONDS
    # The shop's first check is the visitor's arrival; every check renews the session.
    assert example.renew_session(room.token) is True
    assert example.renew_session(room.token) is True
    # Done: the first leave ends the session, a second finds it ended, a check is refused.
    assert example.leave_room(room.token) is True
    assert example.leave_room(room.token) is False
    assert example.renew_session(room.token) is False
    assert example.leave_room("not-a-token") is False
    assert example.renew_session("not-a-token") is False


def test_a_room_that_does_not_answer_keeps_the_visitor(
    capacity_room: ShopRoom, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Port 9 refuses connections on this machine: the room "did not answer".
    example = load_example(
        monkeypatch, "http://127.0.0.1:9/room", capacity_room.room_name, capacity_room.shop_origin
    )
    assert example.renew_session(capacity_room.token) is True
    assert example.leave_room(capacity_room.token) is False


def test_the_rooms_tickets_are_low_s_and_a_high_s_twin_is_refused_by_its_jti(
    room: ShopRoom, example: types.ModuleType
) -> None:
    """Every ticket the room signs carries s <= n / 2 and verifies with the example (PyJWT);
    the twin (r, n - s) verifies too, with the same jti, so the example, which redeems by
    jti, refuses it once the ticket was used."""
    for ticket in room.signed:
        raw = b64url_decode(ticket.rsplit(".", 1)[1])
        assert int.from_bytes(raw[32:], "big") <= P256_ORDER // 2
        assert example.verify_ticket(ticket) is not None
    ticket = room.signed[0]
    head, signature = ticket.rsplit(".", 1)
    raw = b64url_decode(signature)
    high = P256_ORDER - int.from_bytes(raw[32:], "big")
    twin = f"{head}.{b64url(raw[:32] + high.to_bytes(32, 'big'))}"
    assert example.verify_ticket(twin) == example.verify_ticket(ticket)
    status, _, _ = visit(example.shop, f"http://localhost:3000/sale?beekeeper_ticket={ticket}")
    assert status == "303 See Other"
    status, headers, _ = visit(example.shop, f"http://localhost:3000/sale?beekeeper_ticket={twin}")
    assert status == "403 Forbidden" and "Set-Cookie" not in headers
