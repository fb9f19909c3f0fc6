"""When the waiting room page polls: the one owner of its bounds, jitter and timings.

The page (waiting_room_site/page.js) gets these values as the templates get theirs:
render_page writes them into the page's script (`PAGE_CONSTANTS`, by the names page.js
declares), and tests/unit/test_page_timing.py holds page.js's own literals (what its node tests
run) equal to them. The simulator and bench/ model the page with the same values.

The poll rule itself (what `poll_after` the room answers) is core/polling.py's; the page never
polls sooner than asked, within that rule's bounds.
"""

from __future__ import annotations

from beekeeper.core.polling import POLL_AFTER_MAX_SECONDS, POLL_AFTER_MIN_SECONDS
from beekeeper.core.schedule import START_JITTER_SECONDS

# The page waits poll_after x (1 + POLL_JITTER x random()): never sooner than asked, and a
# crowd that arrived together does not stay in step.
POLL_JITTER = 0.25
MEAN_POLL_STRETCH = 1 + POLL_JITTER / 2  # the jitter's mean factor on every interval
# An answer without a usable poll_after: ask again after this long.
DEFAULT_POLL_SECONDS = 20
# After a failed poll: BACKOFF_FIRST_SECONDS, doubling per failure up to BACKOFF_MAX_SECONDS,
# each randomised into [half, whole].
BACKOFF_FIRST_SECONDS = 2
BACKOFF_MAX_SECONDS = 60

# Not the page's but a model of it, for the simulator: from the marketing link's redirect to
# the page's first poll (the page polls as soon as it has loaded).
FIRST_POLL_AFTER_JOIN_SECONDS = 1.0

# page.js's name for each value render_page writes into it.
PAGE_CONSTANTS: dict[str, int | float] = {
    "MIN_POLL_SECONDS": POLL_AFTER_MIN_SECONDS,
    "MAX_POLL_SECONDS": POLL_AFTER_MAX_SECONDS,
    "POLL_JITTER": POLL_JITTER,
    "DEFAULT_POLL_SECONDS": DEFAULT_POLL_SECONDS,
    "BACKOFF_FIRST_SECONDS": BACKOFF_FIRST_SECONDS,
    "BACKOFF_MAX_SECONDS": BACKOFF_MAX_SECONDS,
    "START_JITTER_SECONDS": START_JITTER_SECONDS,
}
