"""Small HTTP helpers for the local room's tests: no redirect following, cookies by hand."""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from beekeeper.core.datamodel import COOKIE_NAME
from tests.support.join_work import solved_link


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def headers_named(self, name: str) -> list[str]:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def get(
    url: str,
    *,
    cookie: str | None = None,
    method: str = "GET",
    headers: dict[str, str] | None = None,
) -> Answer:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        sent = dict(headers or {})
        if cookie is not None:
            sent["Cookie"] = cookie
        connection.request(method, path, headers=sent)
        response = connection.getresponse()
        return Answer(response.status, response.getheaders(), response.read())
    finally:
        connection.close()


def follow_link(marketing_url: str, *, cookie: str | None = None) -> Answer:
    """The marketing link as the work page follows it: when the room asks for work (a redirect
    to `work#<challenge>`), the challenge is solved (core/join_work's reference solver) and
    the link asked again with the solution; the link's last answer."""
    answer = get(marketing_url, cookie=cookie)
    solved = solved_link(marketing_url, answer.status, answer.header("Location"))
    return answer if solved is None else get(solved, cookie=cookie)


def cookie_value(set_cookie: str, name: str) -> str | None:
    first = set_cookie.split(";", 1)[0]
    key, _, value = first.partition("=")
    return value if key.strip() == name else None


def enter_shop(admission_url: str) -> tuple[Answer, Answer]:
    """Follow an admission redirect into the demo shop as a browser would: the shop's 303 (its
    session cookie, the ticket stripped from the URL), then the page it leads to."""
    arrival = get(admission_url.replace("localhost", "127.0.0.1"))
    location = arrival.header("Location")
    set_cookie = arrival.header("Set-Cookie")
    if arrival.status != 303 or location is None or set_cookie is None:
        return arrival, arrival
    parts = urlsplit(admission_url.replace("localhost", "127.0.0.1"))
    page = get(f"{parts.scheme}://{parts.netloc}{location}", cookie=set_cookie.split(";")[0])
    return arrival, page


def admitted_origin(marketing_url: str, polling_url: str, within_seconds: float = 15) -> str:
    """Join at the marketing link and poll as the page does until admitted; the URL the room
    sends the visitor to (token and ticket)."""
    joined = follow_link(marketing_url)
    token = cookie_value(joined.header("Set-Cookie") or "", COOKIE_NAME)
    assert token is not None, joined.text
    deadline = time.monotonic() + within_seconds
    while time.monotonic() < deadline:
        answer = get(polling_url, cookie=f"{COOKIE_NAME}={token}").json()
        if answer["allow"]:
            return str(answer["origin"])
        time.sleep(0.2)
    raise AssertionError(f"not admitted at {marketing_url} within {within_seconds} s")
