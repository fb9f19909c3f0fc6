"""The room's live configuration, its counters and the status copies /polling reads.

One module owns these items (docs/data-model.md) so the producer, trigger, consumer, governor
and the CLI read and write them the same way. Functions take a low-level DynamoDB client and
the table name; nothing here keeps state.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from botocore.exceptions import ClientError

from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    CONFIG_KEY,
    DRAW_COMMITTED,
    DRAW_DRAWING,
    DRAW_DRAWN,
    DRAW_KEY,
    GOVERNOR_KEY,
    INSIDE_KEY,
    PARTITION_KEY,
    STATE_COPY,
    STATE_KEY,
    STATUS_COPIES,
    arrival_shard_key,
    status_key,
)
from beekeeper.core.push import NEVER, Mark
from beekeeper.core.retry import Backoff, Pauses, retry
from beekeeper.core.schedule import is_message
from beekeeper.core.serving import DISPLAY_DELAY_SECONDS, next_floor
from beekeeper.core.settings import Mode, RoomSettings, capped
from beekeeper.core.shared_state import Point, extend_history, joins_per_minute, parse_history
from beekeeper.room.pacing import MINUTE_SECONDS

if TYPE_CHECKING:
    from beekeeper.room.push import StatePush

Item = Mapping[str, Mapping[str, Any]]
log = logging.getLogger("beekeeper.status")


class Unprocessed(RuntimeError):
    """DynamoDB kept returning part of a batch unprocessed (the table is throttled)."""


def number(value: float | int) -> dict[str, str]:
    return {"N": str(int(value))}


def key(pk: str) -> dict[str, dict[str, str]]:
    return {PARTITION_KEY: {"S": pk}}


def read_number(item: Item | None, name: str, default: int = 0) -> int:
    """An N attribute as an int; a missing or unreadable one gives the default."""
    if not item or name not in item or "N" not in item[name]:
        return default
    try:
        return int(float(item[name]["N"]))
    except (TypeError, ValueError):
        return default


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def read_bool(item: Item | None, name: str, default: bool) -> bool:
    if not item or name not in item or "BOOL" not in item[name]:
        return default
    return bool(item[name]["BOOL"])


def read_text(item: Item | None, name: str) -> str:
    if not item or name not in item or "S" not in item[name]:
        return ""
    return str(item[name]["S"])


@dataclass(frozen=True)
class RoomConfig:
    """The `config` item: what the operator and the governor set, live."""

    enabled: bool
    operator_rate: int
    rate: int  # effective rate: the governor may hold it below operator_rate
    version: int
    updated_at: int
    # Capacity mode: at most this many visitors inside at once (0: no cap), set live.
    max_inside: int = 0
    # A scheduled event (core/schedule.py): its start (epoch s, 0: none), the line held
    # (nobody admitted, places kept), or the event closed (nobody admitted, nobody joins), with
    # the operator's message for the line.
    starts_at: int = 0
    held: bool = False
    # When a hold takes effect (epoch s): `beekeeper hold` announces it a moment ahead, so that
    # every waiting page stops its line at the same place as the consumers (core/serving.py).
    held_from: int = 0
    closed: bool = False
    message: str = ""
    # Every ordinal given before the last `beekeeper reset` is at most this (0: never reset):
    # those places are gone, and the line goes on above it (core.polling.is_before_reset).
    reset_ordinal: int = 0

    @classmethod
    def defaults(cls, settings: RoomSettings) -> RoomConfig:
        """No config item yet: the room is on at the deployed rate and capacity."""
        return cls(
            enabled=True,
            operator_rate=settings.rate,
            rate=settings.rate,
            version=0,
            updated_at=0,
            max_inside=settings.max_inside,
            starts_at=settings.starts_at_epoch,
        )

    @classmethod
    def from_item(cls, item: Item | None, settings: RoomSettings) -> RoomConfig:
        fallback = cls.defaults(settings)
        if not item:
            return fallback
        operator_rate = max(1, read_number(item, "operator_rate", fallback.operator_rate))
        rate = max(1, read_number(item, "rate", operator_rate))
        return cls(
            enabled=read_bool(item, "enabled", True),
            operator_rate=operator_rate,
            rate=rate,
            version=read_number(item, "version"),
            updated_at=read_number(item, "updated_at"),
            max_inside=max(0, read_number(item, "max_inside", fallback.max_inside)),
            starts_at=max(0, read_number(item, "starts_at", fallback.starts_at)),
            held=read_bool(item, "held", False),
            held_from=max(0, read_number(item, "held_from")),
            closed=read_bool(item, "closed", False),
            # Checked again on the way out: a message that could break an answer is none.
            message=message if is_message(message := read_text(item, "message")) else "",
            reset_ordinal=max(0, read_number(item, "reset_ordinal")),
        )

    @property
    def slowed(self) -> bool:
        return self.rate < self.operator_rate

    def holding(self, now: float) -> bool:
        """The line is held at `now`: a hold set, and its moment come."""
        return self.held and now >= self.held_from

    def hold_pending(self, now: float) -> bool:
        """A hold is announced for a moment still ahead (the line moves until then)."""
        return self.held and now < self.held_from

    def admits(self, now: float) -> bool:
        """On, not held and not closed at `now`: the consumers admit (a pending draw aside)."""
        return self.enabled and not self.holding(now) and not self.closed


@dataclass(frozen=True)
class DrawStatus:
    """The `draw` item as the producer, the consumers and the status copies need it."""

    state: str = ""  # "" (none), committed, drawing, drawn
    size: int = 0  # visitors drawn
    base: int = 0  # the admitted counter when the order was drawn
    ranked: bool = False  # every drawn visitor's place has its rank written
    commitment: str = ""
    secret: str = ""  # published once drawn

    @classmethod
    def from_item(cls, item: Item | None) -> DrawStatus:
        if not item:
            return cls()
        state = read_text(item, "state")
        drawn = state == DRAW_DRAWN
        chunks = read_number(item, "chunks")
        return cls(
            state=state,
            size=read_number(item, "size"),
            base=read_number(item, "admitted_base"),
            ranked=drawn and read_number(item, "ranked") >= chunks,
            commitment=read_text(item, "commitment"),
            secret=read_text(item, "secret") if drawn else "",
        )

    @property
    def drawn(self) -> bool:
        return self.state == DRAW_DRAWN


def draw_pending(config: RoomConfig, draw: DrawStatus) -> bool:
    """A scheduled start whose draw has not been made: nobody is admitted yet (a visitor who
    joins just before the start is in line twice, and must wait for the draw)."""
    if draw.drawn:
        return False
    return config.starts_at > 0 or draw.state in (DRAW_COMMITTED, DRAW_DRAWING)


def in_prequeue(config: RoomConfig, draw: DrawStatus, now: float) -> bool:
    """A new visitor joins the pre-queue: the start is ahead and the draw not made."""
    return not draw.drawn and config.starts_at > now


@dataclass(frozen=True)
class RoomSnapshot:
    """Config plus the counters, read together in one BatchGetItem."""

    config: RoomConfig
    shard_counts: tuple[int, ...]  # arrivals#k's n, k = 0 .. shards-1
    admitted_total: int
    # Capacity mode: places taken inside the shop, and visitors who left the line before their
    # turn and were passed over (their places count as gone by for the positions behind them).
    inside: int = 0
    skipped: int = 0
    turnover: int = 0  # visitors let in per minute lately (the trigger measures it)
    # Capacity mode: the claim window (settings), which bounds how rarely a waiting page polls.
    claim_seconds: int = 0
    draw: DrawStatus = DrawStatus()
    # The serving number's history as the state copy holds it (core/shared_state.py).
    history: str = ""
    # The room's last publish to waiting pages, as the state copy marks it (core/push.py);
    # not part of what the room says, so two snapshots that differ only in it are equal.
    pushed: Mark = dataclasses.field(default=NEVER, compare=False)

    @property
    def passed_total(self) -> int:
        """Places in line the admissions have gone past: admitted, or left and skipped."""
        return self.admitted_total + self.skipped

    @property
    def arrivals_total(self) -> int:
        return sum(self.shard_counts)

    @property
    def arrivals_since_reset(self) -> int:
        """Visitors who joined since the last `beekeeper reset` (see admitted_since_reset)."""
        return max(0, self.arrivals_total - self.config.reset_ordinal)

    @property
    def admitted_since_reset(self) -> int:
        """Visitors admitted since the last `beekeeper reset` (the counter goes on above the
        places the reset passed: RoomConfig.reset_ordinal)."""
        return max(0, self.admitted_total - self.config.reset_ordinal)

    @property
    def waiting(self) -> int:
        """Visitors in line: arrived, and neither admitted nor passed over (left the line)."""
        return max(0, self.arrivals_total - self.passed_total)

    def with_admitted_total(self, admitted_total: int) -> RoomSnapshot:
        return dataclasses.replace(self, admitted_total=admitted_total)

    def with_shard_counts(self, shard_counts: tuple[int, ...]) -> RoomSnapshot:
        """`dataclasses.replace(self, shard_counts=...)`, without its walk through every field
        and frozen assignment (the producer takes one for every visitor who joins): the fields
        copied as they are, the snapshot having nothing to check or derive in `__init__`."""
        copied = object.__new__(RoomSnapshot)
        copied.__dict__.update(self.__dict__)
        copied.__dict__["shard_counts"] = shard_counts
        return copied

    def serving_flow(self, now: float) -> int:
        """Visitors a minute the line moves at `now`: the rate while the room admits on its
        lattice; in a full shop, where visitors go in only as places free, the turnover (the
        visitors let in a minute lately), at most the rate: the pages extrapolate it, ask for
        themselves near the turn it predicts and every 2 s after, as they would at a steady
        rate; 0 while the room admits nobody (off, closed, held, waiting for a scheduled
        start's draw)."""
        config = self.config
        if not config.admits(now) or draw_pending(config, self.draw):
            return 0
        if not capped(config.max_inside):
            return config.rate
        # A capacity room's line passes its free places and then moves as places free: over the
        # pages' display delay (the longest they extrapolate a point before the next is their
        # anchor), the free places at most, or the turnover, never faster than the rate. A
        # moment's free place stated as the whole rate would run every page's place ahead,
        # and the floor would keep it there.
        free = max(0, config.max_inside - self.inside)
        passing = math.ceil(free * 60 / DISPLAY_DELAY_SECONDS)
        return min(config.rate, max(self.turnover, passing))


BATCH_GET_LIMIT = 100  # keys per BatchGetItem call (DynamoDB's limit)
# A batch call's unprocessed keys or items: asked for again this many calls in all, after a
# pause of at most 50 ms, doubling up to 2 s (full jitter, core/retry.py).
UNPROCESSED_ATTEMPTS = 5
UNPROCESSED_BACKOFF = Backoff(first=0.05, cap=2.0)


def batch_get(
    dynamodb: Any,
    table: str,
    keys: Iterable[str],
    *,
    pauses: Pauses,
    consistent: bool = False,
    attempts: int = UNPROCESSED_ATTEMPTS,
) -> dict[str, Item]:
    """Items by pk (missing ones absent), any number of keys, read 100 at a time.

    Keys DynamoDB leaves unprocessed (a throttled table) are asked for again, up to `attempts`
    calls per 100 keys, after a pause (UNPROCESSED_BACKOFF); then Unprocessed is raised.
    """
    wanted = list(dict.fromkeys(keys))
    found: dict[str, Item] = {}

    def read(request: dict[str, Any]) -> dict[str, Any]:
        response = dynamodb.batch_get_item(RequestItems=request)
        for item in response.get("Responses", {}).get(table, []):
            found[item[PARTITION_KEY]["S"]] = item
        return response.get("UnprocessedKeys") or {}

    for start in range(0, len(wanted), BATCH_GET_LIMIT):
        chunk = wanted[start : start + BATCH_GET_LIMIT]
        request = {table: {"Keys": [key(pk) for pk in chunk], "ConsistentRead": consistent}}
        if _unprocessed_retried(read, request, attempts, pauses):
            raise Unprocessed(f"DynamoDB left keys unprocessed after {attempts} attempts")
    return found


def _unprocessed_retried(
    call: Callable[[dict[str, Any]], dict[str, Any]],
    request: dict[str, Any],
    attempts: int,
    pauses: Pauses,
) -> dict[str, Any]:
    """A batch call, made again for what it left unprocessed: what is still left at the end."""
    return retry(
        call,
        request,
        retryable=bool,
        attempts=attempts,
        backoff=UNPROCESSED_BACKOFF,
        pauses=pauses,
    )


def snapshot_keys(settings: RoomSettings) -> list[str]:
    """The items a RoomSnapshot is read from: config, counters, arrival shards, and the state
    copy (for the history the next publish extends)."""
    keys = [CONFIG_KEY, ADMITTED_COUNTER_KEY, DRAW_KEY, *_shard_keys(settings), STATE_KEY]
    return [*keys, INSIDE_KEY] if settings.mode is Mode.CAPACITY else keys


def _shard_keys(settings: RoomSettings) -> list[str]:
    return [arrival_shard_key(k) for k in range(settings.arrival_shards)]


def snapshot_from_items(items: Mapping[str, Item], settings: RoomSettings) -> RoomSnapshot:
    """The snapshot in `items` (pk -> item as DynamoDB returns it; missing items absent)."""
    admitted = items.get(ADMITTED_COUNTER_KEY)
    return RoomSnapshot(
        config=RoomConfig.from_item(items.get(CONFIG_KEY), settings),
        shard_counts=tuple(read_number(items.get(pk), "n") for pk in _shard_keys(settings)),
        admitted_total=read_number(admitted, "n"),
        inside=read_number(items.get(INSIDE_KEY), "n"),
        skipped=read_number(admitted, "skipped"),
        turnover=read_number(items.get(INSIDE_KEY), "turnover"),
        claim_seconds=settings.claim_seconds if settings.mode is Mode.CAPACITY else 0,
        draw=DrawStatus.from_item(items.get(DRAW_KEY)),
        history=read_text(items.get(STATE_KEY), "history"),
        pushed=read_mark(items.get(STATE_KEY)),
    )


def read_mark(item: Item | None) -> Mark:
    """The last publish the state copy `item` marks (core/push.py); NEVER without one."""
    seq = read_number(item, "push_seq")
    return Mark(seq, read_text(item, "push_told")) if seq > 0 else NEVER


def mark_attributes(mark: Mark) -> dict[str, Any]:
    """A publish's mark as the state copy keeps it (nothing for NEVER)."""
    if not mark.seq:
        return {}
    told = {"push_told": {"S": mark.told}} if mark.told else {}
    return {"push_seq": number(mark.seq), **told}


def read_snapshot(
    dynamodb: Any, table: str, settings: RoomSettings, *, pauses: Pauses, consistent: bool = False
) -> RoomSnapshot:
    items = batch_get(
        dynamodb, table, snapshot_keys(settings), pauses=pauses, consistent=consistent
    )
    return snapshot_from_items(items, settings)


def read_config(dynamodb: Any, table: str, settings: RoomSettings) -> RoomConfig:
    response = dynamodb.get_item(TableName=table, Key=key(CONFIG_KEY), ConsistentRead=True)
    return RoomConfig.from_item(response.get("Item"), settings)


class ConfigChange(TypedDict, total=False):
    """What an operator's command changes in the config item; a field left out (or None)
    stays as it is."""

    enabled: bool | None
    operator_rate: int | None
    max_inside: int | None
    starts_at: int | None  # epoch seconds; 0: no schedule
    held: bool | None
    held_from: int | None  # epoch seconds: when the hold takes effect
    closed: bool | None
    message: str | None
    reset_ordinal: int | None  # `beekeeper reset`: every ordinal given before is at most this


def _config_value(value: object) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int):
        return number(value)
    raise TypeError(f"a config field takes a bool, a whole number or text, not {value!r}")


