"""The live operator view of a local room: its own loopback port, for the operator's eyes only.

| route | what |
|---|---|
| `GET /` | the page: the room's figures and charts, refreshed every few seconds |
| `GET /charts` | the figures and charts alone (what the page fetches to refresh) |
| `GET /view.js` | the page's refresh script (its own file: the policy allows no inline script) |

Nothing here is for visitors. The server listens on 127.0.0.1 only, on a port apart from the
room's routes, so a visitor's page (the room's origin or the shop's) is another origin; it
sends no CORS header, so no other origin can read an answer, and it refuses outright, with
403, a request that carries an Origin other than its own, that a browser marks as cross-site
(`Sec-Fetch-Site`), or that names another host (a DNS rebinding attempt). Only GET and HEAD.
The charts are drawn from the room's counters (`LiveCounters`) by the same code as the
simulation report's (beekeeper.charts).
"""

from __future__ import annotations

import html
import logging
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from beekeeper.charts import figures
from beekeeper.charts.svg import ChartsUnavailable
from beekeeper.charts.words import Timeline, about, clock
from beekeeper.core.loopback import loopback_host_headers
from beekeeper.core.polling import eta_seconds
from beekeeper.local.http_server import StartResponse
from beekeeper.local.live_counters import LiveCounters, LiveSeries

log = logging.getLogger("beekeeper.local")

WHAT = "The live view"
REFRESH_SECONDS = 3
SCRIPT = Path(__file__).with_name("operator_view.js")

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; connect-src 'self'; "
        "style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; "
        "form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}
# What a browser says about where a request comes from: same origin, or typed by a person.
_OWN_FETCH_SITES = {"same-origin", "none"}

STYLE = (
    figures.PAGE_STYLE
    + """
.figures { display: flex; flex-wrap: wrap; gap: .75rem; margin: 1rem 0; padding: 0; }
.figures div { background: #fff; padding: .5rem 1rem; border-radius: 6px;
               box-shadow: 0 1px 2px rgba(0, 0, 0, .08); }
.figures dt { font-size: .85rem; color: #4b5563; }
.figures dd { margin: 0; font-size: 1.35rem; font-weight: 600; }
.updated { color: #4b5563; font-size: .9rem; }
"""
)


class OperatorView:
    """The view's WSGI app. `port` is set once the server has bound its socket."""

    def __init__(
        self,
        *,
        room: str,
        counters: LiveCounters,
        clock: Callable[[], float] = time.time,
        refresh_seconds: int = REFRESH_SECONDS,
    ) -> None:
        self.room = room
        self.counters = counters
        self.clock = clock
        self.refresh_seconds = refresh_seconds
        self.port = 0

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal is not None:
            code, reason = refusal
            log.warning("operator view refused %s %s: %s", environ.get("REQUEST_METHOD"),
                        environ.get("PATH_INFO"), reason)  # fmt: skip
            return _answer(start_response, code, "text/plain; charset=utf-8", reason + "\n")
        path = environ.get("PATH_INFO", "/")
        if path == "/":
            return _answer(start_response, 200, "text/html; charset=utf-8", self.page())
        if path == "/charts":
            return _answer(start_response, 200, "text/html; charset=utf-8", self.fragment())
        if path == "/view.js":
            return _answer(
                start_response, 200, "text/javascript; charset=utf-8", SCRIPT.read_text()
            )
        return _answer(start_response, 404, "text/plain; charset=utf-8", "not found\n")

    def _refusal(self, environ: dict[str, Any]) -> tuple[int, str] | None:
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return 405, "the operator view only answers GET"
        own = loopback_host_headers(self.port)
        if environ.get("HTTP_HOST", "") not in own:
            return 403, "the operator view answers only requests to its own loopback address"
        origin = environ.get("HTTP_ORIGIN")
        if origin is not None and origin.removeprefix("http://") not in own:
            return 403, "the operator view answers only its own pages, not another origin's"
        site = environ.get("HTTP_SEC_FETCH_SITE")
        if site is not None and site not in _OWN_FETCH_SITES:
            return 403, "the operator view answers only its own pages, not another site's"
        return None

    # -- what it shows --------------------------------------------------------------------

    def page(self) -> str:
        title = f"Room {self.room}: live"
        return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<style>{STYLE}</style>
