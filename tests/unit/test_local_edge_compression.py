"""The local edge compresses what CloudFront's edge compresses (local/edge_compression.py):
Brotli for a viewer that accepts it, else gzip, on the cached paths only, for CloudFront's
content types and sizes, each encoding a copy of its own; the waiting room page itself goes
from about 49 KB to its compressed size."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import brotli
import pytest

from beekeeper.core.edge import behaviors
from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.local.edge import Edge
from beekeeper.local.edge_compression import (
    BROTLI_QUALITY,
    GZIP_LEVEL,
    MAX_BYTES,
    MIN_BYTES,
    normalized,
)
from beekeeper.stacks.app import SAMPLE_ROOM
from beekeeper.waiting_room_site import render_page

# What Chromium sends, over HTTPS and to a loopback address alike.
CHROMIUM = "gzip, deflate, br, zstd"


@dataclass
class Origin:
    """Answers every path with `body` and `headers`; counts the requests."""

    body: bytes
    headers: dict[str, str] = field(
        default_factory=lambda: {"Content-Type": "text/html", "Cache-Control": "max-age=60"}
    )
    seen: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        self.seen.append(dict(environ))
        start_response("200 OK", [*self.headers.items(), ("Content-Length", str(len(self.body)))])
        return [self.body]


def ask(
    edge: Edge,
    path: str,
    accept_encoding: str | None,
    *,
    method: str = "GET",
    protocol: str = "HTTP/1.1",
) -> tuple[dict[str, str], bytes]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": protocol,
        "wsgi.input": io.BytesIO(b""),
    }
    if accept_encoding is not None:
        environ["HTTP_ACCEPT_ENCODING"] = accept_encoding
    answered: dict[str, Any] = {}

    def start(status: str, headers: list[tuple[str, str]]) -> None:
        answered["headers"] = dict(headers)

    body = b"".join(edge(environ, start))
    return answered["headers"], body


def clock() -> float:
    return 1_800_000_000.0


@pytest.mark.parametrize(
    ("accept_encoding", "protocol", "expected"),
    [
        (CHROMIUM, "HTTP/1.1", "br,gzip"),
        ("br", "HTTP/1.1", "br"),
        ("deflate, gzip", "HTTP/1.1", "gzip"),
        ("GZIP;q=0.5, identity", "HTTP/1.1", "gzip"),
        ("br;q=0, gzip", "HTTP/1.1", "gzip"),
        ("deflate, sdch, zstd", "HTTP/1.1", None),
        ("identity", "HTTP/1.1", None),
        ("", "HTTP/1.1", None),
        (None, "HTTP/1.1", None),
        (CHROMIUM, "HTTP/1.0", None),  # CloudFront removes Accept-Encoding from HTTP/1.0
    ],
)
def test_the_viewers_accept_encoding_is_normalized_as_cloudfront_does(
    accept_encoding: str | None, protocol: str, expected: str | None
) -> None:
    assert normalized(accept_encoding, protocol) == expected


def test_the_waiting_room_page_goes_to_the_viewer_compressed_each_encoding_a_copy_of_its_own(
) -> None:  # fmt: skip
    page = render_page(SAMPLE_ROOM).encode("utf-8")
    origin = Origin(page, dict(PAGE_HEADERS))
    edge = Edge(origin, mode="rate", clock=clock)

    headers, body = ask(edge, "/room", CHROMIUM)
    assert headers["Content-Encoding"] == "br"
    assert brotli.decompress(body) == page
    assert (
        int(headers["Content-Length"])
        == len(body)
        == len(brotli.compress(page, quality=BROTLI_QUALITY))
    )
    # About 60 KB of page, about 16 KB on the wire.
    assert len(page) > 50_000 and len(body) < 18_000

    headers, body = ask(edge, "/room", "gzip, deflate")
    assert headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(body) == page
    assert len(body) == len(gzip.compress(page, GZIP_LEVEL)) < 18_000

    headers, body = ask(edge, "/room", None)
    assert "Content-Encoding" not in headers and body == page

    # One origin request per normalized encoding, as CloudFront's cache key holds it; a viewer
    # that asks again with another spelling of the same is served the kept copy.
    assert len(origin.seen) == 3
    headers, body = ask(edge, "/room", "br, gzip")
    assert headers["X-Cache"] == "Hit from the local edge" and brotli.decompress(body) == page
    assert len(origin.seen) == 3
    # The origin is asked for the page itself: the local gateway compresses nothing.
    assert all("HTTP_ACCEPT_ENCODING" not in seen for seen in origin.seen)


def test_a_head_request_says_what_the_get_would_send() -> None:
    page = b"<p>" + b"a waiting room " * 200
    edge = Edge(Origin(page), mode="rate", clock=clock)
    head, _ = ask(edge, "/room", CHROMIUM, method="HEAD")
    get, body = ask(edge, "/room", CHROMIUM)
    assert head["Content-Encoding"] == get["Content-Encoding"] == "br"
    assert head["Content-Length"] == get["Content-Length"] == str(len(body))


def test_a_per_visitor_path_is_never_compressed_at_the_edge() -> None:
    """CachingDisabled: no compressed objects cached, and no edge compression."""
    large = b'{"allow": false, "padding": "' + b"x" * 5_000 + b'"}'
    origin = Origin(large, {"Content-Type": "application/json", "Cache-Control": "no-store"})
    edge = Edge(origin, mode="rate", clock=clock)
    per_visitor = [b.path for b in behaviors("rate") if not b.compressed]
    assert {"/polling", "/client"} <= set(per_visitor)
    for path in per_visitor:
        headers, body = ask(edge, path, CHROMIUM)
        assert "Content-Encoding" not in headers and body == large


@pytest.mark.parametrize(
    ("size", "content_type", "extra", "compressed"),
    [
        (MIN_BYTES - 1, "text/html", {}, False),
        (MIN_BYTES, "text/html", {}, True),
        (MAX_BYTES, "text/html", {}, True),
        (MAX_BYTES + 1, "text/html", {}, False),
        (5_000, "application/json", {}, True),
        (5_000, "text/javascript; charset=utf-8", {}, True),
        (5_000, "image/svg+xml", {}, True),
        (5_000, "image/png", {}, False),
        (5_000, "application/octet-stream", {}, False),
        (5_000, "text/html", {"Content-Encoding": "identity"}, False),
    ],
)
def test_what_is_compressed_is_what_cloudfront_compresses(
    size: int, content_type: str, extra: dict[str, str], compressed: bool
) -> None:
    body = b"x" * size
    origin = Origin(body, {"Content-Type": content_type, "Cache-Control": "max-age=2", **extra})
    edge = Edge(origin, mode="rate", clock=clock)
    headers, sent = ask(edge, "/state", "gzip")
    assert (headers.get("Content-Encoding") == "gzip") is compressed
    assert (gzip.decompress(sent) if compressed else sent) == body


@pytest.mark.parametrize(
    ("etag", "sent"),
    [('"v1"', 'W/"v1"'), ('W/"v1"', 'W/"v1"'), ("v1", None)],
)
def test_a_compressed_answers_etag_is_made_weak_or_dropped(etag: str, sent: str | None) -> None:
    body = b"y" * 2_000
    origin = Origin(body, {"Content-Type": "text/html", "Cache-Control": "max-age=60",
                           "ETag": etag})  # fmt: skip
    edge = Edge(origin, mode="rate", clock=clock)
    assert ask(edge, "/room", "br")[0].get("ETag") == sent
    # An answer not compressed keeps its ETag as the origin gave it.
    assert ask(edge, "/room", None)[0]["ETag"] == etag
