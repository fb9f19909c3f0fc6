"""What the check does with the operator's own credentials: read the room's state, write the
test pass its visitors bring, and remove every item they leave.

The pass is an item only someone who may write the room's table can make (the operator, never
a visitor: docs/data-model.md, "Test visitors"); it lets `visitors` joins within
TEST_PASS_SECONDS. A local room is reached the same way, through its operator endpoint.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from beekeeper.cli.room_status import StatusReport, read_status
from beekeeper.cli.rooms import Deployment
from beekeeper.core import push
from beekeeper.core.datamodel import (
    PARTITION_KEY,
    PLACE_FREED_ATTRIBUTE,
    STATE_KEY,
    TEST_PASS_BYTES,
    TEST_PASS_SECONDS,
    TTL_ATTRIBUTE,
    check_pass_key,
    visitor_key,
    work_key,
)
from beekeeper.core.retry import Pauses
from beekeeper.core.settings import RoomSettings
from beekeeper.core.shared_state import document
from beekeeper.room.push import Publisher
from beekeeper.room.room_state import mark_attributes, read_mark


@dataclass
class OperatorSide:
    """The room's table (and queue, for its state) as the operator's commands reach them."""

    settings: RoomSettings
    deployment: Deployment
    dynamodb: Any
    sqs: Any
    clock: Callable[[], float]
    pauses: Pauses  # between a batch read's retries (core/retry.py)
    token_bytes: Callable[[int], bytes]
    # The room's push channel, as the operator's commands publish to it (cli/channel.py).
    publisher: Publisher

    @property
    def table(self) -> str:
        return self.deployment.table_name

    def state(self) -> StatusReport:
        return read_status(
            settings=self.settings,
            deployment=self.deployment,
            dynamodb=self.dynamodb,
            sqs=self.sqs,
            clock=self.clock,
            pauses=self.pauses,
        )

    def issue_pass(self, visitors: int) -> str:
        """A new pass for `visitors` joins, valid for TEST_PASS_SECONDS."""
        pass_id = base64.urlsafe_b64encode(self.token_bytes(TEST_PASS_BYTES)).rstrip(b"=")
        text = pass_id.decode("ascii")
        until = int(self.clock()) + TEST_PASS_SECONDS
        self.dynamodb.put_item(
            TableName=self.table,
            Item={
                PARTITION_KEY: {"S": check_pass_key(text)},
                "visitors": {"N": str(visitors)},
                "joined": {"N": "0"},
                "expires_at": {"N": str(until)},
                TTL_ATTRIBUTE: {"N": str(until)},
            },
            ConditionExpression=f"attribute_not_exists({PARTITION_KEY})",
        )
        return text

    def visitor(self, token_id: str) -> dict[str, Any] | None:
        return self._item(visitor_key(token_id))

    def place_freed(self, token_id: str) -> bool:
        """Whether a test visitor who left has their place freed (capacity mode: the warden
        frees it; the item must stay until then, or the place would never be freed)."""
        item = self.visitor(token_id)
        return item is None or PLACE_FREED_ATTRIBUTE in item or "admitted_at" not in item

    def remove(self, pass_id: str, token_ids: Iterable[str], spent: Iterable[str]) -> int:
        """Delete the pass, the test visitors' items and their spent work; how many existed."""
        keys = [check_pass_key(pass_id)]
        keys += [visitor_key(token_id) for token_id in token_ids]
        keys += [work_key(text) for text in spent]
        removed = 0
        for pk in keys:
            answer = self.dynamodb.delete_item(
                TableName=self.table, Key={PARTITION_KEY: {"S": pk}}, ReturnValues="ALL_OLD"
            )
            removed += bool(answer.get("Attributes"))
        return removed

    def publish_resync(self) -> int:
        """Publish the room's shared document as it stands, as the room's own full copy every
        few minutes does (pages apply it as a fetched copy: nothing changes for them, and the
        state copy's mark is left as it is); its sequence number. PublishError (room/push.py)
        when the channel refuses it; LookupError when the room has no state copy yet."""
        item = self._item(STATE_KEY)
        if item is None:
            raise LookupError("the room has written no shared state yet")
        now_ms = int(self.clock() * 1000)
        seq = push.next_seq(read_mark(item), now_ms)
        marked = {**item, **mark_attributes(push.Mark(seq))}
        doc = document(marked, now_ms=now_ms, origin=self.settings.origin)
        self.publisher.publish(
            push.channel_of(self.settings.name), [push.message(seq, push.RESYNC, doc)]
        )
        return seq

    def _item(self, pk: str) -> dict[str, Any] | None:
        answer = self.dynamodb.get_item(
            TableName=self.table, Key={PARTITION_KEY: {"S": pk}}, ConsistentRead=True
        )
        item: dict[str, Any] | None = answer.get("Item")
        return item