<script src="view.js" defer></script>
</head>
<body>
<main>
<h1>{html.escape(title)}</h1>
<div id="live" data-refresh-seconds="{self.refresh_seconds}">{self.fragment()}</div>
</main>
</body>
</html>
"""

    def fragment(self) -> str:
        now = self.clock()
        series = self.counters.series(now)
        updated = f"Updated at {clock(datetime.fromtimestamp(now).replace(microsecond=0))}"
        body = _figures(series.latest, series)
        try:
            body += "".join(chart.to_html() for chart in live_charts(series))
        except ChartsUnavailable as error:
            body += f'<p class="warning">{html.escape(str(error))}</p>'
        return (
            f'<p class="updated" data-updated="{now:.3f}">{updated}, from the room\'s counters; '
            f"refreshed every {self.refresh_seconds} s.</p>{body}"
        )


def live_charts(series: LiveSeries) -> list[figures.Chart]:
    """The simulation report's first two charts, over the room's last hour."""
    timeline = Timeline(datetime.fromtimestamp(series.first_minute_at), series.minute_seconds)
    return [
        figures.per_minute(
            "per-minute",
            WHAT,
            timeline,
            arrivals=series.arrivals_per_minute,
            admitted=series.admitted_per_minute,
            rate=series.rate_per_minute,
        ),
        figures.waiting(
            "waiting",
            WHAT,
            timeline,
            step_seconds=series.waiting_step_seconds,
            waiting=series.waiting,
        ),
    ]


def _figures(latest: Any, series: LiveSeries | None = None) -> str:
    if latest is None:
        return '<p class="figures-pending">The room\'s counters have not been read yet.</p>'
    wait = eta_seconds(latest.waiting, latest.rate) if latest.enabled else None
    items = [
        ("Arrived", f"{latest.arrivals:,}"),
        ("Admitted", f"{latest.admitted:,}"),
        ("Waiting", f"{latest.waiting:,}"),
        ("Rate", f"{latest.rate:,} a minute" if latest.enabled else "off"),
        ("A newcomer waits", "the room is off" if wait is None else about(wait)),
    ]
    if series is not None:
        # What visitors' pages ask: all of it at the edge, the rest of it at the origin (over
        # the last REQUESTS_WINDOW_SECONDS).
        items += [
            ("Edge requests", requests_said(series.edge_per_second)),
            ("Origin requests", requests_said(series.origin_per_second)),
        ]
    # What the room told pages on its push channel, and how many listen.
    items += [
        ("Pages subscribed", f"{latest.subscriptions:,}"),
        ("Changes pushed", f"{latest.publishes:,} ({latest.deliveries:,} deliveries)"),
    ]
    cells = "".join(
        f'<div><dt>{name}</dt><dd data-figure="{name.lower().replace(" ", "-")}">'
        f"{html.escape(value)}</dd></div>"
        for name, value in items
    )
    return f'<dl class="figures">{cells}</dl>'


def requests_said(per_second: float) -> str:
    """ "12.5 a second"; below one a second, "12 a minute" (a few pages polling every few
    seconds are not "0.0 a second")."""
    if per_second >= 1:
        return f"{per_second:,.1f} a second"
    per_minute = round(per_second * 60)
    return "none" if per_minute == 0 else f"{per_minute:,} a minute"


def _answer(start_response: StartResponse, code: int, content_type: str, body: str) -> list[bytes]:
    data = body.encode("utf-8")
    reasons = {200: "OK", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed"}
    headers = [*HEADERS.items(), ("Content-Type", content_type),
               ("Content-Length", str(len(data)))]  # fmt: skip
    if code == 405:
        headers.append(("Allow", "GET, HEAD"))
    start_response(f"{code} {reasons[code]}", headers)
    return [data]
