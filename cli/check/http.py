"""One request to the room's public address, as a browser or the shop's server sends it.

Redirects are returned, never followed: each one is a step the check looks at. A room that can
not be reached is an `Unreachable` with the reason, never a traceback.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Long enough for a cold Lambda behind CloudFront; a room that takes longer fails the step.
TIMEOUT_SECONDS = 30
USER_AGENT = "beekeeper-check"


class Unreachable(Exception):
    """The request got no HTTP answer (refused, timed out, a name that does not resolve)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url} did not answer: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, tuple[str, ...]]  # lower-case names
    body: bytes

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[0] if values else None

    def json(self) -> Any:
        """The body as JSON; None when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def shown(self) -> str:
        """The answer in one line for a report: status, then the redirect or the body, with
        tokens and tickets cut short (a report may be pasted anywhere)."""
        location = self.header("location")
        if location is not None:
            return f"{self.status} to {without_secrets(location)}"
        text = self.body.decode("utf-8", "replace")
        data = self.json()
        text = json.dumps(data) if data is not None else " ".join(text.split())
        text = without_secrets(text)
        return f"{self.status} {text[:160]}{'...' if len(text) > 160 else ''}"


_SECRETS = re.compile(
    r"((?:beekeeper_token|beekeeper_ticket|token|check)[=\":\s]+)([^&\"\s]{6})[^&\"\s]*"
)


def without_secrets(text: str) -> str:
    """`text` with every token, ticket and pass after its first six characters cut."""
    return _SECRETS.sub(r"\1\2...", text)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def send(
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = TIMEOUT_SECONDS,
) -> Answer:
    """One request; any HTTP status is an Answer, no answer at all is Unreachable."""
    if not url.startswith(("http://", "https://")):
        raise Unreachable(url, "not an http(s) address")
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked above
        url, data=body, headers={"User-Agent": USER_AGENT, **(headers or {})}, method=method
    )
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            status, raw, content = response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        status, raw, content = error.code, error.headers, error.read()
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise Unreachable(url, str(reason)) from error
    found: dict[str, tuple[str, ...]] = {}
    for name, value in raw.items():
        found[name.lower()] = (*found.get(name.lower(), ()), value)
    return Answer(status, found, content)
