"""A double of the room's publisher (room/push.py `Publisher`): it keeps what was published,
or refuses as a channel that can not be reached would."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from beekeeper.room.push import PublishError


@dataclass
class RecordingPublisher:
    # While set, every publish is refused with this sentence.
    refuse: str = ""
    # The first this many publishes are refused (a channel that throttled for a moment).
    refuse_first: int = 0
    published: list[tuple[str, list[str]]] = field(default_factory=list)
    refused: int = 0

    def publish(self, channel: str, events: Sequence[str]) -> None:
        if self.refuse or self.refused < self.refuse_first:
            self.refused += 1
            raise PublishError(self.refuse or "throttled")
        self.published.append((channel, list(events)))

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every published event, parsed (one event per publish, as the room publishes)."""
        return [json.loads(event) for _, events in self.published for event in events]

    @property
    def reasons(self) -> list[str]:
        return [message["reason"] for message in self.messages]
