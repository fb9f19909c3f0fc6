"""A tiny demo shop for `beekeeper local --demo`: the origin the room lets visitors through to.

It does what docs/shop-integration.md asks of a real shop's backend:

1. The room redirects an admitted visitor with `?beekeeper_token=<token>&beekeeper_ticket=<JWT>`.
   The shop verifies the ticket offline with a standard JWT library (PyJWT): the ES256
   signature against the room's public keys (from the room's /jwks.json, fetched once and
   cached), and that it is for this shop (`aud`), from this room (`iss`, `room`) and unexpired.
2. It redeems the ticket once: a ticket id (`jti`) seen before is refused, so one shared link
   lets in one visitor.
3. It gives the visitor its own session cookie and redirects to the same page without the
   ticket, so the ticket stays out of the browser's history, bookmarks and shared links.

A redirect with a token but no ticket (a room whose keys are not set up) is checked server to
server with `GET <room>/client?token=<token>` instead. The page says which check let the
visitor in.
"""

from __future__ import annotations

import html
import json
import logging
import secrets
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import jwt

from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import (
    CLIENT_TOKEN_PARAMETER,
    ORIGIN_TICKET_PARAMETER,
    ORIGIN_TOKEN_PARAMETER,
    Token,
)
from beekeeper.core.headers import browser_origin

log = logging.getLogger("beekeeper.local")

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
ADMITTED_TEXT = "You're in"
REFUSED_TEXT = "You skipped the line"
SESSION_COOKIE = "demo_shop_session"
SESSION_SECONDS = 3600
VERIFIED_OFFLINE = (
    "The shop verified your admission ticket offline, without asking the waiting room: its "
    "ES256 signature against the room's public key (fetched once from the room's /jwks.json), "
    "and that it is for this shop, from this room and not expired. The ticket was used once; "
    "the same link will not let anybody else in. This page now knows you by the shop's own "
    "session."
)
CHECKED_WITH_ROOM = (
    "The shop asked the waiting room, server to server (GET /client), and the room confirmed "
    "you came through the line. This page now knows you by the shop's own session."
)


def check_visitor(client_url: str, token: str, *, timeout: float = 5.0) -> bool:
    """The room's answer for this token; anything but {"allow": true} refuses."""
    if Token.parse(token) is None:
        return False
    query = urllib.parse.urlencode({CLIENT_TOKEN_PARAMETER: token})
    try:
        with urllib.request.urlopen(f"{client_url}?{query}", timeout=timeout) as answer:  # noqa: S310 - our own loopback room
            body = json.loads(answer.read().decode("utf-8"))
    except (OSError, ValueError) as error:
        log.warning("demo shop: the room's /client check failed: %s", error)
        return False
    return isinstance(body, dict) and body.get("allow") is True


class Refused(Exception):
    """The visitor's ticket does not let them in; the message says why, for the page."""


@dataclass(frozen=True)
class RoomFacts:
    """What the shop knows of the room it trusts: from the room's deployment record."""

    issuer: str  # the room's base URL
    room: str
    client_url: str
    marketing_url: str

    @property
    def jwks_url(self) -> str:
        return facts.jwks_url(self.issuer)


class TicketCheck:
    """Verifies and redeems tickets: offline but for the first fetch of the room's keys."""

    def __init__(self, room: RoomFacts, shop_origin: str, clock: Callable[[], float]) -> None:
        self._room = room
        self._audience = browser_origin(shop_origin)
        self._keys = jwt.PyJWKClient(room.jwks_url, lifespan=facts.JWKS_MAX_AGE_SECONDS, timeout=5)
        self._clock = clock
        self._lock = threading.Lock()
        self._redeemed: dict[str, float] = {}  # jti -> the ticket's expiry

    def admit(self, ticket: str) -> dict[str, Any]:
        claims = self._verify(ticket)
        with self._lock:
            now = self._clock()
            self._redeemed = {j: exp for j, exp in self._redeemed.items() if exp > now}
            if claims["jti"] in self._redeemed:
                raise Refused("This admission link was already used: it lets in one visitor.")
            self._redeemed[claims["jti"]] = float(claims["exp"])
        return claims

    def _verify(self, ticket: str) -> dict[str, Any]:
        try:
            key = self._keys.get_signing_key_from_jwt(ticket)
            claims: dict[str, Any] = jwt.decode(
                ticket,
                key.key,
                algorithms=[facts.ALGORITHM],
                audience=self._audience,
                issuer=self._room.issuer,
                options={"require": list(facts.CLAIMS)},
            )
        except jwt.ExpiredSignatureError as error:
            raise Refused("Your admission ticket has expired.") from error
        except jwt.InvalidAudienceError as error:
            raise Refused("This admission ticket is for another shop.") from error
        except jwt.InvalidIssuerError as error:
            raise Refused("This admission ticket is from another waiting room.") from error
        except jwt.PyJWKClientError as error:
            raise Refused(
                "This admission ticket is signed by a key the room does not publish."
            ) from error
        except jwt.InvalidTokenError as error:
            raise Refused("This admission ticket is not genuine.") from error
        if claims.get("room") != self._room.room:
            raise Refused("This admission ticket is from another waiting room.")
        return claims


