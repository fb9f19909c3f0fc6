"""What the poll rule (core/polling.py) costs: the /polling requests per second of a line.

The stack sizes its throttle with it (stacks/capacity.py) and bench/polling_capacity.py
tabulates it, so both use the rule the template answers with, not a guess at an interval.

With `line_length` visitors waiting and the room admitting `rate_per_minute`, the visitor at
position p polls every poll_after(p) seconds; the page
never polls sooner than asked (it only adds jitter, `interval_factor` >= 1 on average). The
load is the sum over the positions of 1 / (interval_factor x poll_after): exact for a line
that does not move faster than its polls, and an upper bound with interval_factor 1.
"""

from __future__ import annotations

from beekeeper.core.polling import POLL_AFTER_MAX_SECONDS, poll_after_seconds


def standing_polls_per_second(
    line_length: int, rate_per_minute: int, *, interval_factor: float = 1.0
) -> float:
    """Sum over positions 1..line_length of 1 / (interval_factor x poll_after), in groups of
    positions with the same poll interval (it only grows towards the back)."""
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
