"""The room, assembled once: the producer with its join gate, the ticket issuer, the leave, and
the trigger's, the consumers' and the governor's runs, from the side effects passed in.

Three places run the room: the Lambda handlers (lambdas/, bound to their container), local mode
(local/room_code.py, bound to the emulator) and the simulator (simulator/run.py, bound to its
fakes and its clock). Each builds its `Effects` and calls `assemble`; what differs between them
is only what they pass (clients, clock, sleep, how a consumer is started, the metrics, the
secrets), never how the room's parts are put together.

`wiring` is what each part runs against (room/wiring.py). It may differ by part: the simulator
counts each part's AWS calls apart, so it passes a function of the part's name (`Part`).
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from beekeeper.core.retry import Pauses
from beekeeper.room.consumer import ConsumerReport, run_consumer
from beekeeper.room.emf import DISCARD, MetricSink
from beekeeper.room.join_gate import JoinGate
from beekeeper.room.leaving import Leaving
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.producer import Producer
from beekeeper.room.push import NO_PUBLISHER, Publisher, StatePush, state_push
from beekeeper.room.tickets import NO_TICKETS, TicketHook, TicketIssuer
from beekeeper.room.wiring import RoomWiring

if TYPE_CHECKING:  # imported where they run: the producer's cold start loads neither
    from beekeeper.room.governor import Decision
    from beekeeper.room.governor_sampling import Fetcher
    from beekeeper.room.trigger import TriggerOutcome

# The room's parts, by what they do with the table and the queue.
Part = Literal["producer", "admission", "leave", "governor"]
InvokeConsumer = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Effects:
    """Everything the room takes from where it runs."""

    clock: Callable[[], float]
    sleep: Callable[[float], None]
    # How the producer and the trigger start a consumer (Lambda's asynchronous invoke in AWS).
    invoke_consumer: InvokeConsumer
    # The room's join secret (GetSecretValue in AWS), read once per container.
    read_join_secret: Callable[[], str]
    # The ticket keys' secret's text; None: admissions carry no ticket (the simulator's faults).
    read_ticket_keys: Callable[[], str] | None = None
    # The producer's metrics (one sink per container); the runs take theirs per run.
    producer_metrics: MetricSink = DISCARD
    # The governor's one request to the shop (None: a real HTTP request, governor_sampling.py).
    fetch: Fetcher | None = None
    # Visitors' token ids; the join gate's challenge nonces (the same source unless given).
    token_bytes: Callable[[int], bytes] = secrets.token_bytes
    challenge_bytes: Callable[[int], bytes] | None = None
    # The producer's shard choice (no secret); the trigger's draw secret (a secret).
    shard_rng: random.Random = field(default_factory=random.Random)
    secret_bytes: Callable[[int], bytes] | None = None
    # The jitter of every retry's pause (no secret; core/retry.py).
    jitter_rng: random.Random = field(default_factory=random.Random)
    # The room's own public origin, from which /leave takes a cookie's leave.
    room_origin: str = ""
    # The scheduler's minute: 60 s in AWS, shorter in a local rehearsal.
    minute_seconds: float = MINUTE_SECONDS
    # The room's push channel (room/push.py): AppSync Events in AWS, the local channel in
    # `beekeeper local`; none by default (the status copies then carry no publish).
    publisher: Publisher = NO_PUBLISHER

    @property
    def pauses(self) -> Pauses:
        """What the room's retries wait with (core/retry.py)."""
        return Pauses(sleep=self.sleep, random=self.jitter_rng.random)


