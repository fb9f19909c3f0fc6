"""The simulation's table: the store's DynamoDB (store/dynamodb.py) on the simulated clock.

Called as a boto3 client is, with the simulation's faults injected: with the throttle fault
BatchWriteItem leaves some items unprocessed and sometimes refuses a whole call with a
throughput error, as DynamoDB does under load. Every successful write of a `v#` item is logged
with the simulated time: that log, not the counters, is the truth the simulation reports.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

from beekeeper.core.datamodel import table_definition
from beekeeper.simulator.clock import Scheduler, SimulatedTiming
from beekeeper.simulator.faults import Faults, SimulatedFaults
from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.expressions import Item

# The calls a simulated crash may strike, as a lost connection would.
_CRASHING_CALLS = frozenset({"BatchGetItem", "BatchWriteItem"})


class FakeTable(StoreClient):
    def __init__(
        self, scheduler: Scheduler, rng: random.Random, faults: Faults, table_name: str
    ) -> None:
        self._scheduler = scheduler
        disturbance = SimulatedFaults(
            faults, rng, scheduler.in_process, scheduler.clock, _CRASHING_CALLS
        )
        self.injected = disturbance.injected  # faults that actually happened, and when
        self.database = DynamoDb(SimulatedTiming(scheduler), disturbance)
        self.items = self.database.create_table_as_defined(table_definition(table_name)).items
        self.database.observers.append(self._written)
        self.admissions: list[tuple[float, str]] = []  # (time, token id) per successful write
        self.writes_per_id: Counter[str] = Counter()
        # Called with (time, token id) on each first admission write (the simulation's probe).
        self.on_admission: Callable[[float, str], None] | None = None
        super().__init__(self.database)

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
        if not whole and self.writes_per_id[token_id] > 0:
            return
        self.admissions.append((self._scheduler.now, token_id))
        self.writes_per_id[token_id] += 1
        if self.writes_per_id[token_id] == 1 and self.on_admission is not None:
            self.on_admission(self._scheduler.now, token_id)
