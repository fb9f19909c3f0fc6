"""A page of a few sentences in the room's own look: its name, accent colour and logo.

What the marketing link answers when it does not send a visitor on (the event is over, the
room is busy, a request no browser sends) and the demo shop's pages look like the waiting room
page: the event's name on a band of the accent colour, with its logo, above a white card. The
colours are derived from the accent as the waiting room page derives them (core/colours.py:
WCAG 2.1 contrast), so any brand colour reads. No script; with `policy` the page carries a
Content-Security-Policy that lets nothing load but its own style and the logo.

Standard library only: the producer serves it from the Lambda asset.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from beekeeper.core.colours import theme_properties
from beekeeper.core.settings import RoomSettings

# The waiting room page's look (waiting_room_site/page.css), for a page without its script.
STYLE = (
    "*,*::before,*::after{box-sizing:border-box}"
    "body{margin:0;font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
    "sans-serif;font-size:1.0625rem;line-height:1.5;color:#1b1d21;background:#f4f5f7}"
    ".band{background:var(--accent);color:var(--on-accent);padding:1.25rem 1rem 4.5rem;"
    "text-align:center}"
    ".band img{display:block;max-height:3rem;max-width:12rem;margin:0 auto .75rem}"
    ".band h1{margin:0;font-size:clamp(1.5rem,5vw,2.25rem);line-height:1.2;"
    "overflow-wrap:anywhere}"
    ".band .label{margin:.25rem 0 0;font-size:.9375rem}"
    ".card{max-width:36rem;margin:-3.5rem auto 2rem;padding:1.5rem 1.25rem;background:#fff;"
    "border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12),0 8px 24px rgba(0,0,0,.06)}"
    "@media (min-width:40rem){.card{padding:2rem 2.5rem}}"
    "@media (max-width:37rem){.card{margin-left:.75rem;margin-right:.75rem}}"
    ".card h2{margin:0 0 .75rem;font-size:1.375rem}"
    ".card p{margin:0 0 1rem}"
    "a{color:var(--accent-ink);text-underline-offset:.15em}"
    "button{padding:.75rem 1.25rem;border:0;border-radius:.5rem;background:var(--accent-ink);"
    "color:var(--on-accent-ink);font:inherit;font-weight:700;cursor:pointer}"
    "a:focus-visible,button:focus-visible{outline:3px solid var(--accent-ink);"
    "outline-offset:3px}"
)


@dataclass(frozen=True)
class Brand:
    """The room's name and look, as its settings give them."""

    display_name: str
    accent_colour: str = "#1f5fbf"
    logo_url: str = ""

    @classmethod
    def of(cls, settings: RoomSettings) -> Brand:
        return cls(settings.display_name, settings.accent_colour, settings.logo_url)


def render(
    brand: Brand,
    *,
    title: str,
    paragraphs: Sequence[str],
    language: str = "en",
    label: str = "",
    extra_html: str = "",
    heading_id: str = "",
    paragraph_id: str = "",
    policy: bool = True,
) -> str:
    """The page: `title` (a heading) and `paragraphs` (plain text, escaped here) on a card under
    the room's band, `label` (plain text) under the room's name, then `extra_html` as given.
    `heading_id` and `paragraph_id` name the heading and the first paragraph for a script or a
    test to find."""
    style = style_of(brand)
    body = "".join(
        f"<p{_id(paragraph_id) if n == 0 else ''}>{_text(text)}</p>"
        for n, text in enumerate(paragraphs)
    )
    logo = (
        f'<img src="{html.escape(brand.logo_url)}" alt="" referrerpolicy="no-referrer">'
        if brand.logo_url
        else ""
    )
    name = _text(brand.display_name)
    label_html = f'<p class="label">{_text(label)}</p>' if label else ""
    security = (
        f'<meta http-equiv="Content-Security-Policy" '
        f'content="{html.escape(security_policy(style, brand.logo_url))}">'
        if policy
        else ""
    )
    return (
        f'<!doctype html><html lang="{html.escape(language)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'{security}<meta name="referrer" content="no-referrer">'
        f"<title>{_text(title)}: {name}</title><style>{style}</style></head><body>"
        f'<header class="band">{logo}<h1>{name}</h1>{label_html}</header>'
        f'<main class="card"><h2{_id(heading_id)}>{_text(title)}</h2>{body}{extra_html}'
        "</main>"
        "</body></html>"
    )


def _text(text: str) -> str:
    """Text for an element's content: <, > and & escaped (quotes need no escape there)."""
    return html.escape(text, quote=False)


def _id(name: str) -> str:
    return f' id="{html.escape(name)}"' if name else ""


def style_of(brand: Brand) -> str:
    """The page's one style sheet, in the brand's colours."""
    return f":root{{{theme_properties(brand.accent_colour)}}}{STYLE}"


def own_sources(style: str, logo_url: str) -> str:
    """The Content-Security-Policy directives the page's own style and logo need."""
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")
    images = "'none'"
    if logo_url:
        parts = urlsplit(logo_url)
        images = f"{parts.scheme}://{parts.netloc}"
    return f"style-src 'sha256-{digest}'; img-src {images}"


def security_policy(style: str, logo_url: str) -> str:
    """Nothing may load but the page's own style and the logo; no script, no form."""
    return (
        f"default-src 'none'; {own_sources(style, logo_url)}; base-uri 'none'; form-action 'none'"
    )