def write_config(
    dynamodb: Any, table: str, settings: RoomSettings, *, now: float, **change: Unpack[ConfigChange]
) -> RoomConfig:
    """What `beekeeper on/off/rate/capacity/schedule/hold/resume/close` do: set fields and bump
    the version.

    A new operator rate is also the new effective rate: the governor sees the version change
    and starts again from it (docs/pipeline.md).
    """
    assignments = ["updated_at = :now"]
    values: dict[str, Any] = {":now": number(now), ":one": number(1)}
    for name, value in change.items():
        if value is not None and name != "operator_rate":
            assignments.append(f"{name} = :{name}")
            values[f":{name}"] = _config_value(value)
    operator_rate = change.get("operator_rate")
    if operator_rate is not None:
        assignments += ["operator_rate = :rate", "rate = :rate"]
        values[":rate"] = number(operator_rate)
    else:
        # The first write of a room that never had a config item keeps the deployed rate.
        assignments += [
            "operator_rate = if_not_exists(operator_rate, :deployed)",
            "rate = if_not_exists(rate, :deployed)",
        ]
        values[":deployed"] = number(settings.rate)
    response = dynamodb.update_item(
        TableName=table,
        Key=key(CONFIG_KEY),
        UpdateExpression="SET " + ", ".join(assignments) + " ADD version :one",
        ExpressionAttributeValues=values,
        ReturnValues="ALL_NEW",
    )
    return RoomConfig.from_item(response.get("Attributes"), settings)


