"""The trigger function's handler: every minute, claim the minute, plan and start its consumers
(room/trigger.py)."""

from __future__ import annotations

from typing import Any

from beekeeper.lambdas import runtime


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    outcome = runtime.room().run_trigger(metrics=runtime.metrics())
    runtime.metrics().flush()
    return {"minute": outcome.minute, "claimed": outcome.claimed, "consumers": outcome.consumers}
