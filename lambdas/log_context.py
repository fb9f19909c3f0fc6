"""Every log record of the room's own code names the room.

With the functions' JSON log format (stacks/functions.py), Lambda's Python runtime writes each
record as one JSON object and adds the record's extra attributes as fields, so a record that
carries `room` becomes `{"level": "INFO", "message": "...", "room": "spring-sale", ...}` in
CloudWatch Logs: one room's story can be filtered out of a shared account's logs. The minute,
where a line has one, is in its message ("minute 29000001: ...").

A record factory rather than a filter: a logger's filter does not see records of its child
loggers, and the handler that writes the records belongs to the runtime, not to us.
"""

from __future__ import annotations

import logging
from typing import Any

ROOM_ATTRIBUTE = "room"
# The loggers of our own modules ("beekeeper.producer", "beekeeper.trigger", ...).
LOGGER_PREFIX = "beekeeper"


def install(room: str) -> None:
    """From now on, records of the `beekeeper` loggers carry `room` (idempotent)."""
    current = logging.getLogRecordFactory()
    base = getattr(current, "beekeeper_base", current)

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        if record.name == LOGGER_PREFIX or record.name.startswith(LOGGER_PREFIX + "."):
            setattr(record, ROOM_ATTRIBUTE, room)
        return record

    factory.beekeeper_base = base  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def uninstall() -> None:
    """Back to the record factory there was before `install` (tests)."""
    current = logging.getLogRecordFactory()
    logging.setLogRecordFactory(getattr(current, "beekeeper_base", current))
