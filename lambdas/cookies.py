"""Reading our cookie from an API Gateway REST proxy event, and writing it.

Browsers send one Cookie header ("a=1; b=2"); proxies and API Gateway may split it into
several (multiValueHeaders) and header names arrive in any case. Only a cookie named exactly
`beekeeper_token` whose value is a well-formed token counts; anything else is ignored.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import Any

from beekeeper.core.datamodel import COOKIE_NAME, Token


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


def _cookie_pairs(header: str) -> Iterator[tuple[str, str]]:
    for part in header.split(";"):
        name, separator, value = part.partition("=")
        if not separator:
            continue
        value = value.strip(" \t")  # RFC 6265 trims spaces and tabs only
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        yield name.strip(" \t"), value


def token_from_cookies(event: Mapping[str, Any]) -> Token | None:
    """The visitor's well-formed token, or None (no cookie, other cookies, malformed value)."""
    for header in header_values(event, "cookie"):
        for name, value in _cookie_pairs(header):
            if name == COOKIE_NAME:
                token = Token.parse(value)
                if token is not None:
                    return token
    return None


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


def stage_root(event: Mapping[str, Any]) -> str:
    """The path the stage is served under, e.g. "/prod": requestContext.path minus the path."""
    context = event.get("requestContext")
    full = context.get("path") if isinstance(context, Mapping) else None
    path = event.get("path")
    if isinstance(full, str) and isinstance(path, str) and path and full.endswith(path):
        root = full[: len(full) - len(path)]
        if root.startswith("/") and all(c.isalnum() or c in "/-_." for c in root):
            return root.rstrip("/") or "/"
    return "/"


def set_cookie(token: Token, *, path: str, max_age: int, secure: bool) -> str:
    parts = [f"{COOKIE_NAME}={token}", "HttpOnly"]
    if secure:
        parts.append("Secure")
    parts += ["SameSite=Lax", f"Path={path}", f"Max-Age={max_age}"]
    return "; ".join(parts)
