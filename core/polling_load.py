"""What a room's visitors send: the requests per second past the edge (the origin, API
Gateway) and at the edge (CloudFront). The one owner of the model.

The stack sizes its stage throttle with it (stacks/capacity.py), bench/edge_load.py
tabulates it next to `beekeeper simulate`'s measurement of the same requests (the page's rule
run for every visitor: simulator/pages.py), and bench/visitor_cost.py prices it.

Past the edge, whatever the length of the line (docs/pipeline.md, "The shared state"):

- the marketing link (GET /beekeeper): one request per join (the bare link's challenge, when a
  place costs work, is the edge's shared copy: core/join_work.py);
- the pages' own /polling: OWN_POLLS_PER_ADMISSION per admission (the page asks at the moment
  the shared state predicts its turn, then every 2 s until the answer is the admission:
  simulated 1.005-1.02 at 30,000 and 300,000 a minute, up to 2.5 in a room admitting ten a
  minute, where it is a fraction of a request a second);
- the edge's misses: the shared state, the bare link's challenge and the page once per their
  routes' edge lifetime (core/routes.py), from each of EDGE_CACHES caches
  (an assumption: core/edge.py);
- the shop's ticket checks (GET /client), if it checks online, and capacity mode's /enter and
  /leave: `client_checks_per_admission` each.

At the edge, on top: every waiting page fetches the shared state every DOCUMENT_EVERY_SECONDS
while it is visible (hidden pages far from their turn much less often: core/serving.py), and
loads the page once; a new visitor gets the challenge and the work page once each when a place
costs work.

The poll rule of /polling's answer (core/polling.py) is what a page without the shared state
falls back to; `standing_polls_per_second` gives what it would cost a line, the load the edge
removes (bench/edge_load.py shows both).
"""

from __future__ import annotations

from beekeeper.core.edge import EDGE_CACHES
from beekeeper.core.polling import POLL_AFTER_MAX_SECONDS, poll_after_seconds
from beekeeper.core.routes import MARKETING_LINK, ROOM_PAGE, STATE
from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS

# Own /polling per admission the stack provisions for: the simulated figures (above) with room
# for a standard queue's worse reordering and a busier table.
OWN_POLLS_PER_ADMISSION = 1.3


def edge_misses_per_second() -> float:
    """The shared state's, the page's and the shared challenge's misses reaching the origin,
    at most."""
    return (
        EDGE_CACHES / STATE.edge.seconds
        + EDGE_CACHES / ROOM_PAGE.edge.seconds
        + EDGE_CACHES / MARKETING_LINK.edge.seconds
    )


def origin_requests_per_second(
    *,
    joins_per_second: float,
    rate_per_minute: float,
    client_checks_per_admission: float = 0.0,
    own_polls_per_admission: float = OWN_POLLS_PER_ADMISSION,
) -> float:
    """Requests past the edge: joins, own polls and checks per admission, the edge's misses."""
    admissions = rate_per_minute / 60
    per_admission = own_polls_per_admission + client_checks_per_admission
    return joins_per_second + admissions * per_admission + edge_misses_per_second()


def edge_requests_per_second(
    *,
    waiting: int,
    joins_per_second: float,
    rate_per_minute: float,
    client_checks_per_admission: float = 0.0,
    join_work: bool = True,
) -> float:
    """Every request at the edge: the origin's, each waiting (visible) page's fetches of the
    shared state, and each new visitor's page load (and their challenge and work page when a
    place costs work)."""
    origin = origin_requests_per_second(
        joins_per_second=joins_per_second,
        rate_per_minute=rate_per_minute,
        client_checks_per_admission=client_checks_per_admission,
    )
    loads = joins_per_second * (3 if join_work else 1)
    return origin - edge_misses_per_second() + waiting / DOCUMENT_EVERY_SECONDS + loads


def standing_polls_per_second(
    line_length: int, rate_per_minute: int, *, interval_factor: float = 1.0
) -> float:
    """The poll rule's load without the edge: sum over positions 1..line_length of
    1 / (interval_factor x poll_after), in groups of positions with the same poll interval (it
    only grows towards the back). Exact for a line that does not move faster than its polls,
    and an upper bound with interval_factor 1."""
    if line_length <= 0:
        return 0.0
    if rate_per_minute <= 0:
        return line_length / (poll_after_seconds(1, rate_per_minute) * interval_factor)
    total = 0.0
    first = 1
    while first <= line_length:
        wait = poll_after_seconds(first, rate_per_minute)
        if wait == POLL_AFTER_MAX_SECONDS:
            # Everyone further back polls at the cap.
            return total + (line_length - first + 1) / (wait * interval_factor)
        # The first position further back that polls less often.
        low, high = first, line_length + 1
        while low < high:
            middle = (low + high) // 2
            if poll_after_seconds(middle, rate_per_minute) == wait:
                low = middle + 1
            else:
                high = middle
        total += (low - first) / (wait * interval_factor)
        first = low
    return total
