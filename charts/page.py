"""One self-contained HTML page of charts for an operator: the simulation report's and the event
report's.

The page holds everything it shows: inline SVG drawn by matplotlib, inline CSS, no script, no
font, no image to fetch, and a Content-Security-Policy that forbids fetching anything should a
future change try to. The summary on top says the figures in words, for the operator who reads
one paragraph and for the one who reads none.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from beekeeper.charts import figures

# What the page may load: nothing. Inline styles only (matplotlib's SVG carries a <style>).
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = (
    figures.PAGE_STYLE
    + """
.command { font-family: ui-monospace, monospace; font-size: .85rem; color: #374151;
           overflow-wrap: anywhere; }
.summary { background: #fff; border-left: 4px solid #1f5f99; padding: .75rem 1.25rem;
           margin: 1rem 0 1.5rem; }
.summary li { margin: .25rem 0; }
.notes { color: #374151; font-size: .9rem; }
.words td { text-align: left; }
"""
)


def report_page(
    *,
    title: str,
    headline: str,
    command: str,
    summary: Sequence[str],
    warnings: Sequence[str] = (),
    sections: Sequence[str] = (),
    notes: Sequence[str] = (),
) -> str:
    """The whole HTML document. `sections` are HTML already (charts' `to_html()`); every
    other text is escaped here."""
    lines = "".join(f"<li>{html.escape(line)}</li>" for line in summary)
    warned = "".join(f'<p class="warning">{html.escape(line)}</p>' for line in warnings)
    noted = ""
    if notes:
        noted = (
            '<section class="notes" aria-labelledby="notes-heading">'
            '<h2 id="notes-heading">What the figures do not show</h2><ul>'
            + "".join(f"<li>{html.escape(note)}</li>" for note in notes)
            + "</ul></section>"
        )
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">
<title>{html.escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>{html.escape(headline)}</h1>
<p class="command">{html.escape(command)}</p>
<section class="summary" aria-labelledby="summary-heading">
<h2 id="summary-heading">In short</h2>
<ul>{lines}</ul>
{warned}
</section>
{"".join(sections)}
{noted}
</main>
</body>
</html>
"""
