"""Reading our cookie from an API Gateway REST proxy event, and writing it.

Browsers send one Cookie header ("a=1; b=2"); proxies and API Gateway may split it into
several (multiValueHeaders) and header names arrive in any case. Only a cookie named exactly
`beekeeper_token` whose value is a well-formed token counts (`read_token`, the same rule the
/polling template applies); anything else is ignored. A native app sends its token in the
`Beekeeper-Token` header instead (docs/apps.md): present, it is read by the same value rules
and wins over any cookie.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from beekeeper.core.datamodel import COOKIE_NAME, TOKEN_HEADER, Token


def header_values(event: Mapping[str, Any], name: str) -> list[str]:
    """Every value of header `name` (any casing) in headers and multiValueHeaders."""
    wanted = name.lower()
    values: list[str] = []
    multi = event.get("multiValueHeaders")
    if isinstance(multi, Mapping):
        for header, listed in multi.items():
            if isinstance(header, str) and header.lower() == wanted and isinstance(listed, list):
                values += [v for v in listed if isinstance(v, str)]
    if not values:
        single = event.get("headers")
        if isinstance(single, Mapping):
            for header, value in single.items():
                if isinstance(header, str) and header.lower() == wanted and isinstance(value, str):
                    values.append(value)
    return values


# What makes a well-formed cookie is defined once, here, and vtl/_read-token.vtl follows it in
# API Gateway for /polling and /client: the marketing link and /polling must agree, or a visitor
# told "join the line again" would be sent straight back to the page. The template's limits come
# from API Gateway (a #foreach runs at most 1,000 times); tests/unit/test_vtl_templates.py holds
# the template's answers equal to `read_token` for any headers.
MAX_HEADERS = 1000  # a request with more headers is not read: no token
MAX_COOKIE_PARTS = 1000  # the joined Cookie headers are split into at most this many parts
# Java's String.trim(), which the template uses: every character up to U+0020 at either end.
_TRIMMED = "".join(chr(code) for code in range(0x21))

NO_TOKEN = "no_token"
MALFORMED = "malformed"
OK = "ok"


@dataclass(frozen=True)
class TokenReading:
    state: str  # OK, MALFORMED (a cookie of ours, but no well-formed value) or NO_TOKEN
    token: Token | None = None


def read_token(
    cookie_headers: Sequence[str], header_count: int, token_headers: Sequence[str] = ()
) -> TokenReading:
    """The token in the request's Cookie headers, by the rule /polling applies.

    An app's `Beekeeper-Token` headers (`token_headers`, any casing), when there is one, are
    read instead: each value trimmed, the first well-formed one wins, otherwise malformed.

    The headers are joined with ";" (an empty first one adds no part), split on ";" into at
    most MAX_COOKIE_PARTS parts (the last holds the rest), each part cut at its first "=";
    a part counts when its name, trimmed, is exactly the cookie's name; the value is trimmed
    and must match the token pattern in full (quotes are not removed: `"<token>"` is
    malformed). The first well-formed value wins.
    """
    if header_count > MAX_HEADERS:
        return TokenReading(NO_TOKEN)
    if token_headers:
        for value in token_headers:
            token = Token.parse(value.strip(_TRIMMED))
            if token is not None:
                return TokenReading(OK, token)
        return TokenReading(MALFORMED)
    joined = ""
    for header in cookie_headers:
        joined = header if not joined else f"{joined};{header}"
    state = NO_TOKEN
    for part in joined.split(";", MAX_COOKIE_PARTS - 1):
        name, separator, value = part.partition("=")
        if not separator or not name or name.strip(_TRIMMED) != COOKIE_NAME:
            continue
        token = Token.parse(value.strip(_TRIMMED))
        if token is not None:
            return TokenReading(OK, token)
        state = MALFORMED
    return TokenReading(state)


def token_from_request(event: Mapping[str, Any]) -> Token | None:
    """The visitor's well-formed token (an app's header, else the cookie), or None."""
    reading = read_token(
        header_values(event, "cookie"), header_count(event), header_values(event, TOKEN_HEADER)
    )
    return reading.token


def header_count(event: Mapping[str, Any]) -> int:
    """How many headers the request carried (the larger of the two views API Gateway gives)."""
    counts = [
        len(headers)
        for headers in (event.get("multiValueHeaders"), event.get("headers"))
        if isinstance(headers, Mapping)
    ]
    return max(counts, default=0)


def is_plain_http_loopback(event: Mapping[str, Any]) -> bool:
    """Local mode: the request came over plain http to a loopback host.

    Only then is the cookie's Secure attribute left out (a browser drops Secure cookies on
    http://127.0.0.1). Behind API Gateway X-Forwarded-Proto is always https.
    """
    protos = header_values(event, "x-forwarded-proto")
    hosts = header_values(event, "host")
    if not protos or not hosts or protos[0].strip().lower() != "http":
        return False
    host = hosts[0].strip().lower()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host
    else:
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# The cookie's Path: the room's public address is a host of its own (the edge's, the room's
# domain, or local mode's port), whose root is the room's; the API's stage prefix, which the
# edge adds on the way to the origin (its origin path), is never in a visitor's URL.
COOKIE_PATH = "/"


def set_cookie(token: Token, *, path: str, max_age: int, secure: bool) -> str:
    parts = [f"{COOKIE_NAME}={token}", "HttpOnly"]
    if secure:
        parts.append("Secure")
    parts += ["SameSite=Lax", f"Path={path}", f"Max-Age={max_age}"]
    return "; ".join(parts)
