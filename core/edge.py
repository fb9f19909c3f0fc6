"""The edge in front of the room: what CloudFront caches and forwards, path by path.

A CloudFront distribution is the room's public address (the marketing link, the page, every
route); API Gateway is its origin only. Each path's record in the route table (core/routes.py)
says what the edge keeps of it and forwards (its EdgeRule); this module makes CloudFront's
behaviors of them: the stack builds the distribution's cache behaviors, cache policies and
origin request policies from `behaviors(mode)` (stacks/edge.py), and local mode's in-process
edge serves by the very same records (local/edge.py), so the two can not drift apart
(tests/stack/test_edge.py holds the synthesized template equal to them).

What CloudFront does with them, from its developer guide:

- A cache policy's TTLs bound what the origin's Cache-Control asks: with a minimum TTL of 0,
  CloudFront keeps an answer for the lesser of its `max-age` (or `s-maxage`, which wins for
  shared caches) and the maximum TTL, and does not keep one marked `no-store`, `no-cache` or
  `private`; the default TTL applies only to an answer with no Cache-Control at all
  ("Managing how long content stays in the cache (expiration)"). Every policy here has a
  minimum and default TTL of 0, so an answer is kept only as long as the room's own
  Cache-Control says, and never longer than the behavior's `cache_seconds`.
- The marketing link is cached under a key (a cache policy whose key holds the visitor's cookie,
  an app's token header, Accept and the `work` parameter): its one answer that is the same for
  everyone, a browser's challenge (core/join_work.py), is kept SHARED_SECONDS and given to
  every browser that follows the bare link meanwhile; every other answer it gives says
  `no-store`, or differs in the key. "Control the cache key with a policy": what a cache policy
  holds is in the key and in the origin request alike, and an origin request policy adds to it
  ("Control origin requests with a policy").
- Per-visitor routes use the managed CachingDisabled policy (TTLs 0, nothing in the cache key;
  ID 4135ea2d-6df8-44a3-9df3-4b5a84be39ad, "Use managed cache policies") and an origin request
  policy that forwards exactly what the room reads: the visitor's cookie (CloudFront removes
  every cookie not on the list, and passes the origin's Set-Cookie back only when it forwards
  cookies: "Caching content based on cookies"), the query string, and the headers below.
  CloudFront always sets Host to the origin's own domain ("Request and response behavior for
  custom origins"), so API Gateway never sees the viewer's Host.
- CloudFront caches some error statuses (404, 500-504 always; 400, 403, 405, 412, 415 with a
  max-age) for the error caching minimum TTL, 10 s by default, and serves an expired object
  while the origin answers 5xx ("How CloudFront processes and caches HTTP 4xx and 5xx status
  codes"). ERROR_CACHING_SECONDS sets that minimum to 0 for every such status, so an error
  about one visitor is never served to another and the room's "unavailable" answers are not
  kept; the document's stale copy is still served while the origin fails (docs/pipeline.md).

Standard library only: it ships with the rest of core/.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from beekeeper.core.datamodel import COOKIE_NAME, TOKEN_HEADER
from beekeeper.core.routes import ONE_COPY, TABLE, CacheKey, Mode, Route, served

# The header CloudFront adds to every request it sends the origin; the origin lock (the
# regional WAF on the API's stage, stacks/api.py) refuses any request without the room's value,
# so a visitor can not go around the edge and its per-address limit.
ORIGIN_HEADER = "x-beekeeper-edge"

# AWS WAF keeps the web ACLs of CloudFront (scope CLOUDFRONT) in this region only; so does ACM
# the certificates CloudFront serves (core.settings.CERTIFICATE_REGION).
WAF_REGION = "us-east-1"

# How many of CloudFront's caches ask the origin for a cached object once per lifetime each:
# without Origin Shield "CloudFront might send requests directly to your origin from multiple
# edge locations or regional edge caches" (CloudFront API reference, OriginShield). Taken as
# one per regional edge cache, 13 at the time of writing: an assumption of the cost model
# (core/polling_load.py) and the simulator (simulator/pages.py), not a promise (a few origin
# requests a second either way; Origin Shield, charged extra, would make it one).
EDGE_CACHES = 13

# How long a request CloudFront takes (its quotas, "General quotas": "Maximum length of a
# request, including headers and query strings, but not including the body content: 20,480
# bytes"; "Maximum length of a URL: 8,192 bytes"). So no cache key is longer: a key is made of
# the request's path, cookies, query string parameters and headers (at most 10 of each in a
# cache policy: "General quotas on policies"), every one of them part of a request within these
# bounds. What CloudFront answers a longer request is not in its documentation; the local edge
# refuses it (431, 414) and forwards nothing.
MAX_REQUEST_BYTES = 20_480
MAX_URL_BYTES = 8_192

# Statuses CloudFront would keep for its error caching minimum TTL; each is configured with 0.
CACHED_ERROR_STATUSES = (400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504)
ERROR_CACHING_SECONDS = 0

# The viewer headers a per-visitor route's origin request carries beside its cookie and query
# string: the request template API Gateway picks by Content-Type, the page's Origin for CORS
# and, with Sec-Fetch-Site, for /leave's check of the page that sent it (Sec-Fetch-Site alone:
# /enter's, vtl/_read-fetch-site.vtl), Accept for the
# marketing link's JSON join (docs/apps.md), an app's token header, and the visitor's
# languages for the marketing link's "event is over" page.
VISITOR_HEADERS = (
    "Accept",
    "Accept-Language",
    TOKEN_HEADER,
    "Content-Type",
    "Origin",
    "Sec-Fetch-Site",
)

# Statuses the edge keeps when their Cache-Control allows: success and the redirects ("How
# CloudFront processes HTTP 3xx status codes from your origin": 3xx by the response's headers;
# 307 and 308 only with a Cache-Control). Errors: ERROR_CACHING_SECONDS.
KEPT_STATUSES = (200, 301, 302, 307, 308)

# The compressed objects a cached path's cache policy caches, each in the cache key by the
# viewer's normalized Accept-Encoding (EnableAcceptEncodingBrotli and -Gzip): with both, the
# edge compresses with Brotli for a viewer that accepts both ("Serve compressed files").
EDGE_ENCODINGS = ("br", "gzip")

GET_METHODS = ("GET", "HEAD")
CORS_METHODS = ("GET", "HEAD", "OPTIONS")
ALL_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT")


@dataclass(frozen=True)
class Behavior:
    """One path of the public address: how the edge treats its requests."""

    path: str  # exact, e.g. "/polling"
    methods: tuple[str, ...]  # what CloudFront accepts (any other method: 403 from the edge)
    # How long the edge may keep an answer (the cache policy's maximum TTL); 0: never, the
    # route answers about one visitor (CachingDisabled).
    cache_seconds: int
    # What the origin request carries of the viewer's request (an origin request policy).
    cookies: tuple[str, ...] = ()
    query: bool = False
    headers: tuple[str, ...] = ()
    # What a cached answer is kept under (empty: the same answer for everyone).
    key: CacheKey = ONE_COPY

    @property
    def cached(self) -> bool:
        return self.cache_seconds > 0

    @property
    def compressed(self) -> bool:
        """Whether the edge compresses this path's answers for a viewer that accepts it: every
        behavior has Compress on, and a cache policy that caches caches Gzip and Brotli
        objects too (EDGE_ENCODINGS); CachingDisabled can not ("Cache compressed objects",
        CloudFront Developer Guide), and with TTLs of 0 the edge compresses nothing. What it
        compresses, and how: local/edge_compression.py."""
        return self.cached

    @property
    def pattern(self) -> str:
        """CloudFront's path pattern for exactly this path (no wildcard)."""
        return self.path


