"""The producer function's handler: GET /beekeeper (the marketing link) and, in capacity mode,
POST /leave. The work is the room's producer (room/producer.py), assembled once per container."""

from __future__ import annotations

from typing import Any

from beekeeper.lambdas import runtime


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    producer = runtime.room().producer
    response = producer.handle(event)
    producer.metrics.flush_ended()
    return response
