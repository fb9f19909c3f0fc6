"""A kill inside a transaction: the saved line replays it whole or not at all.

Each kind of multi-item write the room makes runs through its real code against a local room's
store with the journal attached (local/saved_state.py): a rate-mode admission (a transaction
of conditional puts) with the status copies (a batch), an admission that takes places (the
counter and the visitors' items), the warden releasing leavers' and expired places (the
visitor's item and the counter), a consumer passing over a visitor who left the line (their
item and the skipped count), and a scheduled event's draw (its chunks and ranks, in batches).
The journal is then cut at every line boundary and in the middle of every line the run
appended, as a kill would leave it, and a new room starts from each cut. The table it
restores must be the table as it stood after some whole request (never half of one), and in
capacity mode the `inside` counter must equal the places held: no place leaked, none counted
twice, nobody admitted twice.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core.datamodel import (
    INSIDE_KEY,
    PASSED_OVER_ATTRIBUTE,
    Token,
    visitor_key,
)
from beekeeper.core.local_room import LOCAL_REGION
from beekeeper.core.names import ResourceNames
from beekeeper.core.sessions import leave_request
from beekeeper.local.emulator import Emulator
from beekeeper.local.saved_state import SavedState
from beekeeper.room import places
from beekeeper.room.consumer import run_consumer
from beekeeper.room.pacing import minute_span
from beekeeper.room.prequeue import Draw, join_prequeue
from beekeeper.room.room_state import RoomConfig
from beekeeper.store.dynamodb import copy_item
from beekeeper.store.expressions import Item
from tests.support.pipeline import FakeClock, LongPollsOnTheClock
from tests.support.sample_room import sample_room

ROOM = "torn"
NAMES = ResourceNames(ROOM)
Table = dict[str, Item]


class Room:
    """A local room's store with its journal, and a record of the table after each request."""

    def __init__(self, path: Path, started: list[Emulator]) -> None:
        self.path = path
        self.emulator = start(started, path)
        self.dynamodb = self.emulator.client("dynamodb")
        self.sqs = self.emulator.client("sqs")
        self.queue_url = next(
            q.url for q in self.emulator.sqs.queues.values() if q.name == NAMES.queue
        )
        self.states: list[Table] = []
        self.emulator.dynamodb.request_observers.append(self._record)
        self._recording = False

    def table(self) -> Table:
        return self.emulator.dynamodb.snapshot()[NAMES.table]

    def _record(self) -> None:
        # Told inside the store's request, under its lock: copy the table without taking it.
        if self._recording:
            items = self.emulator.dynamodb.tables[NAMES.table].items
            self.states.append({pk: copy_item(item) for pk, item in items.items()})

    def watch(self, run: Callable[[], object]) -> tuple[int, int]:
        """Run `run`, recording the table after each of its requests; (journal bytes before,
        after)."""
        before = self.path.stat().st_size
        self.states = [self.table()]
        self._recording = True
        try:
            run()
        finally:
            self._recording = False
        return before, self.path.stat().st_size


def start(started: list[Emulator], path: Path) -> Emulator:
    emulator = Emulator()
    emulator.start()
    started.append(emulator)
    emulator.create_room_resources(ROOM)
    SavedState(path).restore(emulator)
    return emulator


@pytest.fixture()
def started() -> Iterator[list[Emulator]]:
    emulators: list[Emulator] = []
    yield emulators
    for emulator in emulators:
        emulator.stop()


