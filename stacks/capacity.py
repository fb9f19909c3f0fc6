"""Capacity figures the stack derives from a room's settings: plain arithmetic, no CDK.

Every number here is documented in docs/stack.md with its reasoning; the tests pin the
formulas, so a change is a deliberate one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from beekeeper.core.polling_load import origin_requests_per_second
from beekeeper.core.presence import Presence
from beekeeper.core.settings import Mode, RoomSettings

# One arrival counter item takes about 1,000 writes/s (DynamoDB's per-partition write limit);
# the producer spreads new visitors over `arrival_shards` of them (docs/data-model.md).
ARRIVALS_PER_SHARD_PER_SECOND = 1_000
# An admitted visitor's pages at the shop each may call /client once.
CLIENT_CHECKS_PER_ADMITTED_VISITOR = 10
# API Gateway's default per-region account quota: a stage limit above it changes nothing
# until the account's quota is raised (Service Quotas), so the burst never asks for more.
ACCOUNT_DEFAULT_BURST = 5_000

# Consumers of one minute may still be finishing when the next minute's start: a consumer's
# timeout is a minute plus margin, so two minutes' consumers overlap at most.
OVERLAPPING_MINUTES = 2
# One trigger run per minute; a duplicate delivery waits for the running one (and then finds
# the minute already claimed). One governor run at a time: it owns the governor item.
TRIGGER_RESERVED_CONCURRENCY = 1
GOVERNOR_RESERVED_CONCURRENCY = 1


@dataclass(frozen=True)
class StageThrottle:
    """API Gateway throttling for the stage and for the marketing link alone."""

    rate_limit: int  # requests per second, whole stage
    burst_limit: int
    arrivals_rate_limit: int  # GET /beekeeper: what the arrival counters absorb


def consumers_per_minute(settings: RoomSettings) -> int:
    """How many consumers the trigger plans each minute at the room's deployed rate."""
    return math.ceil(settings.rate / settings.consumer_capacity)


def consumer_reserved_concurrency(settings: RoomSettings) -> int:
    """Concurrency kept for consumers: one minute's consumers, two minutes overlapping."""
    return OVERLAPPING_MINUTES * consumers_per_minute(settings)


def reserved_concurrency(settings: RoomSettings) -> dict[str, int]:
    """Every function's reserved concurrency, by role; the producer reserves none."""
    return {
        "trigger": TRIGGER_RESERVED_CONCURRENCY,
        "consumer": consumer_reserved_concurrency(settings),
        "governor": GOVERNOR_RESERVED_CONCURRENCY,
    }


def arrivals_per_second(settings: RoomSettings) -> int:
    return settings.arrival_shards * ARRIVALS_PER_SHARD_PER_SECOND


def polls_per_second(settings: RoomSettings) -> int:
    """The pages' own /polling at the room's rate and the edge's misses (the shared state,
    the page), by the model (core/polling_load.py): whatever the length of the line, as the
    edge answers everything else."""
    return math.ceil(origin_requests_per_second(joins_per_second=0, rate_per_minute=settings.rate))


def client_checks_per_second(settings: RoomSettings) -> int:
    return math.ceil(settings.rate * CLIENT_CHECKS_PER_ADMITTED_VISITOR / 60)


def heartbeats_per_second(settings: RoomSettings) -> int:
    """Capacity mode: every place held by a page with the presence script beats once every
    beat_seconds (core/presence.py; a room without presence too, a third of a session apart)."""
    if settings.mode is not Mode.CAPACITY:
        return 0
    beat = Presence.of(settings).beat_seconds(settings.session_seconds)
    return math.ceil(settings.max_inside / beat)


def stage_throttle(settings: RoomSettings) -> StageThrottle:
    """Stage limit = arrivals + own polls and the edge's misses + /client checks +
    heartbeats; the marketing link alone = arrivals."""
    arrivals = arrivals_per_second(settings)
    total = (
        arrivals
        + polls_per_second(settings)
        + client_checks_per_second(settings)
        + heartbeats_per_second(settings)
    )
    return StageThrottle(
        rate_limit=total,
        burst_limit=min(total, ACCOUNT_DEFAULT_BURST),
        arrivals_rate_limit=arrivals,
    )
