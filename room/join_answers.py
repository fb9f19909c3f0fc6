"""What the marketing link answers a native app, and the challenge (docs/apps.md).

A browser follows redirects: the producer answers it with 302s (room/producer.py). A client
that sends `Accept: application/json` gets the same decisions as JSON instead, with status 200
unless something is wrong: its token and place, when and where to ask again, and an admitted
app its ticket in the body, never in a URL. With `join_work` on, a request without a solution
gets the challenge first: a browser as a redirect to the room's work page, whose fragment holds
the challenge (a fragment never reaches a server or a log from there), an app as JSON.

Every key here is documented in docs/apps.md and docs/data-model.md; tests run the example of
docs/apps.md against a local room as written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from beekeeper.core.datamodel import TOKEN_HEADER, Token
from beekeeper.core.headers import JSON_ANSWER_HEADERS
from beekeeper.core.join_work import WORK_PARAMETER, Challenge, Verdict
from beekeeper.core.polling import POLL_AFTER_MIN_SECONDS
from beekeeper.core.routes import POLLING, WORK_PAGE
from beekeeper.room.cookies import header_values

JSON_MEDIA_TYPE = "application/json"


def wants_json(event: Mapping[str, Any]) -> bool:
    """The client lists `application/json` in its Accept header (parameters aside)."""
    for value in header_values(event, "accept"):
        for media_range in value.split(","):
            if media_range.split(";", 1)[0].strip().lower() == JSON_MEDIA_TYPE:
                return True
    return False


def json_answer(status: int, body: Mapping[str, Any]) -> dict[str, Any]:
    headers = {
        **JSON_ANSWER_HEADERS,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    return {"statusCode": status, "headers": headers, "body": json.dumps(dict(body))}


def challenge_body(challenge: Challenge) -> dict[str, Any]:
    return {
        "state": "work",
        "challenge": str(challenge),
        "subpuzzles": challenge.count,
        "target": challenge.target,
        "expires_at": challenge.expires_at,
        "parameter": WORK_PARAMETER,
    }


def work_location(challenge: Challenge) -> str:
    """The work page, with the challenge in the fragment (the page reads location.hash)."""
    # Relative to the marketing link, as the page's own URLs are.
    return f"{WORK_PAGE.relative}#{challenge}"


def refused_body(challenge: Challenge, verdict: Verdict) -> dict[str, Any]:
    """A solution that earns no place: why, what to do, and a fresh challenge to do it with."""
    return {**challenge_body(challenge), "refused": verdict.value, "message": verdict.message}


def waiting_body(token: Token, *, position: int | None, poll_after: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "state": "waiting",
        "token": str(token),
        "token_header": TOKEN_HEADER,
        "poll": POLLING.relative,
        "poll_after": max(POLL_AFTER_MIN_SECONDS, poll_after),
    }
    if position is not None:
        body["position"] = position
    return body


def admitted_body(token: Token, ticket: str | None, origin: str) -> dict[str, Any]:
    body: dict[str, Any] = {"state": "admitted", "token": str(token), "origin": origin}
    if ticket:
        body["ticket"] = ticket
    return body


def room_off_body(origin: str) -> dict[str, Any]:
    """The room lets everyone straight through: no token, go to the shop."""
    return {"state": "room_off", "origin": origin}


def closed_body(message: str) -> dict[str, Any]:
    body: dict[str, Any] = {"state": "closed"}
    if message:
        body["message"] = message
    return body


def unavailable_body(retry_after: int) -> dict[str, Any]:
    return {"state": "unavailable", "retry_after": retry_after}
