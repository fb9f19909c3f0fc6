"""What the marketing link answers when a place costs work (join_work > 0).

With `join_work` on, a request without a solution gets the challenge first: a browser as a
redirect to the room's work page, whose fragment holds the challenge (a fragment never reaches
a server or a log from there); the page solves it and comes back with `?work=<solution>`.
"""

from __future__ import annotations

from beekeeper.core.join_work import Challenge

# Relative to the marketing link, as the page's own URLs are: ".../beekeeper" -> ".../work".
WORK_PAGE_LOCATION = "work"


def work_location(challenge: Challenge) -> str:
    """The work page, with the challenge in the fragment (the page reads location.hash)."""
    return f"{WORK_PAGE_LOCATION}#{challenge}"
