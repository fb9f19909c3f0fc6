"""An in-memory DynamoDB table: only the calls and expressions the trigger and consumers use.

Items are kept in the low-level attribute-value format boto3's client speaks. With the throttle
fault BatchWriteItem leaves some items unprocessed and sometimes refuses a whole call with a
throughput error, as DynamoDB does under load. Every successful write of a `v#` item is logged
with the simulated time: that log, not the counters, is the truth the simulation reports.
"""

from __future__ import annotations

import copy
import functools
import random
import re
from collections import Counter
from typing import Any

from beekeeper.simulator.clock import Scheduler
from beekeeper.simulator.faults import Faults, client_error

_ADD = re.compile(r"^ADD\s+(.+)$")


@functools.cache
def _add_clauses(expression: str) -> tuple[tuple[str, str], ...]:
    match = _ADD.match(expression.strip())
    if not match:
        raise NotImplementedError(expression)
    return tuple(tuple(clause.split()) for clause in match.group(1).split(","))


class FakeTable:
    def __init__(self, scheduler: Scheduler, rng: random.Random, faults: Faults) -> None:
        self._scheduler = scheduler
        self._rng = rng
        self._faults = faults
        self.items: dict[str, dict[str, Any]] = {}
        self.calls = 0
        self.injected: Counter[str] = Counter()  # faults that actually happened, by kind
        self.admissions: list[tuple[float, str]] = []  # (time, token id) per successful write
        self.writes_per_id: Counter[str] = Counter()

    def get_item(self, *, TableName: str, Key: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls += 1
        item = self.items.get(Key["pk"]["S"])
        return {"Item": copy.deepcopy(item)} if item else {}

    def batch_get_item(self, *, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        ((table, request),) = RequestItems.items()
        found = [self.items[k["pk"]["S"]] for k in request["Keys"] if k["pk"]["S"] in self.items]
        return {"Responses": {table: found}, "UnprocessedKeys": {}}

    def batch_write_item(self, *, RequestItems: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self._scheduler.in_process():
            self._faults.maybe_crash(self._rng, self.injected)
        ((table, requests),) = RequestItems.items()
        is_admission = any(r["PutRequest"]["Item"]["pk"]["S"].startswith("v#") for r in requests)
        throttled = self._faults.throttle and is_admission
        if throttled and self._rng.random() < self._faults.throttled_per_call:
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
                self.injected["throttle"] += 1
                unprocessed.append(request)
                continue
            pk = item["pk"]["S"]
            self.items[pk] = item
            if pk.startswith("v#"):
                token_id = pk[2:]
                self.admissions.append((self._scheduler.now, token_id))
                self.writes_per_id[token_id] += 1
        return {"UnprocessedItems": {table: unprocessed} if unprocessed else {}}

    def put_item(
        self, *, TableName: str, Item: dict[str, Any], ConditionExpression: str = "", **_: Any
    ) -> dict[str, Any]:
        self.calls += 1
        pk = Item["pk"]["S"]
        if ConditionExpression:
            if ConditionExpression != "attribute_not_exists(pk)":
                raise NotImplementedError(ConditionExpression)
            if pk in self.items:
                raise client_error("ConditionalCheckFailedException", "PutItem")
        self.items[pk] = copy.deepcopy(Item)
        return {}

    def update_item(
        self,
        *,
        TableName: str,
        Key: dict[str, Any],
        UpdateExpression: str,
        ExpressionAttributeValues: dict[str, Any],
        ExpressionAttributeNames: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Only `ADD name :value[, ...]`: what the consumers' counters use."""
        self.calls += 1
        names = ExpressionAttributeNames or {}
        item = self.items.setdefault(Key["pk"]["S"], {"pk": dict(Key["pk"])})
        for name, value in _add_clauses(UpdateExpression):
            name = names.get(name, name)
            current = int(item.get(name, {"N": "0"})["N"])
            item[name] = {"N": str(current + int(ExpressionAttributeValues[value]["N"]))}
        if kwargs.get("ReturnValues", "NONE") == "NONE":
            return {}
        return {"Attributes": copy.deepcopy(item)}
