"""What the room's code runs against: its settings, its table and queue, and their clients.

The producer, the trigger and the consumer take these five by name. Each place that runs them
binds them once: a Lambda handler from its container (`runtime.wiring()`), local mode from its
emulator (local/room_code.py), the simulator from its fakes (simulator/run.py); the call then
adds what differs there (the clock, the sleep, how a consumer is started, the metrics).
Standard library only: shipped in the Lambda asset.
"""

from __future__ import annotations

from typing import Any, TypedDict

from beekeeper.core.settings import RoomSettings


class RoomWiring(TypedDict):
    settings: RoomSettings
    table: str
    queue_url: str
    dynamodb: Any  # a DynamoDB client: boto3's, or one answered by the store
    sqs: Any  # an SQS client, likewise
