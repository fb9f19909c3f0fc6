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

In a capacity-mode room (`--max-inside N`) it also does the shop's part of a session: it keeps
the visitor's token in its session, renews the room's session with `GET /client?token=` on
every page view, shows how many are inside (the room's count, read as `beekeeper status`
reads it), and its "Done shopping" button ends the visit with `POST <room>/leave?token=`,
server to server, so the place goes to the next in line at once. Each page also loads the
room's presence script with the visitor's token and its integrity hash, under a
Content-Security-Policy that allows exactly the script and its heartbeats: while the tab is
open and used the place is kept, and a closed tab's place goes to the next in line a grace
later (core/presence.py; with `--presence-grace-seconds 0` the heartbeats renew the session).
When the room says the place is gone, the script sends the tab back to the shop's page, which
says the visit has ended.
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
from typing import Any, Protocol

import jwt

from beekeeper.core import plain_page
from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import (
    CLIENT_TOKEN_PARAMETER,
    ORIGIN_TICKET_PARAMETER,
    ORIGIN_TOKEN_PARAMETER,
    Token,
)
from beekeeper.core.headers import browser_origin
from beekeeper.core.plain_page import Brand
from beekeeper.core.settings import capped
from beekeeper.local.http_server import StartResponse
from beekeeper.waiting_room_site import presence

log = logging.getLogger("beekeeper.local")

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


LEFT_TEXT = "Your visit has ended"
# What the shop's pages say they are, under the event's name.
SHOP_LABEL = "Demo shop"
# A shop not told the event's look (tests): the defaults'.
DEMO_BRAND = Brand(SHOP_LABEL)
DONE_PATH = "/done"
DONE_BUTTON = "Done shopping"


def _room_answer(method: str, url: str, token: str, timeout: float) -> dict[str, Any] | None:
    """The room's JSON answer to a call with `?token=`; None when it did not answer (a 503
    included: the room keeps the visitor then)."""
    query = urllib.parse.urlencode({CLIENT_TOKEN_PARAMETER: token})
    request = urllib.request.Request(f"{url}?{query}", method=method)  # noqa: S310 - as below
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - our own loopback room
            body = json.loads(answer.read().decode("utf-8"))
    except (OSError, ValueError) as error:
        log.warning("demo shop: the room's %s %s failed: %s", method, url, error)
        return None
    return body if isinstance(body, dict) else {}


class RoomLink(Protocol):
    """The shop's server-to-server calls to the room, each with the visitor's token."""

    def check(self, token: str) -> bool | None:
        """GET /client: True while the room lets the visitor in (and, in capacity mode, the
        session is renewed); False when it does not; None when the room did not answer."""

    def leave(self, token: str) -> bool | None:
        """POST /leave: True when this call ended the visit; False when it had already ended
        (or the token is unknown); None when the room did not answer."""


@dataclass(frozen=True)
class HttpRoomLink:
    client_url: str
    leave_url: str
    timeout: float = 5.0

    def check(self, token: str) -> bool | None:
        if Token.parse(token) is None:
            return False
        body = _room_answer("GET", self.client_url, token, self.timeout)
        return None if body is None else body.get("allow") is True

    def leave(self, token: str) -> bool | None:
        if Token.parse(token) is None:
            return False
        body = _room_answer("POST", self.leave_url, token, self.timeout)
        return None if body is None else body.get("left") is True


@dataclass(frozen=True)
class Occupancy:
    """How full the shop is, as the room counts it."""

    inside: int
    max_inside: int  # 0: the cap is lifted just now (`beekeeper capacity NAME 0`)


@dataclass(frozen=True)
class CapacityMode:
    """What the shop knows of a capacity-mode room."""

    session_minutes: float
    occupancy: Callable[[], Occupancy | None]  # None: the count can not be read just now
    presence_grace_seconds: int = 0  # the room's (0: heartbeats renew the session)


class Refused(Exception):
    """The visitor's ticket does not let them in; the message says why, for the page."""


@dataclass(frozen=True)
class RoomFacts:
    """What the shop knows of the room it trusts: from the room's deployment record."""

    issuer: str  # the room's base URL
    room: str
    client_url: str
    marketing_url: str
    leave_url: str

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


@dataclass(frozen=True)
class _Visit:
    expires_at: float
    how: str  # how the shop checked the admission, for the page
    token: str  # the visitor's room token: a capacity-mode shop renews and ends the session


