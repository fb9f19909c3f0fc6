"""The edge in process: CloudFront's part of a local room, in front of its gateway.

A local room's public port serves this WSGI app, as a deployed room's public address is its
CloudFront distribution. It treats each path by the very records the stack builds the
distribution from (core/edge.py, `behaviors`), so a rehearsal shows the requests AWS would
see: what the edge answers from its cache, and what reaches the origin.

What it does, as the CloudFront developer guide says CloudFront does (core/edge.py cites it):

- A cached path (the page, the shared state, the marketing link): an answer of a kept status
  (core.edge.KEPT_STATUSES) is kept as long as its own Cache-Control allows, never longer than
  the path's `cache_seconds` (`edge_seconds`), and served with an `Age` header of the whole
  seconds it has been kept. It is kept under the path, the viewer's normalized Accept-Encoding
  and the behavior's key: nothing more for the page and the state (one copy for everyone and
  encoding), the visitor's cookie, token header, Accept and `work` parameter for the marketing
  link. What the behavior forwards is forwarded (the page and the state: no cookie, no query
  string). While the origin answers 5xx, an expired copy is served (the error caching minimum
  TTL is 0).
- A cached path's answers are compressed (Brotli, else gzip) for a viewer that accepts it, as
  CloudFront's edge compresses them (local/edge_compression.py); a per-visitor path's never.
- A per-visitor path: never cached; the origin request carries only the visitor's cookie (the
  others removed, as an allow list does), the query string and the listed headers.
- A method the path does not allow: 403 from the edge, nothing forwarded.
- A request longer than CloudFront takes (its URL, or its request line and headers:
  core.edge.MAX_URL_BYTES, MAX_REQUEST_BYTES): refused at the edge, nothing forwarded or kept.
- The cache is bounded (local/edge_cache.py): a copy kept under a visitor's key leaves when it
  expires, and at most MAX_KEPT_ENTRIES copies and MAX_KEPT_BYTES bytes are held, the least
  recently used leaving first, as CloudFront may evict an object before it expires.
- Any other path: forwarded without cookies or query string (the default behavior), never
  cached.

One cache stands for CloudFront's many: a deployed room's origin sees one document request per
cache lifetime per regional edge cache, a local one per lifetime.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from beekeeper.core.edge import (
    KEPT_STATUSES,
    MAX_REQUEST_BYTES,
    MAX_URL_BYTES,
    Behavior,
    behavior_for,
    edge_seconds,
)
from beekeeper.core.settings import Mode
from beekeeper.local import edge_compression
from beekeeper.local.edge_cache import EdgeCache, Kept, Key

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

# The WSGI keys an origin request keeps whatever the behavior forwards (the request itself).
_REQUEST_KEYS = (
    "REQUEST_METHOD",
    "SCRIPT_NAME",
    "PATH_INFO",
    "SERVER_NAME",
    "SERVER_PORT",
    "SERVER_PROTOCOL",
    "REMOTE_ADDR",
    "CONTENT_LENGTH",
    "wsgi.version",
    "wsgi.url_scheme",
    "wsgi.input",
    "wsgi.errors",
    "wsgi.multithread",
    "wsgi.multiprocess",
    "wsgi.run_once",
)
METHOD_REFUSED_BODY = b"This distribution is not configured to allow the HTTP request method used."
REQUEST_TOO_LONG = (
    "431 Request Header Fields Too Large",
    b"The request is longer than the edge takes: its request line and headers may be at most "
    + str(MAX_REQUEST_BYTES).encode()
    + b" bytes.",
)
URL_TOO_LONG = (
    "414 URI Too Long",
    b"The address is longer than the edge takes: at most "
    + str(MAX_URL_BYTES).encode()
    + b" bytes.",
)
# What the local cache holds at most (its own bounds: CloudFront does not publish its caches').
# A local room's shared copies are a few per path; the marketing link's keyed copies live 2 s.
MAX_KEPT_ENTRIES = 2_048
MAX_KEPT_BYTES = 8 * 1024 * 1024


@dataclass
class Answer:
    status: str
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class EdgeCounts:
    """Requests the edge answered (all of them) and those it sent the origin, by path."""

    edge: dict[str, int] = field(default_factory=dict)
    origin: dict[str, int] = field(default_factory=dict)

    @property
    def edge_total(self) -> int:
        return sum(self.edge.values())

    @property
    def origin_total(self) -> int:
        return sum(self.origin.values())


class Edge:
    def __init__(
        self,
        origin: WsgiApp,
        *,
        mode: Mode,
        clock: Callable[[], float] = time.time,
        max_entries: int = MAX_KEPT_ENTRIES,
        max_bytes: int = MAX_KEPT_BYTES,
    ) -> None:
        self._origin = origin
        self._mode = mode
        self._clock = clock
        # A key beyond its path and encoding is a visitor's (the marketing link's): it leaves
        # at expiry.
        self.cache = EdgeCache(
            max_entries=max_entries, max_bytes=max_bytes, keyed=lambda key: len(key) > 2
        )
        self._lock = threading.Lock()
        self.counts = EdgeCounts()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", "/"))
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        behavior = behavior_for(path, self._mode)
        self._count(self.counts.edge, path)
        with self._lock:
            # Every request rids the cache of what has expired (a look at the heap's head).
            self.cache.purge(self._clock())
        too_long = _too_long(environ)
        if too_long is not None:
            status, body = too_long
            return self._send(
                start_response, Answer(status, [("Content-Type", "text/plain")], body)
            )
        if behavior is not None and method not in behavior.methods:
            return self._send(
                start_response,
                Answer("403 Forbidden", [("Content-Type", "text/plain")], METHOD_REFUSED_BODY),
            )
        if behavior is not None and behavior.cached and method in ("GET", "HEAD"):
            # HEAD: the same headers; the server sends no body (waitress drops it for HEAD).
            return self._send(start_response, self._cached(path, behavior, environ))
        return self._send(start_response, self._forward(path, behavior, environ))

    def _cached(self, path: str, behavior: Behavior, environ: dict[str, Any]) -> Answer:
        now = self._clock()
        key = _cache_key(path, behavior, environ)
        with self._lock:
            kept = self.cache.get(key, now)
            if kept is not None and now < kept.expires:
                return _aged(kept, now, hit=True)
        # What the viewer accepts, as the edge compresses for it (the key's second part).
        coding = edge_compression.chosen(key[1])
        if str(environ.get("REQUEST_METHOD", "GET")).upper() == "HEAD":
            # Nothing kept: the origin is asked with the viewer's method, and nothing is kept.
            return _compressed(self._forward(path, behavior, environ), coding)
        answer = _compressed(self._forward(path, behavior, environ), coding)
        status = int(answer.status.split(" ", 1)[0])
        if status >= 500 and kept is not None:
            # The origin fails: the expired copy is served meanwhile.
            return _aged(kept, now, hit=True)
        seconds = edge_seconds(behavior, _header(answer.headers, "Cache-Control"))
        if status in KEPT_STATUSES and seconds > 0:
            copy = Kept(answer.status, answer.headers, answer.body, now, now + seconds)
            with self._lock:
                self.cache.put(key, copy, now)
        return Answer(
            answer.status, [*answer.headers, ("X-Cache", "Miss from the local edge")], answer.body
        )

    def _forward(self, path: str, behavior: Behavior | None, environ: dict[str, Any]) -> Answer:
        self._count(self.counts.origin, path)
        forwarded = {key: environ[key] for key in _REQUEST_KEYS if key in environ}
        forwarded["QUERY_STRING"] = (
            str(environ.get("QUERY_STRING", "")) if behavior is not None and behavior.query else ""
        )
        if behavior is not None:
            cookies = _allowed_cookies(str(environ.get("HTTP_COOKIE", "")), behavior.cookies)
            if cookies:
                forwarded["HTTP_COOKIE"] = cookies
            for name in behavior.headers:
                key = (
                    "CONTENT_TYPE"
                    if name == "Content-Type"
                    else "HTTP_" + name.upper().replace("-", "_")
                )
                if key in environ:
                    forwarded[key] = environ[key]
        captured: dict[str, Any] = {}

        def start(status: str, headers: list[tuple[str, str]], *_: Any) -> None:
            captured["status"], captured["headers"] = status, headers

        body = b"".join(self._origin(forwarded, start))
        headers = [(k, v) for k, v in captured["headers"] if k.lower() != "content-length"]
        if behavior is None or not behavior.cookies:
            # No cookie forwarded: CloudFront passes no Set-Cookie back either.
            headers = [(k, v) for k, v in headers if k.lower() != "set-cookie"]
        return Answer(str(captured["status"]), headers, body)

    def _count(self, counts: dict[str, int], path: str) -> None:
        with self._lock:
            counts[path] = counts.get(path, 0) + 1

    @staticmethod
    def _send(start_response: StartResponse, answer: Answer) -> list[bytes]:
        start_response(answer.status, [*answer.headers, ("Content-Length", str(len(answer.body)))])
        return [answer.body]


def _aged(kept: Kept, now: float, *, hit: bool) -> Answer:
    age = str(max(0, math.floor(now - kept.stored)))
    headers = [(k, v) for k, v in kept.headers if k.lower() != "age"]
    cache = "Hit from the local edge" if hit else "Miss from the local edge"
    return Answer(kept.status, [*headers, ("Age", age), ("X-Cache", cache)], kept.body)


def _too_long(environ: dict[str, Any]) -> tuple[str, bytes] | None:
    """The refusal of a request longer than CloudFront takes (core.edge), or None. The URL is
    the request target as sent; the request is its request line and every header line."""
    target = str(environ.get("REQUEST_URI") or "")
    if not target:
        query = str(environ.get("QUERY_STRING", ""))
        target = str(environ.get("PATH_INFO", "/")) + (f"?{query}" if query else "")
    if len(target) > MAX_URL_BYTES:
        return URL_TOO_LONG
    method = str(environ.get("REQUEST_METHOD", "GET"))
    protocol = str(environ.get("SERVER_PROTOCOL", "HTTP/1.1"))
    length = len(method) + len(target) + len(protocol) + 4  # two spaces, CRLF
    for name, value in environ.items():
        if name.startswith("HTTP_") or name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            header = name.removeprefix("HTTP_")
            length += len(header) + len(str(value)) + 4  # ": ", CRLF
            if length > MAX_REQUEST_BYTES:
                return REQUEST_TOO_LONG
    return None


def _compressed(answer: Answer, coding: str | None) -> Answer:
    headers, body = edge_compression.compressed(answer.headers, answer.body, coding)
    return Answer(answer.status, headers, body)


def _cache_key(path: str, behavior: Behavior, environ: dict[str, Any]) -> Key:
    """The path, the viewer's Accept-Encoding as the edge normalizes it (None: no compressed
    copy asked for, or the path compresses nothing) and the values of what the behavior's key
    holds (None: absent)."""
    encoding = (
        edge_compression.normalized(
            environ.get("HTTP_ACCEPT_ENCODING"), str(environ.get("SERVER_PROTOCOL", "HTTP/1.1"))
        )
        if behavior.compressed
        else None
    )
    key = behavior.key
    if key.empty:
        return (path, encoding)
    cookies = dict(
        part.strip().partition("=")[::2]
        for part in str(environ.get("HTTP_COOKIE", "")).replace(", ", ";").split(";")
    )
    query = dict(parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True))
    return (
        path,
        encoding,
        *(cookies.get(name) for name in key.cookies),
        *(query.get(name) for name in key.query),
        *(environ.get("HTTP_" + name.upper().replace("-", "_")) for name in key.headers),
    )


def _allowed_cookies(header: str, allowed: tuple[str, ...]) -> str:
    """The Cookie header with only the allowed cookies, sorted by name (CloudFront sorts)."""
    if not header or not allowed:
        return ""
    parts = []
    for part in header.replace(", ", ";").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep and name in allowed:
            parts.append((name, value))
    return "; ".join(f"{name}={value}" for name, value in sorted(parts, key=lambda p: p[0]))


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name.lower()), None)


__all__ = ["MAX_KEPT_BYTES", "MAX_KEPT_ENTRIES", "Answer", "Edge", "EdgeCounts"]
