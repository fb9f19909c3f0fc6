"""An in-memory DynamoDB table: the calls the room's Lambdas make, with their expressions.

Items are kept in the low-level attribute-value format boto3's client speaks, and update and
condition expressions are evaluated as DynamoDB evaluates them (simulator/expressions.py). With
the throttle fault BatchWriteItem leaves some items unprocessed and sometimes refuses a whole
call with a throughput error, as DynamoDB does under load. Every successful write of a `v#`
item is logged with the simulated time: that log, not the counters, is the truth the
simulation reports.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.expressions import ConditionFailed, apply_update, check_condition
from beekeeper.simulator.faults import FaultLog, Faults, client_error, transaction_cancelled


class FakeTable:
    def __init__(self, scheduler: Scheduler, rng: random.Random, faults: Faults) -> None:
        self._scheduler = scheduler
        self._rng = rng
        self._faults = faults
        self.items: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.injected = FaultLog(scheduler.clock)  # faults that actually happened, and when
        self.admissions: list[tuple[float, str]] = []  # (time, token id) per successful write
        self.writes_per_id: Counter[str] = Counter()
        # Called with (time, token id) on each first admission write (the simulation's probe).
        self.on_admission: Callable[[float, str], None] | None = None

    def _stored(self, pk: str, item: dict[str, Any], *, put: bool = True) -> None:
        """Store an item; log it as an admission when it is one: every put of an admitted
        visitor's item (two puts of one visitor are an admission twice), and an update only
        when it makes a visitor admitted (a renewal or a leave is no admission)."""
        before = self.items.get(pk)
        self.items[pk] = item
        admits = "admitted_at" in item and (put or before is None or "admitted_at" not in before)
        if pk.startswith("v#") and admits:
            token_id = pk[2:]
            self.admissions.append((self._scheduler.now, token_id))
            self.writes_per_id[token_id] += 1
            if self.writes_per_id[token_id] == 1 and self.on_admission is not None:
                self.on_admission(self._scheduler.now, token_id)

    def get_item(self, *, TableName: str, Key: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls += 1
        item = self.items.get(Key["pk"]["S"])
        return {"Item": copy.deepcopy(item)} if item else {}

    def batch_get_item(self, *, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        ((table, request),) = RequestItems.items()
        found = [
            copy.deepcopy(self.items[k["pk"]["S"]])
            for k in request["Keys"]
            if k["pk"]["S"] in self.items
        ]
        return {"Responses": {table: found}, "UnprocessedKeys": {}}

    def batch_write_item(self, *, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        ((table, requests),) = RequestItems.items()
        is_admission = any(r["PutRequest"]["Item"]["pk"]["S"].startswith("v#") for r in requests)
        throttled = self._faults.throttle and is_admission
        if throttled and self._rng.random() < self._faults.throttled_per_call:
            self.injected.add("throttle")
            raise client_error("ProvisionedThroughputExceededException", "BatchWriteItem")
        unprocessed = []
        partly = (
            self._faults.throttle
            and is_admission
            and self._rng.random() < self._faults.partly_unprocessed_per_call
        )
        for request in requests:
            item = request["PutRequest"]["Item"]
            if partly and self._rng.random() < self._faults.unprocessed_per_item:
                self.injected.add("throttle")
                unprocessed.append(request)
                continue
            self._stored(item["pk"]["S"], item)
        return {"UnprocessedItems": {table: unprocessed} if unprocessed else {}}

    def put_item(
        self,
        *,
        TableName: str,
        Item: dict[str, Any],
        ConditionExpression: str = "",
        ExpressionAttributeNames: dict[str, str] | None = None,
        ExpressionAttributeValues: dict[str, Any] | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        self.calls += 1
        pk = Item["pk"]["S"]
        if ConditionExpression:
            try:
                check_condition(
                    ConditionExpression,
                    self.items.get(pk),
                    ExpressionAttributeNames,
                    ExpressionAttributeValues,
                )
            except ConditionFailed:
                raise client_error("ConditionalCheckFailedException", "PutItem") from None
        self._stored(pk, copy.deepcopy(Item))
        return {}

    def update_item(
        self,
        *,
        TableName: str,
        Key: dict[str, Any],
        UpdateExpression: str,
        ExpressionAttributeValues: dict[str, Any] | None = None,
        ExpressionAttributeNames: dict[str, str] | None = None,
        ConditionExpression: str = "",
        ReturnValues: str = "NONE",
        **_: Any,
    ) -> dict[str, Any]:
        self.calls += 1
        pk = Key["pk"]["S"]
        old = self.items.get(pk)
        try:
            if ConditionExpression:
                check_condition(
                    ConditionExpression, old, ExpressionAttributeNames, ExpressionAttributeValues
                )
            new = apply_update(
                UpdateExpression,
                old or {"pk": dict(Key["pk"])},
                ExpressionAttributeNames,
                ExpressionAttributeValues,
            )
        except ConditionFailed:
            raise client_error("ConditionalCheckFailedException", "UpdateItem") from None
        self.items[pk] = new
        if ReturnValues == "NONE":
            return {}
        # Attribute values are one-key dicts of strings: a shallow copy of each is a deep copy.
        if ReturnValues == "ALL_NEW":
            return {"Attributes": {k: dict(v) for k, v in new.items()}}
        if ReturnValues == "UPDATED_NEW":
            changed = {k: dict(v) for k, v in new.items() if old is None or old.get(k) != v}
            return {"Attributes": changed}
        raise NotImplementedError(f"ReturnValues={ReturnValues}")

    def transact_write_items(self, *, TransactItems: list[dict[str, Any]]) -> dict[str, Any]:
        """All or nothing: every condition is checked first, then every write applied."""
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        admits = any(
            "Put" in action and action["Put"]["Item"]["pk"]["S"].startswith("v#")
            for action in TransactItems
        )
        reasons: list[dict[str, str]] = []
        # (pk, new item or None to delete, whether it is a put)
        writes: list[tuple[str, dict[str, Any] | None, bool]] = []
        for action in TransactItems:
            ((kind, request),) = action.items()
            pk = (request.get("Key") or request.get("Item"))["pk"]["S"]
            old = self.items.get(pk)
            try:
                if request.get("ConditionExpression"):
                    check_condition(
                        request["ConditionExpression"],
                        old,
                        request.get("ExpressionAttributeNames"),
                        request.get("ExpressionAttributeValues"),
                    )
                if kind == "Put":
                    writes.append((pk, copy.deepcopy(request["Item"]), True))
                elif kind == "Update":
                    new = apply_update(
                        request["UpdateExpression"],
                        old or {"pk": dict(request["Key"]["pk"])},
                        request.get("ExpressionAttributeNames"),
                        request.get("ExpressionAttributeValues"),
                    )
                    writes.append((pk, new, False))
                elif kind == "Delete":
                    writes.append((pk, None, False))
                elif kind != "ConditionCheck":
                    raise NotImplementedError(f"transaction action {kind}")
                reasons.append({"Code": "None"})
            except ConditionFailed:
                reasons.append({"Code": "ConditionalCheckFailed"})
        if any(reason["Code"] != "None" for reason in reasons):
            raise transaction_cancelled(reasons)
        refused = self._faults.throttle and self._rng.random() < self._faults.throttled_per_call
        if admits and refused:
            self.injected.add("throttle")
            raise transaction_cancelled([{"Code": "ThrottlingError"} for _ in TransactItems])
        for pk, item, put in writes:
            if item is None:
                self.items.pop(pk, None)
            else:
                self._stored(pk, item, put=put)
        return {}

    def delete_item(self, *, TableName: str, Key: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls += 1
        self.items.pop(Key["pk"]["S"], None)
        return {}