def set_effective_rate(
    dynamodb: Any, table: str, *, rate: int, expected_version: int, now: float
) -> bool:
    """The governor's write: only if the operator has not changed the config meanwhile.

    Returns False when the version moved (the operator's change wins).
    """
    condition = "version = :version" if expected_version else "attribute_not_exists(version)"
    values: dict[str, Any] = {":rate": number(rate), ":now": number(now)}
    if expected_version:
        values[":version"] = number(expected_version)
    try:
        dynamodb.update_item(
            TableName=table,
            Key=key(CONFIG_KEY),
            UpdateExpression="SET rate = :rate, updated_at = :now",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
    except ClientError as error:
        if error_code(error) == "ConditionalCheckFailedException":
            return False
        raise
    return True


def history_point(snapshot: RoomSnapshot, now: float, *, minute_seconds: float) -> Point:
    """The shared state's point for a publish now: the serving number, its flow, the line,
    the floor the pages keep to (core.serving.next_floor, on the room's minute) and the
    moment an announced hold stops the flow."""
    at_ms = round(now * 1000)
    config = snapshot.config
    return Point(
        at_ms,
        snapshot.passed_total,
        snapshot.serving_flow(now),
        waiting=snapshot.waiting,
        joins=joins_per_minute(snapshot.history, at_ms, snapshot.arrivals_total),
        floor=max(
            snapshot.passed_total,
            next_floor(parse_history(snapshot.history), at_ms, minute_seconds=minute_seconds) or 0,
        ),
        until_ms=config.held_from * 1000 if config.hold_pending(now) else 0,
    )


def next_history(snapshot: RoomSnapshot, now: float, *, minute_seconds: float) -> str:
    """The state copy's history with this publish's point."""
    return extend_history(
        snapshot.history,
        history_point(snapshot, now, minute_seconds=minute_seconds),
        anchor_age_seconds=DISPLAY_DELAY_SECONDS,
    )


def status_item(
    snapshot: RoomSnapshot,
    copy: int,
    now: float,
    *,
    minute_seconds: float = MINUTE_SECONDS,
    history: str | None = None,
) -> dict[str, Any]:
    """A status copy. `admitted_total` counts the places passed (admitted, or left and
    skipped): /polling's position is the ordinal minus it. In capacity mode the copy also says
    how full the shop is, how many went in a minute lately (`turnover`) and the claim window
    (`claim_seconds`, which bounds the wait between a page's polls); a rate-mode copy
    has exactly the fields it always had."""
    config = snapshot.config
    capacity = (
        {
            "max_inside": number(config.max_inside),
            "inside": number(snapshot.inside),
            "turnover": number(snapshot.turnover),
            "claim_seconds": number(snapshot.claim_seconds),
        }
        if capped(config.max_inside)
        else {}
    )
    # The state copy: the serving number's history, and the room's last publish (kept until a
    # writer publishes again).
    if copy == STATE_COPY and history is None:
        history = next_history(snapshot, now, minute_seconds=minute_seconds)
    state = (
        {"history": {"S": history}, **mark_attributes(snapshot.pushed)}
        if copy == STATE_COPY and history is not None
        else {}
    )
    return {
        **key(status_key(copy)),
        **state,
        "admitted_total": number(snapshot.passed_total),
        **capacity,
        **schedule_status(snapshot),
        "arrivals_total": number(snapshot.arrivals_total),
        "rate": number(config.rate),
        "operator_rate": number(config.operator_rate),
        "enabled": {"BOOL": config.enabled},
        "slowed": {"BOOL": config.slowed},
        "updated_at": number(now),
    }


def schedule_status(snapshot: RoomSnapshot) -> dict[str, Any]:
    """What /polling needs of a scheduled event, a hold or a close (docs/data-model.md); nothing
    for a room that never had any, whose copies keep exactly the fields they always had."""
    config, draw = snapshot.config, snapshot.draw
    fields: dict[str, Any] = {}
    if config.starts_at or draw.state:
        fields["starts_at"] = number(config.starts_at)
        fields["drawn"] = {"BOOL": draw.drawn}
        fields["prequeue_base"] = number(draw.base)
        fields["prequeue_ranked"] = {"BOOL": draw.ranked}
    if config.held:
        fields["held"] = {"BOOL": True}
        fields["held_from"] = number(config.held_from)
    if config.closed:
        fields["closed"] = {"BOOL": True}
        if config.message:
            fields["message"] = {"S": config.message}
    if config.reset_ordinal:
        fields["reset_ordinal"] = number(config.reset_ordinal)
    return fields


def publish_status(
    dynamodb: Any,
    table: str,
    snapshot: RoomSnapshot,
    *,
    now: float,
    pauses: Pauses,
    minute_seconds: float = MINUTE_SECONDS,
    push: StatePush | None = None,
) -> None:
    """Write the ten identical status copies in one BatchWriteItem (retrying leftovers), on the
    room's minute (local mode may shorten it: the shared state's floor is on its lattice); with
    `push`, then tell waiting pages what the state copy says when they must be told
    (room/push.py), the copy marked with the publish. A publish that fails takes its mark back,
    so that the next write publishes again."""
    history = next_history(snapshot, now, minute_seconds=minute_seconds)
    items = [status_item(snapshot, d, now, history=history) for d in range(STATUS_COPIES)]
    sending = push.prepare(snapshot.pushed, items[STATE_COPY], now) if push is not None else None
    write_all(dynamodb, table, [{"PutRequest": {"Item": item}} for item in items], pauses=pauses)
    if push is not None and sending is not None and not push.send(sending):
        unmark_push(dynamodb, table, sending.mark)


def unmark_push(dynamodb: Any, table: str, mark: Mark) -> None:
    """The publish `mark` did not reach the pages: the state copy says so (no `push_told`),
    unless another writer has marked a publish since. Best effort: left marked, the pages are
    told at the next resync (core/push.py RESYNC_SECONDS)."""
    try:
        dynamodb.update_item(
            TableName=table,
            Key=key(STATE_KEY),
            UpdateExpression="REMOVE push_told",
            ConditionExpression="push_seq = :seq",
            ExpressionAttributeValues={":seq": number(mark.seq)},
        )
    except ClientError as error:
        if error_code(error) != "ConditionalCheckFailedException":
            log.warning("the failed publish %s stays marked: %s", mark.seq, error)
    except Exception as error:
        log.warning("the failed publish %s stays marked: %s", mark.seq, error)


def write_all(
    dynamodb: Any,
    table: str,
    requests: Iterable[dict[str, Any]],
    *,
    pauses: Pauses,
    attempts: int = UNPROCESSED_ATTEMPTS,
) -> None:
    """One BatchWriteItem (25 requests at most), made again for the items it leaves unprocessed
    (a throttled table), up to `attempts` calls, after a pause (UNPROCESSED_BACKOFF); then
    Unprocessed is raised."""

    def write(pending: dict[str, Any]) -> dict[str, Any]:
        return dynamodb.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

    if _unprocessed_retried(write, {table: list(requests)}, attempts, pauses):
        raise Unprocessed(f"DynamoDB left writes unprocessed after {attempts} attempts")


def refresh_status(
    dynamodb: Any,
    table: str,
    settings: RoomSettings,
    *,
    now: float,
    pauses: Pauses,
    config: RoomConfig | None = None,
    minute_seconds: float = MINUTE_SECONDS,
    push: StatePush | None = None,
) -> None:
    """Publish the status copies from the counters and the config, read now (and, with
    `push`, tell waiting pages of a change).

    The CLI calls it after on/off/rate with the config its write returned: an eventually
    consistent read just after the write could still see the old one.
    """
    snapshot = read_snapshot(dynamodb, table, settings, pauses=pauses)
    if config is not None:
        snapshot = dataclasses.replace(snapshot, config=config)
    publish_status(
        dynamodb,
        table,
        snapshot,
        now=now,
        pauses=pauses,
        minute_seconds=minute_seconds,
        push=push,
    )


def reset_governor(dynamodb: Any, table: str) -> None:
    """Forget the governor's baseline: its next run measures a new one at the current rate."""
    dynamodb.delete_item(TableName=table, Key=key(GOVERNOR_KEY))
