"""A tiny demo shop for `beekeeper local --demo`: the origin the room lets visitors through to.

Its page does what a real shop's backend should: it takes the token from the
`?beekeeper_token=` query the room redirects with and asks the room, server to server,
`GET <room>/client?token=<token>`. No cookie is involved, so no cookie policy can break it.
"""

from __future__ import annotations

import html
import json
import logging
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from beekeeper.core.datamodel import CLIENT_TOKEN_PARAMETER, ORIGIN_TOKEN_PARAMETER, Token

log = logging.getLogger("beekeeper.local")

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
ADMITTED_TEXT = "You're in"
REFUSED_TEXT = "You skipped the line"


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


class DemoShop:
    def __init__(self, *, client_url: str, marketing_url: str) -> None:
        self._client_url = client_url
        self._marketing_url = marketing_url

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO", "/") != "/":
            return _page(start_response, 404, "Not found", "There is nothing here.", "")
        query = urllib.parse.parse_qs(str(environ.get("QUERY_STRING", "")))
        token = (query.get(ORIGIN_TOKEN_PARAMETER) or [""])[0]
        link = (
            f'<p><a href="{html.escape(self._marketing_url)}">Join the line</a> '
            "through the waiting room.</p>"
        )
        if token and check_visitor(self._client_url, token):
            log.info("demo shop: an admitted visitor came in")
            return _page(
                start_response,
                200,
                ADMITTED_TEXT,
                "The waiting room confirmed you came through the line. Happy shopping!",
                "",
            )
        return _page(
            start_response,
            403,
            REFUSED_TEXT,
            "The waiting room does not know you as admitted, so the shop turns you away.",
            link,
        )


def _page(
    start_response: StartResponse, status: int, title: str, text: str, extra: str
) -> list[bytes]:
    # Text content only (no attribute values), so apostrophes may stay as they are.
    title_html, text_html = html.escape(title, quote=False), html.escape(text, quote=False)
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>Demo shop: {title_html}</title></head><body>"
        f"<h1 id='verdict'>{title_html}</h1><p>{text_html}</p>{extra}"
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
