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

The token comes from `?token=` (a shop's server, as before), an app's `Beekeeper-Token` header,
or the visitor's cookie (the page's "Leave the line" beacon). The body is never read, so any
content type is taken (a beacon's text/plain, JSON, a form). Every answer carries the shop's
CORS headers and is never cached.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import CLIENT_TOKEN_PARAMETER, Token
from beekeeper.core.gateway_answers import LEAVE_ROUTE
from beekeeper.core.headers import JSON_ANSWER_HEADERS, cors_headers
from beekeeper.core.routes import ERROR_RETRY_AFTER_SECONDS
from beekeeper.core.sessions import leave_request
from beekeeper.lambdas.cookies import token_from_request
from beekeeper.lambdas.room_state import error_code

log = logging.getLogger("beekeeper.leaving")

# The proxy event's `resource` on this route (the producer's other route is /beekeeper).
LEAVE_PATH = f"/{LEAVE_ROUTE}"


@dataclass(frozen=True)
class LeaveAnswer:
    status: int
    left: bool


LEFT = LeaveAnswer(200, True)
NOT_LEFT = LeaveAnswer(200, False)
UNAVAILABLE = LeaveAnswer(503, False)


@dataclass
class Leaving:
    """Answers POST /leave; `token_key` gives the room's token key (read once per container)."""

    table: str
    dynamodb: Any
    shop_origin: str
    token_key: Callable[[], bytes]
    clock: Callable[[], float]

    def handle(self, event: Mapping[str, Any]) -> dict[str, Any]:
        method = event.get("httpMethod")
        if not isinstance(method, str) or method.upper() != "POST":
            response = self._respond(LeaveAnswer(405, False))
            response["headers"]["Allow"] = "POST"
            return response
        token = token_from_request(event)  # an app's header, else the cookie
        parameters = event.get("queryStringParameters")
        if isinstance(parameters, Mapping) and CLIENT_TOKEN_PARAMETER in parameters:
            # A shop's server (it wins, as on /client): by the token's exact pattern.
            token = Token.parse(parameters[CLIENT_TOKEN_PARAMETER])
        if token is None:
            return self._respond(NOT_LEFT)
        return self._respond(self.leave(token))

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

    def _respond(self, answer: LeaveAnswer) -> dict[str, Any]:
        headers = {**JSON_ANSWER_HEADERS, **cors_headers(self.shop_origin)}
        if answer.status == UNAVAILABLE.status:
            headers["Retry-After"] = str(ERROR_RETRY_AFTER_SECONDS)
        return {
            "statusCode": answer.status,
            "headers": headers,
            "body": json.dumps({"left": answer.left}),
        }
