"""How every browser test starts Debian's chromium: the one path and the flags it needs here.

Without the background-networking flags Chromium keeps trying hosts this machine can not reach.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@dataclass
class PageWatch:
    """What a page did: every request it made and every error it reported."""

    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def watch(page: Any) -> PageWatch:
    """Start recording a page's requests, uncaught exceptions and console errors."""
    seen = PageWatch()
    page.on("request", lambda request: seen.requests.append(request.url))
    page.on("pageerror", lambda error: seen.errors.append(str(error)))
    page.on(
        "console",
        lambda message: seen.errors.append(message.text) if message.type == "error" else None,
    )
    return seen
