"""The governor function's handler: every minute, sample the shop and adjust the rate
(room/governor.py), when the room has dynamic rate throttling."""

from __future__ import annotations

from typing import Any

from beekeeper.lambdas import runtime


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    if not runtime.settings().dynamic_rate_throttling:
        return {"decision": "disabled"}
    decision = runtime.room().run_governor(metrics=runtime.metrics())
    runtime.metrics().flush()
    # What the room's metrics take from a check.
    return {
        "decision": decision.decision,
        "median_ms": decision.median_ms,
        "p90_ms": decision.p90_ms,
        "errors": decision.errors,
        "rate": decision.rate_after,
    }
