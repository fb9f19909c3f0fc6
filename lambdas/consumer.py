"""The consumer function's handler: one lane of the minute's admissions (room/consumer.py),
started by the trigger or by the producer for a quiet minute's first visitor."""

from __future__ import annotations

import logging
import os
from typing import Any

from beekeeper.core.names import TICKET_KEYS_SECRET_VARIABLE
from beekeeper.lambdas import runtime
from beekeeper.room.consumer import AssignmentError

log = logging.getLogger("beekeeper.consumer")


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    if not os.environ.get(TICKET_KEYS_SECRET_VARIABLE):
        log.warning("%s is not set: admitting without tickets", TICKET_KEYS_SECRET_VARIABLE)
    try:
        report = runtime.room().run_consumer(event, metrics=runtime.metrics())
    except AssignmentError as error:
        log.error("%s", error)  # a retry would fail the same way
        return {"admitted": 0, "error": str(error)}
    finally:
        runtime.metrics().flush()
    return {"admitted": report.admitted, "duplicates": report.duplicates}