def cloudfront_methods(api_methods: tuple[str, ...]) -> tuple[str, ...]:
    """The least of CloudFront's method sets (GET and HEAD; with OPTIONS; or all seven) that
    holds every method the API has at a path."""
    for allowed in (GET_METHODS, CORS_METHODS, ALL_METHODS):
        if set(api_methods) <= set(allowed):
            return allowed
    raise ValueError(f"CloudFront has no method set with {api_methods}")


def behavior(route: Route) -> Behavior:
    """What the edge does at `route`'s path, by its record's EdgeRule."""
    rule = route.edge
    if not rule.per_visitor:
        return Behavior(
            route.path, cloudfront_methods(route.api_methods), rule.seconds, key=rule.key
        )
    return Behavior(
        route.path,
        cloudfront_methods(route.api_methods),
        rule.seconds,
        cookies=(COOKIE_NAME,),
        query=True,
        headers=VISITOR_HEADERS,
        key=rule.key,
    )


def behaviors(mode: Mode, table: tuple[Route, ...] = TABLE) -> tuple[Behavior, ...]:
    """Every public path of a room in `mode` (core/routes.py), in the order CloudFront lists
    them (all exact, so the order does not matter)."""
    return tuple(behavior(found) for found in served(mode, table))


def behavior_for(path: str, mode: Mode) -> Behavior | None:
    """The behavior whose path is `path`; None: the default behavior (nothing cached)."""
    return next((found for found in behaviors(mode) if found.path == path), None)


_DIRECTIVE = re.compile(r"^\s*([A-Za-z-]+)\s*(?:=\s*\"?(\d+)\"?)?\s*$")


def edge_seconds(behavior: Behavior | None, cache_control: str | None) -> int:
    """How long CloudFront keeps an answer with this Cache-Control under `behavior`'s policy
    (minimum and default TTL 0, maximum `cache_seconds`), by the developer guide's table: not
    at all when the behavior caches nothing, the answer has no Cache-Control (the default TTL),
    or it says no-store, no-cache or private; else the lesser of s-maxage (or max-age) and the
    maximum TTL."""
    if behavior is None or not behavior.cached or not cache_control:
        return 0
    max_age: int | None = None
    shared_max_age: int | None = None
    for part in cache_control.split(","):
        match = _DIRECTIVE.match(part)
        if not match:
            continue
        name, value = match.group(1).lower(), match.group(2)
        if name in ("no-store", "no-cache", "private"):
            return 0
        if name == "max-age" and value is not None:
            max_age = int(value)
        elif name == "s-maxage" and value is not None:
            shared_max_age = int(value)
    chosen = shared_max_age if shared_max_age is not None else max_age
    if chosen is None:
        return 0
    return max(0, min(chosen, behavior.cache_seconds))


__all__ = [
    "ALL_METHODS",
    "CACHED_ERROR_STATUSES",
    "CORS_METHODS",
    "EDGE_CACHES",
    "EDGE_ENCODINGS",
    "ERROR_CACHING_SECONDS",
    "GET_METHODS",
    "KEPT_STATUSES",
    "MAX_REQUEST_BYTES",
    "MAX_URL_BYTES",
    "ORIGIN_HEADER",
    "VISITOR_HEADERS",
    "WAF_REGION",
    "Behavior",
    "CacheKey",
    "behavior",
    "behavior_for",
    "behaviors",
    "cloudfront_methods",
    "edge_seconds",
]
