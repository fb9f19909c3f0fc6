"""matplotlib figures as inline SVG: no JavaScript, no fonts or files fetched when shown.

matplotlib (the `charts` extra) draws on the server side; the browser only paints the SVG it
is given, so a report opened from disk or a live view on loopback makes no request of its own.
Text stays text (`svg.fonttype = none`), so it is small, sharp and readable by screen readers,
and each SVG's ids carry a prefix, so several charts can share one HTML document.
"""

from __future__ import annotations

import html
import importlib
import io
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

EXTRA = "charts"
INSTALL_HINT = f"pip install 'beekeeper-waiting-room[{EXTRA}]'"

# The room's colours for every chart (colour-blind safe pairs, dark enough on white).
ARRIVALS = "#9db4d0"
ADMITTED = "#1f5f99"
RATE = "#c2410c"
WAITING = "#6d28d9"
MARKERS = "#374151"
FAULT_COLOURS = {
    "crash": "#b91c1c",
    "throttle": "#d97706",
    "duplicates": "#0f766e",
    "double-trigger": "#4b5563",
}

# Every text of a chart is this size (points: the SVG's own units, 72 to the inch).
FONT_SIZE = 10

_STYLE = {
    "svg.fonttype": "none",
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial", "Helvetica"],
    "font.size": FONT_SIZE,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e5e7eb",
    "axes.axisbelow": True,
    "legend.frameon": False,
}


class ChartsUnavailable(Exception):
    """matplotlib is not installed: the sentence names the extra that brings it."""

    def __init__(self, what: str, missing: str) -> None:
        super().__init__(
            f"{what} needs the {EXTRA} extra ({missing} is not installed): {INSTALL_HINT}"
        )


# matplotlib logs at INFO ("generated new fontManager") and WARNING ("building the font
# cache") when it first builds its font cache: news of its own housekeeping, which would land
# in the log of whatever draws a chart (a local room's, whose log is the room's story). Its
# errors still show.
FONT_CACHE_LOGGER = "matplotlib.font_manager"


def _matplotlib(what: str) -> tuple[Any, Any]:
    logging.getLogger(FONT_CACHE_LOGGER).setLevel(logging.ERROR)
    try:
        matplotlib = importlib.import_module("matplotlib")
        figure_module = importlib.import_module("matplotlib.figure")
    except ImportError as error:
        raise ChartsUnavailable(what, error.name or "matplotlib") from error
    return matplotlib, figure_module.Figure


def check_available(what: str) -> None:
    """Fail early (before a long simulation, say) when the charts can not be drawn."""
    _matplotlib(what)


Paint = Callable[[Any], None]  # draws on one matplotlib Axes

# matplotlib's style settings are process-wide: one chart is drawn at a time.
_drawing = threading.Lock()


def render_svg(
    what: str,
    paint: Paint,
    *,
    size: tuple[float, float],
    chart_id: str,
    title: str,
    described_by: str,
) -> str:
    """One chart (`size` in inches) as an `<svg>` element to inline in an HTML document.

    The SVG is titled, points at its text alternative (`described_by`, an element id) and has
    its ids prefixed by `chart_id`; the same input always gives the same bytes.
    """
    matplotlib, figure_type = _matplotlib(what)
    buffer = io.StringIO()
    with _drawing, matplotlib.rc_context({**_STYLE, "svg.hashsalt": chart_id}):
        figure = figure_type(figsize=size, layout="constrained")
        paint(figure.add_subplot())
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return _inline(buffer.getvalue(), chart_id, title, described_by)


def _inline(document: str, chart_id: str, title: str, described_by: str) -> str:
    svg = document[document.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.DOTALL)
    svg = re.sub(r'\bid="', f'id="{chart_id}-', svg)
    svg = svg.replace("url(#", f"url(#{chart_id}-").replace('href="#', f'href="#{chart_id}-')
    # Scales with the page; the viewBox keeps the aspect ratio.
    svg = re.sub(r'^<svg ([^>]*?)width="[^"]*" height="[^"]*"', r'<svg \1width="100%"', svg)
    opening_end = svg.index(">")
    return (
        svg[:opening_end]
        + f' role="img" aria-labelledby="{chart_id}-title" aria-describedby="{described_by}">'
        + f'<title id="{chart_id}-title">{html.escape(title)}</title>'
        + svg[opening_end + 1 :]
    )
