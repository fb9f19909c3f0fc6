"""The producer's copy of its snapshot with its own shard increment (RoomSnapshot
.with_shard_counts) is the snapshot dataclasses.replace would give, field for field."""

from __future__ import annotations

import dataclasses

from beekeeper.core.push import Mark
from beekeeper.room.room_state import DrawStatus, RoomConfig, RoomSnapshot
from beekeeper.simulator.run import simulated_room


def test_a_snapshot_with_other_shard_counts_is_the_replaced_one_field_for_field() -> None:
    snapshot = RoomSnapshot(
        config=RoomConfig.from_item(None, simulated_room(rate=600)),
        shard_counts=(3, 1, 4, 1),
        admitted_total=5,
        inside=9,
        skipped=2,
        turnover=6,
        claim_seconds=5,
        draw=DrawStatus(),
        history="1000:5:60",
        pushed=Mark(seq=7, told="rate"),
    )
    copied = snapshot.with_shard_counts((3, 2, 4, 1))
    replaced = dataclasses.replace(snapshot, shard_counts=(3, 2, 4, 1))
    assert copied is not snapshot and snapshot.shard_counts == (3, 1, 4, 1)
    for field in dataclasses.fields(RoomSnapshot):
        assert getattr(copied, field.name) == getattr(replaced, field.name), field.name
    # Nothing for __init__ to check or derive: the copy may skip it.
    assert not hasattr(RoomSnapshot, "__post_init__")
    assert dataclasses.fields(RoomSnapshot) and "__slots__" not in RoomSnapshot.__dict__