def cuts(journal: bytes, before: int, after: int) -> list[int]:
    """Every line boundary inside the run's part of the journal, and each line's middle."""
    ends = [before + i + 1 for i, byte in enumerate(journal[before:after]) if byte == 0x0A]
    starts = [before, *ends[:-1]]
    middles = [(s + e) // 2 for s, e in zip(starts, ends, strict=True)]
    return sorted({*ends[:-1], *middles} - {before, after})


def holders(table: Table) -> int:
    """Places held: admitted visitors whose place was not freed (a leaver holds theirs until
    the warden releases it)."""
    return sum(
        1
        for pk, item in table.items()
        if pk.startswith("v#") and "admitted_at" in item and "place_freed" not in item
    )


def inside(table: Table) -> int:
    return int(table.get(INSIDE_KEY, {}).get("n", {}).get("N", "0"))


def assert_every_cut_replays_whole_requests(
    room: Room,
    before: int,
    after: int,
    started: list[Emulator],
    tmp_path: Path,
    *,
    capacity: bool = True,
) -> int:
    journal = room.path.read_bytes()
    points = cuts(journal, before, after)
    assert points, "the run wrote nothing to cut"
    for number, cut in enumerate(points):
        path = tmp_path / f"cut-{number}.state.jsonl"
        path.write_bytes(journal[:cut])
        restored = start(started, path).dynamodb.snapshot()[NAMES.table]
        assert restored in room.states, f"the cut at byte {cut} replayed half a request"
        if capacity:
            assert inside(restored) == holders(restored), f"a place leaked at byte {cut}"
        started.pop().stop()
    return len(points)


def tokens(count: int, start: int = 1) -> list[Token]:
    return [Token(f"{i:022d}", i) for i in range(start, start + count)]


def consume(room: Room, clock: FakeClock, rate: int, **changes: Any) -> None:
    start_at, _ = minute_span(int(clock() // 60), 60)
    clock.now = max(clock.now, start_at)
    run_consumer(
        {
            "minute": int(clock() // 60),
            "index": 0,
            "consumers": 1,
            "rate": rate,
            "start": start_at,
            "deadline": clock() + 5,
        },
        settings=sample_room(name=ROOM, region=LOCAL_REGION, rate=rate, **changes),
        table=NAMES.table,
        queue_url=room.queue_url,
        dynamodb=room.dynamodb,
        sqs=LongPollsOnTheClock(room.sqs, clock, room.queue_url),
        clock=clock,
        sleep=clock.sleep,
        pauses=clock.pauses(),
    )


def test_a_rate_mode_admission_and_the_status_copies(
    tmp_path: Path, started: list[Emulator]
) -> None:
    room = Room(tmp_path / "room.state.jsonl", started)
    for token in tokens(7):
        room.sqs.send_message(QueueUrl=room.queue_url, MessageBody=str(token))
    clock = FakeClock()
    before, after = room.watch(lambda: consume(room, clock, 600))
    assert sum(pk.startswith("v#") for pk in room.table()) == 7
    cut = assert_every_cut_replays_whole_requests(
        room, before, after, started, tmp_path, capacity=False
    )
    assert cut > 3


def test_an_admission_that_takes_places(tmp_path: Path, started: list[Emulator]) -> None:
    room = Room(tmp_path / "room.state.jsonl", started)
    settings = sample_room(name=ROOM, region=LOCAL_REGION, max_inside=10)
    outcome = places.admit(
        room.dynamodb,
        NAMES.table,
        tokens(5),
        now=1_800_000_000,
        settings=settings,
        max_inside=10,
    )
    assert outcome.written  # warms the table; the cut run is the next admission
    before, after = room.watch(
        lambda: places.admit(
            room.dynamodb,
            NAMES.table,
            tokens(5, start=6),
            now=1_800_000_001,
            settings=settings,
            max_inside=10,
        )
    )
    assert inside(room.table()) == 10 == holders(room.table())
    assert_every_cut_replays_whole_requests(room, before, after, started, tmp_path)


def test_the_warden_releasing_leavers_and_expired_places(
    tmp_path: Path, started: list[Emulator]
) -> None:
    room = Room(tmp_path / "room.state.jsonl", started)
    settings = sample_room(name=ROOM, region=LOCAL_REGION, max_inside=10)
    admitted_at = 1_800_000_000
    places.admit(
        room.dynamodb, NAMES.table, tokens(6), now=admitted_at, settings=settings, max_inside=10
    )
    for token in tokens(3):
        room.dynamodb.update_item(**leave_request(NAMES.table, token.id, now=admitted_at + 5))
    later = admitted_at + settings.claim_seconds + 5  # the others' claims have run out
    clock = FakeClock(float(later))
    warden = places.Warden(room.dynamodb, NAMES.table, clock, pauses=clock.pauses())
    before, after = room.watch(warden.run)
    assert inside(room.table()) == 0 == holders(room.table())
    assert_every_cut_replays_whole_requests(room, before, after, started, tmp_path)


def test_a_visitor_who_left_the_line_passed_over(tmp_path: Path, started: list[Emulator]) -> None:
    room = Room(tmp_path / "room.state.jsonl", started)
    clock = FakeClock()
    line = tokens(4)
    for token in line:
        room.sqs.send_message(QueueUrl=room.queue_url, MessageBody=str(token))
    room.dynamodb.update_item(**leave_request(NAMES.table, line[1].id, now=int(clock())))
    before, after = room.watch(lambda: consume(room, clock, 600, max_inside=10))
    table = room.table()
    assert PASSED_OVER_ATTRIBUTE in table[visitor_key(line[1].id)]
    assert table["admitted"]["skipped"] == {"N": "1"}
    assert_every_cut_replays_whole_requests(room, before, after, started, tmp_path)


def test_a_scheduled_events_draw(tmp_path: Path, started: list[Emulator]) -> None:
    room = Room(tmp_path / "room.state.jsonl", started)
    now = 1_800_000_000.0
    for token in tokens(60):
        join_prequeue(room.dynamodb, NAMES.table, token, now - 100)
    counter = itertools.count()
    clock = FakeClock(now)
    draw = Draw(
        room.dynamodb,
        NAMES.table,
        clock,
        secret_bytes=lambda n: bytes([next(counter) % 256] * n),
        pauses=clock.pauses(),
    )
    config = dataclasses.replace(
        RoomConfig.defaults(sample_room(name=ROOM, region=LOCAL_REGION)), starts_at=int(now - 1)
    )
    before, after = room.watch(lambda: draw.run(config, int(now // 60)))
    assert sum(pk.startswith("p#") and "rank" in item for pk, item in room.table().items()) == 60
    assert_every_cut_replays_whole_requests(room, before, after, started, tmp_path)
