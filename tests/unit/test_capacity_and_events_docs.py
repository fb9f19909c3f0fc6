"""The numbers docs/capacity.md and docs/events.md state are the code's: the claim window's
default, the heartbeat's rhythm at the recommended grace and what it costs, and how far ahead a
start may be."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from beekeeper.core.presence import RECOMMENDED_GRACE_SECONDS, Presence
from beekeeper.core.schedule import MAX_DAYS_AHEAD
from beekeeper.core.settings import DEFAULT_CLAIM_MINUTES
from tests.support.doc_numbers import list_prices, stated_number

MILLION = 1_000_000


def number(document: str, pattern: str) -> float:
    return stated_number(f"docs/{document}", pattern)


def cents(dollars: float) -> float:
    """Dollars to the cent, a half cent up, as prices are written."""
    return float(Decimal(str(dollars)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def test_capacity_modes_numbers() -> None:
    assert number("capacity.md", r"within `claim_minutes` \(default (\d+)\)") == (
        DEFAULT_CLAIM_MINUTES
    )
    grace = number("capacity.md", r"--presence-grace-seconds (\d+)`\) and put")
    assert grace == RECOMMENDED_GRACE_SECONDS
    beat = Presence(grace_seconds=int(grace)).beat_seconds(session_seconds=300)
    assert number("capacity.md", r"every (\d+) s at a grace of 10 s") == beat
    listed = list_prices()
    write = round(listed.DYNAMODB_WRITE_UNIT * MILLION, 3)
    assert number("capacity.md", r"\(\$([\d.]+) per million write request units") == write
    assert number("capacity.md", r"\$([\d.]+) per million read request units") == (
        round(listed.DYNAMODB_READ_UNIT * MILLION, 3)
    )
    # One write unit a request; a holder's /leave at most 1 + 2 + 4 units.
    assert number("capacity.md", r"\| 1 write \| \$([\d.]+) \|") == cents(write)
    assert number("capacity.md", r"\$[\d.]+ \(up to \$([\d.]+)\)") == cents(7 * write)


def test_a_starts_limits() -> None:
    assert number("events.md", r"at most (\d+) days ahead") == MAX_DAYS_AHEAD
