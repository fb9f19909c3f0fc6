"""The simulation's queue: the store's SQS queue (store/sqs.py) on the simulated clock.

Called as a boto3 client is. A long poll waits in simulated time until something is sent or
comes back; a receive may return fewer messages than are visible (short receives); with the
duplicates fault a delivered message is delivered again later, even after it was deleted
(at-least-once delivery), and now and then handed to the next receive at once while the
consumer that received it is held before its write (simulator/faults.py, `Interleavings`);
after QUEUE_MAX_RECEIVE_COUNT receives a message is dead-lettered.
"""

from __future__ import annotations

import random

from beekeeper.core.datamodel import QUEUE_MAX_RECEIVE_COUNT, QUEUE_VISIBILITY_TIMEOUT_SECONDS
from beekeeper.simulator.clock import Scheduler, SimulatedTiming
from beekeeper.simulator.faults import Faults, Interleavings, SimulatedFaults
from beekeeper.store.client import StoreClient
from beekeeper.store.sqs import Message, Sqs

# The calls a simulated crash may strike, as a lost connection would.
_CRASHING_CALLS = frozenset({"ReceiveMessage", "DeleteMessageBatch"})


class FakeQueue(StoreClient):
    def __init__(
        self,
        scheduler: Scheduler,
        rng: random.Random,
        faults: Faults,
        queue_url: str,
        interleavings: Interleavings | None = None,
    ) -> None:
        disturbance = SimulatedFaults.on(scheduler, faults, rng, _CRASHING_CALLS, interleavings)
        self.injected = disturbance.injected  # faults that actually happened, and when
        self.queues = Sqs(SimulatedTiming(scheduler), disturbance)
        self.queue = self.queues.create_queue(
            "simulated",
            queue_url,
            visibility_timeout=QUEUE_VISIBILITY_TIMEOUT_SECONDS,
            max_receives=QUEUE_MAX_RECEIVE_COUNT,
        )
        super().__init__(self.queues)

    @property
    def calls(self) -> int:
        return self.queues.calls

    @property
    def messages(self) -> list[Message]:
        return self.queue.messages

    @property
    def deliveries(self) -> int:
        return self.queue.deliveries

    def visible_now(self) -> int:
        return self.queue.visible_now()

    def states(self) -> list[str]:
        return self.queue.states()
