"""POST /leave (capacity mode): a visitor leaves the line or the shop, for a token the room issued.

A waiting visitor has no item in the table, so a mapping template can not tell a token the room
issued from a forged one, and a flood of forged leaves used to write an item each and fill the
warden's `leaving` index ahead of real leavers. The route is therefore this function's (the
producer Lambda's second route, since it alone holds the room's keys): a token whose id does
not carry the room's mark (core/datamodel.Token.issued_with) writes nothing and is answered as
an unknown token always was, `{"left": true}`; a marked token sends core/sessions.py's
UpdateItem, exactly the request the template sent. The answers are today's:

| the request | answer |
|---|---|
| no token, or a malformed one | 200 `{"left": false}` |
| a well-formed token the room never issued | 200 `{"left": true}`, nothing written |
| the room's token: left (the first time) | 200 `{"left": true}` |
| the room's token: left already, or its place is gone | 200 `{"left": false}` |
| the table throttled or failed | 503 `{"left": false}`, `Retry-After: 5` |
| the cookie, from a page neither the room's nor the shop's | 403 `{"left": false, "message"}` |

The token comes from `?token=` (a shop's server, as before), an app's `Beekeeper-Token` header,
or the visitor's cookie (the page's "Leave the line" beacon). The body is never read, so any
content type is taken (a beacon's text/plain, JSON, a form). Every answer carries the shop's
CORS headers and is never cached.

**Whose page may leave with the cookie.** A text/plain POST needs no CORS preflight, and the
browser attaches the room's cookie to it from any page of the same site (SameSite=Lax stops
only cross-site ones). So a leave that rides on the cookie is taken only from the room's own
page or the shop's origin (`from_allowed_page`): by `Sec-Fetch-Site: same-origin` (W3C Fetch
Metadata Request Headers; no page can set it), which says the page is on the room's own
address, else by the `Origin` header a browser puts on every POST (the Fetch Standard, "append
a request `Origin` header"), which must be the shop's or the room's. Anything else, a same-site
page on another port or subdomain, or another site, gets 403 and nothing is written. A request
with neither header is not a browser's (no page can make one), and `?token=` or the app header
need no such check: no page can read the token to send it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import CLIENT_TOKEN_PARAMETER, TOKEN_HEADER, Token
from beekeeper.core.headers import JSON_ANSWER_HEADERS, browser_origin, cors_headers
from beekeeper.core.routes import ERROR_RETRY_AFTER_SECONDS
from beekeeper.core.sessions import leave_request
from beekeeper.room.cookies import header_values, token_from_request
from beekeeper.room.room_state import error_code

log = logging.getLogger("beekeeper.leaving")

# The proxy event's `resource` on this route (the producer's other route is /beekeeper).


@dataclass(frozen=True)
class LeaveAnswer:
    status: int
    left: bool


LEFT = LeaveAnswer(200, True)
NOT_LEFT = LeaveAnswer(200, False)
UNAVAILABLE = LeaveAnswer(503, False)
FOREIGN_PAGE = LeaveAnswer(403, False)
FOREIGN_PAGE_MESSAGE = (
    "a leave with the visitor's cookie is taken only from the waiting room's page or the "
    "shop's own pages; a shop's server sends POST /leave?token=<token> instead"
)


def from_allowed_page(
    origin_headers: list[str], fetch_site_headers: list[str], allowed: frozenset[str]
) -> bool:
    """Whether a browser sent this request from an allowed page (see the module)."""
    origin = origin_headers[0].strip().lower() if origin_headers else ""
    fetch_site = fetch_site_headers[0].strip().lower() if fetch_site_headers else ""
    if fetch_site == "same-origin":
        # The browser says the page is on the room's own address (a header no page can set):
        # the one way to know it behind the edge's cloudfront.net name, which the stack can
        # not pass the producer (the distribution is built from the API the producer serves).
        return True
    if origin and origin != "null":
        return origin in allowed
    if fetch_site:
        return False
    return not origin  # neither header: not a browser's request; `Origin: null` alone: refused


@dataclass
class Leaving:
    """Answers POST /leave; `token_key` gives the room's token key (read once per container)."""

    table: str
    dynamodb: Any
    shop_origin: str
    token_key: Callable[[], bytes]
    clock: Callable[[], float]
    # The room's own public origin, its page's (ROOM_ORIGIN_VARIABLE: the stack passes the
    # room's domain, local mode its loopback address); "" when unknown (the edge's own
    # cloudfront.net name): Sec-Fetch-Site decides alone.
    room_origin: str = ""

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        method = event.get("httpMethod")
        if not isinstance(method, str) or method.upper() != "POST":
            response = self._respond(LeaveAnswer(405, False))
            response["headers"]["Allow"] = "POST"
            return response
        parameters = event.get("queryStringParameters")
        if isinstance(parameters, Mapping) and CLIENT_TOKEN_PARAMETER in parameters:
            # A shop's server (it wins, as on /client): by the token's exact pattern.
            token = Token.parse(parameters[CLIENT_TOKEN_PARAMETER])
        elif header_values(event, TOKEN_HEADER):
            token = token_from_request(event)  # an app's header (it wins over the cookie)
        else:
            token = token_from_request(event)  # the cookie: only from an allowed page
            if token is not None and not from_allowed_page(
                header_values(event, "origin"),
                header_values(event, "sec-fetch-site"),
                self.allowed_origins(),
            ):
                log.info("a leave with the cookie from a foreign page was refused")
                return self._respond(FOREIGN_PAGE, message=FOREIGN_PAGE_MESSAGE)
        if token is None:
            return self._respond(NOT_LEFT)
        return self._respond(self.leave(token))

    def allowed_origins(self) -> frozenset[str]:
        origins = [self.shop_origin, self.room_origin]
        return frozenset(browser_origin(url) for url in origins if url)

    def leave(self, token: Token) -> LeaveAnswer:
        """The leave of a well-formed token: nothing written unless the room issued it."""
        if not token.issued_with(self.token_key()):
            return LEFT  # as an unknown token was always answered; nothing is written
        try:
            self.dynamodb.update_item(**leave_request(self.table, token.id, now=int(self.clock())))
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                return NOT_LEFT
            log.warning("a leave was not written (%s): it may be sent again", error_code(error))
            return UNAVAILABLE
        except Exception:
            log.exception("a leave was not written: it may be sent again")
            return UNAVAILABLE
        return LEFT

    def _respond(self, answer: LeaveAnswer, message: str = "") -> dict[str, Any]:
        headers = {**JSON_ANSWER_HEADERS, **cors_headers(self.shop_origin)}
        if answer.status == UNAVAILABLE.status:
            headers["Retry-After"] = str(ERROR_RETRY_AFTER_SECONDS)
        body: dict[str, Any] = {"left": answer.left}
        if message:
            body["message"] = message
        return {"statusCode": answer.status, "headers": headers, "body": json.dumps(body)}
