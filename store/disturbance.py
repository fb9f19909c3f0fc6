"""What the store lets a caller disturb: the simulator's faults (simulator/faults.py).

Local mode runs the store calm: no call fails, every receive returns what is there. The
simulator injects crashes between calls, throttled writes, short receives and duplicate
deliveries through this interface, at the same points in every call, so a seed gives the same
simulation whichever store answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class Disturbance(Protocol):
    def before(self, action: str) -> None:
        """Called as a call starts; may raise (a crash between two calls)."""

    def unprocessed(self, requests: Sequence[dict[str, Any]]) -> list[bool]:
        """BatchWriteItem: which requests stay unprocessed; may raise a throttling error."""
        ...

    def transaction_throttled(self, operations: Sequence[dict[str, Any]]) -> bool:
        """TransactWriteItems whose conditions all hold: whether DynamoDB refuses it as
        throttled (every reason ThrottlingError) instead of writing."""
        ...

    def receive_count(self, wanted: int) -> int:
        """ReceiveMessage: how many of the wanted messages this receive returns at most."""
        ...

    def duplicate_after(self) -> float | None:
        """ReceiveMessage, per message delivered: seconds until a duplicate copy, or None."""


class Calm:
    """No faults: what local mode uses."""

    def before(self, action: str) -> None:
        return None

    def unprocessed(self, requests: Sequence[dict[str, Any]]) -> list[bool]:
        return [False] * len(requests)

    def transaction_throttled(self, operations: Sequence[dict[str, Any]]) -> bool:
        return False

    def receive_count(self, wanted: int) -> int:
        return wanted

    def duplicate_after(self) -> float | None:
        return None


CALM = Calm()
