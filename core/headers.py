"""The HTTP headers the room's answers carry, and the origin a browser sends for the shop.

The stack configures API Gateway with these and local mode serves them, so a page or an answer
carries the same headers in both. Standard library only.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from beekeeper.core.join_work import SHARED_SECONDS
from beekeeper.core.routes import PAGE_EDGE_SECONDS
from beekeeper.core.tickets import JWKS_MAX_AGE_SECONDS

# GET /room: the waiting room page (stacks/page.py says why each is there).
PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    # The edge keeps the page (the same for everyone) a minute, a browser asks again on every
    # load: a redeployed page is seen within a minute (the route table, core/routes.py).
    "Cache-Control": f"max-age=0, s-maxage={PAGE_EDGE_SECONDS}",
    # The page's own meta policy can not forbid framing; this header does.
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

# The producer's answers at the marketing link (its 302 into the line or to the shop, and its
# own pages): never cached, never sniffed, no referrer. The /polling redirect template's
# headers are vtl/integration.py's for now: they are to join these.
MARKETING_LINK_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
# The one answer of the marketing link that is the same for everyone: a browser's challenge,
# for a request that brings no solution (core/join_work.py, "a shared one"). The edge keeps it
# SHARED_SECONDS under a key of the visitor's cookie, token header, Accept and `work` parameter
# (core/edge.py); a browser keeps nothing. No Vary: the room answers over HTTPS only, so the
# edge is the one shared cache on the way, and its key already holds what the answer depends on.
SHARED_CHALLENGE_HEADERS = {
    **MARKETING_LINK_HEADERS,
    "Cache-Control": f"public, max-age=0, s-maxage={SHARED_SECONDS}",
}

# /polling and /client answers, success and error alike: JSON that is never cached.
JSON_ANSWER_HEADERS = {"Content-Type": "application/json", "Cache-Control": "no-store"}

# GET /jwks.json: public keys, cached by shops (and any proxy) for as long as the key timing of
# core/tickets.py counts on; no CORS: shops verify tickets on their servers.
JWKS_HEADERS = {
    "Content-Type": "application/json",
    "Cache-Control": f"public, max-age={JWKS_MAX_AGE_SECONDS}",
}


# GET /presence.js: the presence script the shop's pages load (core/presence.py). Public and
# cacheable like the keys, for as long as a shop caches those. A shop loads it with an integrity
# hash, and a browser checks that only on a CORS answer ("crossorigin" fetches it without
# credentials, so any origin may read it); a shop that isolates itself (Cross-Origin-Embedder-
# Policy) loads only what says it may be embedded cross-origin.
PRESENCE_SCRIPT_HEADERS = {
    "Content-Type": "text/javascript; charset=utf-8",
    "Cache-Control": f"public, max-age={JWKS_MAX_AGE_SECONDS}",
    "Access-Control-Allow-Origin": "*",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "X-Content-Type-Options": "nosniff",
}


def browser_origin(url: str) -> str:
    """The url's scheme://host[:port] exactly as a browser sends it in the Origin header.

    Lower-case scheme and host, an internationalised host in its ASCII (punycode) form, an
    IPv6 literal in brackets, no path, and no port when it is the scheme's default.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").encode("idna").decode("ascii").lower()
    if ":" in host:
        host = f"[{host}]"
    default_port = {"http": 80, "https": 443}.get(scheme)
    port = f":{parts.port}" if parts.port is not None and parts.port != default_port else ""
    return f"{scheme}://{host}{port}"


def cors_headers(origin_url: str) -> dict[str, str]:
    """What lets the shop's own pages (at `origin_url`) read /client answers with cookies."""
    return {
        "Access-Control-Allow-Origin": browser_origin(origin_url),
        "Access-Control-Allow-Credentials": "true",
        "Vary": "Origin",
    }
