"""The simulation's table: the store's DynamoDB (store/dynamodb.py) on the simulated clock.

Called as a boto3 client is, with the simulation's faults injected: with the throttle fault
BatchWriteItem leaves some items unprocessed and sometimes refuses a whole call with a
throughput error, and a transaction is cancelled as throttled, as DynamoDB does under load.
Every successful write of a `v#` item is logged with the simulated time: that log, not the
counters, is the truth the simulation reports; an admission put refused because the visitor
had an item already is counted too (`admissions_refused`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import table_definition
from beekeeper.simulator.clock import Scheduler, SimulatedTiming
from beekeeper.simulator.faults import Faults, Interleavings, SimulatedFaults
from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.expressions import Item

# The calls a simulated crash may strike, as a lost connection would.
_CRASHING_CALLS = frozenset({"BatchGetItem", "BatchWriteItem", "TransactWriteItems"})


class FakeTable(StoreClient):
    def __init__(
        self,
        scheduler: Scheduler,
        rng: random.Random,
        faults: Faults,
        table_name: str,
        interleavings: Interleavings | None = None,
    ) -> None:
        self._scheduler = scheduler
        disturbance = SimulatedFaults.on(scheduler, faults, rng, _CRASHING_CALLS, interleavings)
        self.injected = disturbance.injected  # faults that actually happened, and when
        self.database = DynamoDb(SimulatedTiming(scheduler), disturbance)
        self.items = self.database.create_table_as_defined(table_definition(table_name)).items
        self.database.observers.append(self._written)
        self.admissions: list[tuple[float, str]] = []  # (time, token id) per successful write
        self.writes_per_id: Counter[str] = Counter()
        # Called with (time, token id) on each first admission write (the simulation's probe).
        self.on_admission: Callable[[float, str], None] | None = None
        # Admission puts the table refused because the visitor had an item already: each one
        # a second delivery that passed the duplicate check and was stopped by the condition.
        self.admissions_refused = 0
        super().__init__(self.database)
        transact = self._methods["transact_write_items"]
        self._methods["transact_write_items"] = self._counting(transact)

    def _counting(self, call: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        def transact_write_items(**request: Any) -> dict[str, Any]:
            try:
                return call(**request)
            except ClientError as error:
                reasons = error.response.get("CancellationReasons", [])
                actions = request.get("TransactItems", [])
                self.admissions_refused += sum(
                    1
                    for action, reason in zip(actions, reasons, strict=False)
                    if reason.get("Code") == "ConditionalCheckFailed"
                    and action.get("Put", {}).get("Item", {}).get("pk", {}).get("S", "")[:2] == "v#"
                )
                raise

        return transact_write_items

    @property
    def calls(self) -> int:
        return self.database.calls

    def _written(self, _table: str, pk: str, item: Item | None, whole: bool) -> None:
        """Log an admission: every put of an admitted visitor's item (two puts of one visitor
        are an admission twice), and an update only when it makes a visitor admitted (a
        session's renewal or a leave is no admission)."""
        if item is None or not pk.startswith("v#") or "admitted_at" not in item:
            return
        token_id = pk[2:]
        before = self.writes_per_id.get(token_id, 0)
        if not whole and before > 0:
            return
        self.admissions.append((self._scheduler.now, token_id))
        self.writes_per_id[token_id] = before + 1
        if before == 0 and self.on_admission is not None:
            self.on_admission(self._scheduler.now, token_id)
