"""What the poll rule (core/polling.py) costs: the /polling requests per second of a line.

The stack sizes its throttle with it (stacks/capacity.py) and bench/polling_capacity.py
tabulates it, so both use the rule the template answers with, not a guess at an interval.

With `line_length` visitors waiting and the room admitting `rate_per_minute`, the visitor at
position p has eta(p) = ceil(60 p / rate) and polls every poll_after(eta) seconds; the page
never polls sooner than asked (it only adds jitter, `interval_factor` >= 1 on average). The
load is the sum over the positions of 1 / (interval_factor x poll_after): exact for a line
that does not move faster than its polls, and an upper bound with interval_factor 1.
"""

from __future__ import annotations

from beekeeper.core.polling import POLL_AFTER_MAX_SECONDS, eta_seconds, poll_after_seconds


def standing_polls_per_second(
    line_length: int, rate_per_minute: int, *, interval_factor: float = 1.0
) -> float:
    """Sum over positions 1..line_length of 1 / (interval_factor x poll_after), in groups of
    positions with the same eta."""
    if line_length <= 0:
        return 0.0
    if rate_per_minute <= 0:
        return line_length / (poll_after_seconds(0, rate_per_minute) * interval_factor)
    total = 0.0
    covered = 0
    eta = eta_seconds(1, rate_per_minute)
    while covered < line_length:
        # Positions whose eta is exactly `eta`: ceil(60 p / rate) == eta.
        last = min(line_length, (eta * rate_per_minute) // 60)
        interval = poll_after_seconds(eta, rate_per_minute) * interval_factor
        if last > covered:
            total += (last - covered) / interval
            covered = last
        if poll_after_seconds(eta, rate_per_minute) == POLL_AFTER_MAX_SECONDS:
            # Everyone further back polls at the cap.
            total += (line_length - covered) / interval
            break
        eta += 1
    return total
