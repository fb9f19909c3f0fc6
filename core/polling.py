"""The estimated wait and the poll rule: the one owner of both formulas.

The producer (a cookie's lifetime), `beekeeper status` (a newcomer's wait) and the stack's
capacity model (core/polling_load.py) call these functions. The /polling response template
(vtl/polling-response.vtl) can not import Python: it computes the same formulas in VTL from the
constants below, which reach it as synth-time placeholders (vtl.template_values), and
tests/unit/test_vtl_templates.py holds its answers equal to these functions.

The rule: poll again after half the time until the visitor could be admitted at the earliest
(once everyone ahead has been: (position - 1) x 60 / rate), never sooner than
POLL_AFTER_MIN_SECONDS (near the front) and never later than POLL_AFTER_MAX_SECONDS (far back).
Halving means a visitor's polls close in on the admission geometrically: few polls while far
back, one every few seconds at the front, where admission can come at any moment (the next
slot may be theirs) and is noticed within seconds, however slow the rate.
"""

from __future__ import annotations

from beekeeper.core.settings import capped

POLL_AFTER_MIN_SECONDS = 2
POLL_AFTER_MAX_SECONDS = 300
# No rate to estimate from (no status item yet, a room deployed less than a minute ago): ask
# again soon, since a visitor may be let in within seconds.
POLL_AFTER_WITHOUT_RATE_SECONDS = 5
# The room is off: everyone in line is being let in, each with a ticket (the consumers drain
# the line unpaced); the admission comes within moments: ask again this soon.
POLL_AFTER_ROOM_OFF_SECONDS = 2
# Capacity mode: a waiting page polls at least this many times per claim window, so that an
# admission is noticed (the page's jitter and the redirect included) before its claim runs out,
# however far the turnover the estimate rests on is from the flow of the moment.
POLLS_PER_CLAIM = 2
# A token with no admission item whose place was passed more than this many minutes of
# admissions ago (and at least UNKNOWN_MIN_MARGIN visitors ago) is "unknown".
UNKNOWN_AFTER_MINUTES = 15
UNKNOWN_MIN_MARGIN = 1000


def position(ordinal: int, admitted_total: int) -> int:
    """The place in line shown: everyone before the visitor (by ordinal) not yet admitted."""
    return max(1, ordinal - admitted_total)


def admission_flow(rate: int, *, max_inside: int = 0, inside: int = 0, turnover: int = 0) -> int:
    """Visitors let in per minute from now on, the rate eta_seconds and poll_after_seconds take.

    The room's rate, unless the shop is full (capacity mode, `inside` at `max_inside`): then
    visitors go in as others leave, at the recent turnover (visitors let in per minute over the
    last few minutes), never faster than the rate. A full shop where nobody went in lately
    counts as one a minute: an estimate on the slow side, and polls that stay frequent only at
    the front of the line.
    """
    if capped(max_inside) and inside >= max_inside:
        return max(1, min(rate, turnover)) if rate > 0 else 0
    return rate


def eta_seconds(position: int, rate_per_minute: int) -> int:
    """ceil(position * 60 / rate): seconds until a visitor `position` places from the front is
    admitted at `rate_per_minute` (the front waits at most one slot's spacing, and goes in at
    once when the room has a slot free); 0 when no rate is known or nobody is ahead."""
    if rate_per_minute <= 0:
        return 0
    position = max(0, position)
    return (position * 60 + rate_per_minute - 1) // rate_per_minute


def poll_after_seconds(position: int, rate_per_minute: int, *, claim_seconds: int = 0) -> int:
    """When a visitor `position` places from the front should poll again; in capacity mode
    (`claim_seconds` > 0) at least POLLS_PER_CLAIM times per claim window."""
    if rate_per_minute <= 0:
        return POLL_AFTER_WITHOUT_RATE_SECONDS
    earliest = max(0, position - 1) * 60 // rate_per_minute
    most = POLL_AFTER_MAX_SECONDS
    if claim_seconds > 0:
        most = max(POLL_AFTER_MIN_SECONDS, min(most, claim_seconds // POLLS_PER_CLAIM))
    return min(most, max(POLL_AFTER_MIN_SECONDS, earliest // 2))


def unknown_margin(rate_per_minute: int) -> int:
    """How many admissions may pass a token's place before a token with no admission item is
    unknown: UNKNOWN_AFTER_MINUTES of the rate, at least UNKNOWN_MIN_MARGIN. The margin covers
    a standard queue's loose order and redeliveries."""
    return max(rate_per_minute * UNKNOWN_AFTER_MINUTES, UNKNOWN_MIN_MARGIN)


def is_unknown(ordinal: int, admitted_total: int, rate_per_minute: int) -> bool:
    """A token the room does not know: no admission item, and the line passed its place long
    ago (forged, issued by an earlier deployment, or its item was removed by TTL). /polling
    answers "unknown" by this rule (held equal by tests/unit/test_vtl_templates.py) and the
    marketing link gives such a visitor a new place (room/returning.py)."""
    return admitted_total - ordinal > unknown_margin(rate_per_minute)


def is_before_reset(ordinal: int, reset_ordinal: int) -> bool:
    """A token of an event before the room's last `beekeeper reset`: the reset took its place
    (every ordinal it had given is at most `reset_ordinal`, and the line goes on above it).
    /polling answers "reset" by this rule and the marketing link gives such a visitor a new
    place (room/returning.py)."""
    return 0 < ordinal <= reset_ordinal