class DemoShop:
    def __init__(
        self,
        *,
        room: RoomFacts,
        shop_origin: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._room = room
        self._tickets = TicketCheck(room, shop_origin, clock)
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, tuple[float, str]] = {}  # id -> (expiry, how they got in)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "/") != "/":
            return _page(start_response, 404, "Not found", "There is nothing here.", "")
        query = urllib.parse.parse_qs(str(environ.get("QUERY_STRING", "")))
        ticket = (query.get(ORIGIN_TICKET_PARAMETER) or [""])[0]
        token = (query.get(ORIGIN_TOKEN_PARAMETER) or [""])[0]
        if ticket or token:
            return self._arrival(start_response, ticket, token)
        how = self._session(environ)
        if how is not None:
            return _page(start_response, 200, ADMITTED_TEXT, how, "")
        return self._refuse(start_response, "The shop does not know you as admitted.")

    def _arrival(self, start_response: StartResponse, ticket: str, token: str) -> list[bytes]:
        """An admission redirect: check it, start a session, strip it from the URL."""
        if ticket:
            try:
                self._tickets.admit(ticket)
            except Refused as refusal:
                log.info("demo shop: a ticket was refused: %s", refusal)
                return self._refuse(start_response, str(refusal))
            how = VERIFIED_OFFLINE
        elif check_visitor(self._room.client_url, token):
            how = CHECKED_WITH_ROOM
        else:
            return self._refuse(start_response, "The waiting room does not know you as admitted.")
        log.info("demo shop: an admitted visitor came in")
        session = secrets.token_urlsafe(24)
        with self._lock:
            self._sessions[session] = (self._clock() + SESSION_SECONDS, how)
        cookie = (
            f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Lax; Max-Age={SESSION_SECONDS}"
        )
        start_response(
            "303 See Other",
            [
                ("Location", "/"),
                ("Set-Cookie", cookie),
                ("Cache-Control", "no-store"),
                ("Referrer-Policy", "no-referrer"),
                ("Content-Length", "0"),
            ],
        )
        return [b""]

    def _session(self, environ: dict[str, Any]) -> str | None:
        for part in str(environ.get("HTTP_COOKIE", "")).split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE:
                with self._lock:
                    found = self._sessions.get(value)
                if found is not None and found[0] > self._clock():
                    return found[1]
        return None

    def _refuse(self, start_response: StartResponse, why: str) -> list[bytes]:
        link = (
            f'<p><a href="{html.escape(self._room.marketing_url)}">Join the line</a> '
            "through the waiting room.</p>"
        )
        return _page(start_response, 403, REFUSED_TEXT, f"{why} The shop turns you away.", link)


def _page(
    start_response: StartResponse, status: int, title: str, text: str, extra: str
) -> list[bytes]:
    # Text content only (no attribute values), so apostrophes may stay as they are.
    title_html, text_html = html.escape(title, quote=False), html.escape(text, quote=False)
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Demo shop: {title_html}</title></head><body>"
        f"<h1 id='verdict'>{title_html}</h1><p id='how'>{text_html}</p>{extra}"
        "</body></html>"
    ).encode()
    reason = {200: "OK", 403: "Forbidden", 404: "Not Found"}[status]
    start_response(
        f"{status} {reason}",
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [body]
