"""CloudFront's edge compression, for the local edge (local/edge.py): what a viewer is sent.

A deployed room's cached paths compress at the edge: every cache behavior has Compress on and
the cache policies of the cached paths cache Gzip and Brotli objects (stacks/edge.py;
core.edge.Behavior.compressed). What CloudFront then does, from its developer guide ("Serve
compressed files" and "Cache compressed objects"):

- The viewer's Accept-Encoding is normalized to `br,gzip`, `gzip`, `br` or nothing, and that
  is part of the cache key: a viewer that accepts neither gets (and is kept) an uncompressed
  copy. When the viewer accepts both, CloudFront uses Brotli. A request over HTTP/1.0 has its
  Accept-Encoding removed and is served uncompressed.
- The normalized header also goes to the origin. The room's origin, API Gateway, gzips answers
  over 1 KiB (stacks/api.py) only when the first coding listed is one it supports ("The
  highest-priority content encoding must be one supported by API Gateway", "Enable payload
  compression for an API"; API Gateway reads the first coding listed). For `br,gzip` it
  compresses nothing, so the edge compresses with Brotli; for `gzip` the origin's gzip or the
  edge's (for 1,000 to 1,023 bytes) reaches the viewer alike. The local gateway compresses
  nothing and the local edge compresses as CloudFront's edge would: the encoding the viewer
  gets is the same.
- An answer is compressed when its Content-Type is one of COMPRESSED_TYPES, it is 1,000 to
  10,000,000 bytes long, its size is known (Content-Length) and it has no Content-Encoding
  already ("Conditions for compression", "File types that CloudFront compresses").
- A strong ETag becomes weak (`W/` put before it), a weak one stays as it is, one that is
  neither is removed ("ETag header conversion"). What CloudFront does with Vary the guide
  does not say: the local edge leaves the origin's headers as they are otherwise.
- A path whose cache policy caches nothing (CachingDisabled: the per-visitor routes) is never
  compressed at the edge: "Cache compressed objects" can not be on with caching off, and TTLs
  of 0 turn edge compression off too.

The levels CloudFront compresses at are not published; the local edge uses moderate ones
(GZIP_LEVEL, BROTLI_QUALITY) rather than the smallest output, so a rehearsal transfers no less
than AWS would. Brotli is the `brotli` package's (the `local` extra).
"""

from __future__ import annotations

import gzip
import re

import brotli

from beekeeper.core.edge import EDGE_ENCODINGS

# "File types that CloudFront compresses": the Content-Type values (the media type, without its
# parameters such as charset).
COMPRESSED_TYPES = frozenset(
    {
        "application/dash+xml",
        "application/eot",
        "application/font",
        "application/font-sfnt",
        "application/javascript",
        "application/json",
        "application/opentype",
        "application/otf",
        "application/pkcs7-mime",
        "application/protobuf",
        "application/rss+xml",
        "application/truetype",
        "application/ttf",
        "application/vnd.apple.mpegurl",
        "application/vnd.ms-fontobject",
        "application/xhtml+xml",
        "application/xml",
        "application/x-font-opentype",
        "application/x-font-truetype",
        "application/x-font-ttf",
        "application/x-httpd-cgi",
        "application/x-javascript",
        "application/x-mpegurl",
        "application/x-opentype",
        "application/x-otf",
        "application/x-perl",
        "application/x-ttf",
        "font/eot",
        "font/opentype",
        "font/otf",
        "font/ttf",
        "image/svg+xml",
        "text/css",
        "text/csv",
        "text/html",
        "text/javascript",
        "text/js",
        "text/plain",
        "text/richtext",
        "text/tab-separated-values",
        "text/xml",
        "text/x-component",
        "text/x-java-source",
        "text/x-script",
        "vnd.apple.mpegurl",
    }
)
# "The file size must be between 1,000 and 10,000,000 bytes."
MIN_BYTES = 1_000
MAX_BYTES = 10_000_000

GZIP_LEVEL = 6  # zlib's own default
BROTLI_QUALITY = 5  # of 0-11; 11 (the library's default) is the smallest and slowest

_CODING = re.compile(r"^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*(?:;\s*q\s*=\s*([0-9.]+))?\s*$")


def normalized(accept_encoding: str | None, protocol: str = "HTTP/1.1") -> str | None:
    """The viewer's Accept-Encoding as CloudFront puts it in the cache key and the origin
    request: "br,gzip", "gzip", "br", or None (neither accepted, none sent, or HTTP/1.0). A
    coding given a q of 0 is refused, as HTTP says (RFC 9110, 12.5.3)."""
    if not accept_encoding or protocol.upper() == "HTTP/1.0":
        return None
    accepted = set()
    for part in accept_encoding.split(","):
        match = _CODING.match(part)
        if match is None:
            continue
        coding, quality = match.group(1).lower(), match.group(2)
        try:
            refused = quality is not None and float(quality) == 0
        except ValueError:
            refused = True
        if coding in EDGE_ENCODINGS and not refused:
            accepted.add(coding)
    if not accepted:
        return None
    return ",".join(sorted(accepted))  # "br,gzip": br sorts first


def chosen(normalized_header: str | None) -> str | None:
    """The coding the edge compresses with: Brotli when the viewer accepts it, else gzip when
    accepted, else none."""
    if normalized_header is None:
        return None
    codings = normalized_header.split(",")
    if "br" in codings:
        return "br"
    return "gzip" if "gzip" in codings else None


def compressible(headers: list[tuple[str, str]], body: bytes) -> bool:
    """Whether CloudFront compresses an answer with these headers and body."""
    if _header(headers, "Content-Encoding") is not None:
        return False
    media_type = (_header(headers, "Content-Type") or "").split(";", 1)[0].strip().lower()
    return media_type in COMPRESSED_TYPES and MIN_BYTES <= len(body) <= MAX_BYTES


def compressed(
    headers: list[tuple[str, str]], body: bytes, coding: str | None
) -> tuple[list[tuple[str, str]], bytes]:
    """The answer as the viewer gets it: compressed with `coding` when it is compressible,
    with Content-Encoding said and the ETag made weak; else as it is. The caller sets the
    Content-Length of what it sends."""
    if coding is None or not compressible(headers, body):
        return headers, body
    if coding == "br":
        packed = brotli.compress(body, quality=BROTLI_QUALITY)
    else:
        packed = gzip.compress(body, GZIP_LEVEL, mtime=0)
    kept = [(k, v) for k, v in headers if k.lower() not in ("etag", "content-length")]
    etag = _weak(_header(headers, "ETag"))
    if etag is not None:
        kept.append(("ETag", etag))
    return [*kept, ("Content-Encoding", coding)], packed


def _weak(etag: str | None) -> str | None:
    """A strong ETag made weak, a weak one kept, an invalid one (or none) dropped."""
    if etag is None:
        return None
    if etag.startswith("W/"):
        return etag
    if etag.startswith('"'):
        return "W/" + etag
    return None


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name.lower()), None)


__all__ = [
    "BROTLI_QUALITY",
    "COMPRESSED_TYPES",
    "GZIP_LEVEL",
    "MAX_BYTES",
    "MIN_BYTES",
    "chosen",
    "compressed",
    "compressible",
    "normalized",
]