@dataclass(frozen=True)
class Room:
    """The assembled room. The runs take the metrics sink of the run (one per invocation, as
    Lambda gives a container one per run)."""

    producer: Producer
    gate: JoinGate
    tickets: TicketHook
    leaving: Leaving
    _wiring: Callable[[Part], RoomWiring]
    _effects: Effects
    # What the trigger plans with: the room's settings, or a shortened minute's view of them.
    _planning: Callable[[RoomWiring], RoomWiring]

    @property
    def pauses(self) -> Pauses:
        """What the room's retries wait with, for a caller of its functions (core/retry.py)."""
        return self._effects.pauses

    def run_trigger(
        self, *, metrics: MetricSink = DISCARD, invoke_consumer: InvokeConsumer | None = None
    ) -> TriggerOutcome:
        from beekeeper.room.trigger import run_trigger

        effects = self._effects
        return run_trigger(
            **self._planning(self._wiring("admission")),
            invoke_consumer=invoke_consumer or effects.invoke_consumer,
            clock=effects.clock,
            pauses=effects.pauses,
            minute_seconds=effects.minute_seconds,
            metrics=metrics,
            secret_bytes=effects.secret_bytes,
            push=self._push(metrics),
        )

    def run_consumer(self, payload: object, *, metrics: MetricSink = DISCARD) -> ConsumerReport:
        return run_consumer(
            payload,
            **self._wiring("admission"),
            clock=self._effects.clock,
            sleep=self._effects.sleep,
            pauses=self._effects.pauses,
            metrics=metrics,
            tickets=self.tickets,
            push=self._push(metrics),
        )

    def run_governor(self, *, metrics: MetricSink = DISCARD) -> Decision:
        from beekeeper.room.governor import run_governor
        from beekeeper.room.governor_sampling import fetch_once

        wiring = self._wiring("governor")
        effects = self._effects
        return run_governor(
            settings=wiring["settings"],
            table=wiring["table"],
            dynamodb=wiring["dynamodb"],
            fetch=effects.fetch or fetch_once,
            clock=effects.clock,
            sleep=effects.sleep,
            pauses=effects.pauses,
            minute_seconds=effects.minute_seconds,
            metrics=metrics,
            # The governor may wait out the second since the room's last publish.
            push=self._push(metrics, sleep=effects.sleep),
        )

    def _push(
        self, metrics: MetricSink, *, sleep: Callable[[float], None] | None = None
    ) -> StatePush | None:
        """A run's publishing, counted in the run's metrics (None: the room has no channel)."""
        settings = self._wiring("admission")["settings"]
        return state_push(settings, self._effects.publisher, metrics=metrics, sleep=sleep)


def assemble(
    wiring: RoomWiring | Callable[[Part], RoomWiring],
    effects: Effects,
    *,
    planning: Callable[[RoomWiring], RoomWiring] = lambda wiring: wiring,
) -> Room:
    """The room's parts, bound to `wiring` (one for every part, or one per part) and `effects`.
    `planning` adjusts what the trigger plans with (local mode's shortened minute)."""
    wired = wiring if callable(wiring) else _same(wiring)
    producing = wired("producer")
    settings = producing["settings"]
    gate = JoinGate(
        room=settings.name,
        read_secret=effects.read_join_secret,
        dynamodb=producing["dynamodb"],
        table=producing["table"],
        token_bytes=effects.challenge_bytes or effects.token_bytes,
    )
    tickets: TicketHook = NO_TICKETS
    if effects.read_ticket_keys is not None:
        # One issuer per container: the key ring is read once a minute, not once per run.
        tickets = TicketIssuer(
            read_ring=effects.read_ticket_keys, settings=settings, clock=effects.clock
        )
    producer = Producer(
        **producing,
        clock=effects.clock,
        token_bytes=effects.token_bytes,
        rng=effects.shard_rng,
        invoke_consumer=effects.invoke_consumer,
        minute_seconds=effects.minute_seconds,
        metrics=effects.producer_metrics,
        gate=gate,
        room_origin=effects.room_origin,
        leave_dynamodb=wired("leave")["dynamodb"],
        pauses=effects.pauses,
    )
    return Room(
        producer=producer,
        gate=gate,
        tickets=tickets,
        leaving=producer.leaving(),
        _wiring=wired,
        _effects=effects,
        _planning=planning,
    )


def _same(wiring: RoomWiring) -> Callable[[Part], RoomWiring]:
    def every_part(_part: Part) -> RoomWiring:
        return wiring

    return every_part