class DemoShop:
    def __init__(
        self,
        *,
        room: RoomFacts,
        shop_origin: str,
        capacity: CapacityMode | None = None,
        clock: Callable[[], float] = time.time,
        tickets: TicketCheck | None = None,
        link: RoomLink | None = None,
        brand: Brand = DEMO_BRAND,
    ) -> None:
        self._room = room
        self._brand = brand  # the event's name and look: the shop's pages wear them too
        self._capacity = capacity
        self._tickets = tickets or TicketCheck(room, shop_origin, clock)
        self._link = link or HttpRoomLink(room.client_url, room.leave_url)
        self._clock = clock
        self._lock = threading.Lock()
        self._sessions: dict[str, _Visit] = {}

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if self._capacity is not None and path == DONE_PATH:
            if environ.get("REQUEST_METHOD") != "POST":
                why = f"Use the {DONE_BUTTON} button."
                allow = [("Allow", "POST")]
                return _page(start_response, 405, "Not here", why, "", self._brand, headers=allow)
            return self._done(start_response, environ, self._capacity)
        if path != "/":
            nothing = "There is nothing here."
            return _page(start_response, 404, "Not found", nothing, "", self._brand)
        query = urllib.parse.parse_qs(str(environ.get("QUERY_STRING", "")))
        ticket = (query.get(ORIGIN_TICKET_PARAMETER) or [""])[0]
        token = (query.get(ORIGIN_TOKEN_PARAMETER) or [""])[0]
        if ticket or token:
            return self._arrival(start_response, ticket, token)
        session, visit = self._session(environ)
        if visit is None:
            return self._refuse(start_response, "The shop does not know you as admitted.")
        if self._capacity is None:
            return _page(start_response, 200, ADMITTED_TEXT, visit.how, "", self._brand)
        return self._capacity_page(start_response, self._capacity, session, visit)

    def _arrival(self, start_response: StartResponse, ticket: str, token: str) -> list[bytes]:
        """An admission redirect: check it, start a session, strip it from the URL."""
        if self._capacity is not None and Token.parse(token) is None:
            # Checked before the ticket is redeemed, so a link cut short does not use it up.
            return self._refuse(
                start_response,
                "The admission link has no valid visitor token, which this shop needs to keep "
                "your place with the waiting room.",
            )
        if ticket:
            try:
                self._tickets.admit(ticket)
            except Refused as refusal:
                log.info("demo shop: a ticket was refused: %s", refusal)
                return self._refuse(start_response, str(refusal))
            how = VERIFIED_OFFLINE
        elif self._link.check(token):
            how = CHECKED_WITH_ROOM
        else:
            return self._refuse(start_response, "The waiting room does not know you as admitted.")
        log.info("demo shop: an admitted visitor came in")
        session = secrets.token_urlsafe(24)
        with self._lock:
            self._sessions[session] = _Visit(self._clock() + SESSION_SECONDS, how, token)
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

    def _capacity_page(
        self, start_response: StartResponse, capacity: CapacityMode, session: str, visit: _Visit
    ) -> list[bytes]:
        """A page view renews the room's session (GET /client) and shows how full the shop is."""
        renewed = self._link.check(visit.token)
        if renewed is False:
            self._forget(session)
            return _page(
                start_response,
                200,
                LEFT_TEXT,
                "The waiting room ended your session: nobody checked it for "
                f"{_minutes(capacity.session_minutes)}, or it was ended elsewhere. Your place "
                "went to the next in line.",
                self._again_link(),
                self._brand,
                headers=[_cleared_cookie()],
            )
        renewal = (
            "Loading this page renewed your place with the waiting room (GET /client?token=, "
            "server to server). A shop must call /client for each visitor at least once every "
            f"{_minutes(capacity.session_minutes)}: a verified ticket alone does not keep a "
            "session alive, and a visitor the shop has not checked for that long loses their "
            "place to the next in line."
            if renewed
            else "The shop could not reach the waiting room to renew your place just now; it "
            "tries again on your next page view."
        )
        extra = (
            f"<p id='inside'>{html.escape(_inside_sentence(capacity), quote=False)}</p>"
            f"<p id='renewal'>{html.escape(renewal, quote=False)}</p>"
            f"<p id='presence'>{html.escape(_presence_sentence(capacity), quote=False)}</p>"
            f"<form id='done' method='post' action='{DONE_PATH}'>"
            f"<button type='submit'>{DONE_BUTTON}</button></form>"
            "<p>Done shopping ends your visit: the shop tells the waiting room (POST "
            "/leave?token=, server to server), and your place goes to the next in line at "
            "once.</p>" + presence.script_tag(self._room.issuer, visit.token, gone_url="/")
            # The token is checked (Token.parse) when the visit starts: URL-safe characters.
        )
        # The page's own style and logo, the presence script and its heartbeats: nothing else.
        page_sources = plain_page.own_sources(
            plain_page.style_of(self._brand), self._brand.logo_url
        )
        policy = (
            f"default-src 'none'; {page_sources}; "
            f"{presence.content_security_policy(self._room.issuer)}; "
            "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        )
        return _page(
            start_response,
            200,
            ADMITTED_TEXT,
            visit.how,
            extra,
            self._brand,
            headers=[("Content-Security-Policy", policy)],
        )

    def _done(
        self, start_response: StartResponse, environ: dict[str, Any], capacity: CapacityMode
    ) -> list[bytes]:
        """The Done shopping button: end the shop's session and the room's, server to server."""
        session, visit = self._session(environ)
        if visit is None:
            return self._refuse(start_response, "The shop does not know you as admitted.")
        self._forget(session)
        left = self._link.leave(visit.token)
        log.info("demo shop: a visitor is done shopping (the room's leave: %s)", left)
        why = {
            True: "The shop told the waiting room you are done (POST /leave): your place goes "
            "to the next in line.",
            False: "The waiting room had already ended your visit.",
            None: "The shop could not reach the waiting room: your place frees when your "
            f"session runs out, {_minutes(capacity.session_minutes)} after the last check.",
        }[left]
        return _page(
            start_response,
            200,
            LEFT_TEXT,
            why,
            self._again_link(),
            self._brand,
            headers=[_cleared_cookie()],
        )

    def _session(self, environ: dict[str, Any]) -> tuple[str, _Visit | None]:
        for part in str(environ.get("HTTP_COOKIE", "")).split(";"):
            name, _, value = part.strip().partition("=")
            if name == SESSION_COOKIE:
                with self._lock:
                    found = self._sessions.get(value)
                if found is not None and found.expires_at > self._clock():
                    return value, found
        return "", None

    def _forget(self, session: str) -> None:
        with self._lock:
            self._sessions.pop(session, None)

    def _again_link(self) -> str:
        return (
            f'<p><a href="{html.escape(self._room.marketing_url)}">Join the line</a> '
            "through the waiting room.</p>"
        )

    def _refuse(self, start_response: StartResponse, why: str) -> list[bytes]:
        return _page(
            start_response,
            403,
            REFUSED_TEXT,
            f"{why} The shop turns you away.",
            self._again_link(),
            self._brand,
        )


def _minutes(minutes: float) -> str:
    return f"{minutes:g} minute" + ("" if minutes == 1 else "s")


def _inside_sentence(capacity: CapacityMode) -> str:
    occupancy = capacity.occupancy()
    if occupancy is None:
        return "How many are inside the shop can not be read just now."
    if not capped(occupancy.max_inside):
        return f"Inside the shop now: {occupancy.inside} (no cap just now)."
    return f"Inside the shop now: {occupancy.inside} of {occupancy.max_inside} places held."


def _presence_sentence(capacity: CapacityMode) -> str:
    grace = capacity.presence_grace_seconds
    if not grace:
        return (
            "This page also loads the waiting room's presence script, which keeps your session "
            "alive while the tab is open and in use (the room runs without presence, so a "
            "closed tab's place frees when its session runs out)."
        )
    return (
        "This page also loads the waiting room's presence script: while the tab is open and "
        "in use it keeps your place, and when you close it (or hide it or leave it unused) your "
        f"place goes to the next in line {grace} seconds later. Reloading, or moving to "
        "another page of the shop, keeps it."
    )


def _cleared_cookie() -> tuple[str, str]:
    return ("Set-Cookie", f"{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0")


def _page(
    start_response: StartResponse,
    status: int,
    title: str,
    text: str,
    extra: str,
    brand: Brand,
    *,
    headers: Iterable[tuple[str, str]] = (),
) -> list[bytes]:
    # In the event's look, under its name (core/plain_page.py); the verdict and how the shop
    # checked the visitor are found by their ids.
    body = plain_page.render(
        brand,
        title=title,
        paragraphs=[text],
        label=SHOP_LABEL,
        extra_html=extra,
        heading_id="verdict",
        paragraph_id="how",
        policy=False,
    ).encode()
    reason = {200: "OK", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed"}[status]
    start_response(
        f"{status} {reason}",
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("Cache-Control", "no-store"),
            *headers,
        ],
    )
    return [body]
