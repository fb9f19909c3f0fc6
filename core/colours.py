"""Readable colours derived from a room's accent colour (WCAG 2.1 contrast, success criteria
1.4.3 and 1.4.11), so any brand colour an operator picks still gives an accessible page.

- on-accent: black or white, whichever contrasts more with the accent (at least 4.58:1 for
  every colour), for the display name on the accent band;
- accent-ink: the accent, darkened only as much as needed to reach 4.5:1 on the page's light
  backgrounds, for links, the progress bar and focus outlines;
- on-accent-ink: the text colour on accent-ink (buttons).
"""

from __future__ import annotations

WHITE = "#ffffff"
BLACK = "#000000"
# The lightest-but-one background text sits on (the page and the wait note); white is lighter.
PAGE_BACKGROUND = "#f4f5f7"
TEXT_CONTRAST = 4.5


def _channels(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def relative_luminance(colour: str) -> float:
    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _channels(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(first: str, second: str) -> float:
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def readable_text_on(background: str) -> str:
    """Black or white, whichever reads better on `background`."""
    if contrast_ratio(background, WHITE) >= contrast_ratio(background, BLACK):
        return WHITE
    return BLACK


def ink_for(accent: str, background: str = PAGE_BACKGROUND) -> str:
    """`accent` mixed towards black in small steps until it reads as text on `background`."""
    r, g, b = _channels(accent)
    for step in range(101):
        keep = 1 - step / 100
        colour = f"#{round(r * keep):02x}{round(g * keep):02x}{round(b * keep):02x}"
        if contrast_ratio(colour, background) >= TEXT_CONTRAST:
            return colour
    return BLACK


def theme_properties(accent: str) -> str:
    """The CSS custom properties page.css uses, for a `:root { ... }` rule."""
    accent = accent.lower()
    ink = ink_for(accent)
    return (
        f"--accent:{accent};--on-accent:{readable_text_on(accent)};"
        f"--accent-ink:{ink};--on-accent-ink:{readable_text_on(ink)}"
    )
