"""The simulator's edge works out the line a copy shows at a moment once for every page that
shows it (simulator/pages.py, EdgeCopies.line_shown): each page's place is still the page's
rule's own answer (core/serving.place_shown) for its copy, its moment and its turn."""

from __future__ import annotations

from typing import Any
from unittest.mock import Mock

from beekeeper.core.datamodel import STATE_KEY
from beekeeper.core.serving import place_shown, shown_moment
from beekeeper.core.shared_state import Point, extend_history
from beekeeper.simulator.fake_dynamodb import FakeTable
from beekeeper.simulator.pages import EdgeCopies

MINUTE = 60.0
EPOCH = 1_800_000_000.0


def table_with(points: list[Point]) -> Any:
    history = ""
    for point in points:
        history = extend_history(history, point)
    table = Mock(spec=FakeTable)
    table.items = {STATE_KEY: {"history": {"S": history}}}
    return table


def point(second: float, serving: int, flow: int, waiting: int) -> Point:
    return Point(round((EPOCH + second) * 1000), serving, flow, waiting, joins=600)


def test_every_page_is_shown_its_own_copys_place_at_its_moment() -> None:
    table = table_with([point(0, 0, 600, 5000)])
    edge = EdgeCopies(table)
    edge.refresh(EPOCH + 5)
    # The next copy: the line has slowed, then stopped (a fast line, then a slow one, then a
    # held one: each redraws at moments of its own).
    table.items = table_with(
        [point(0, 0, 600, 5000), point(20, 200, 30, 4800), point(40, 210, 0, 4790)]
    ).items
    edge.refresh(EPOCH + 45)
    checked = 0
    for fetched in (EPOCH + 6, EPOCH + 30, EPOCH + 46, EPOCH + 70):
        copy = edge.at(fetched)
        for late in (0.0, 0.1, 0.3, 1.7, 9.0, 31.0):
            at = fetched + late
            moment = shown_moment(copy, at, minute_seconds=MINUTE)
            for turn in (1, 150, 205, 400, 5000, 9000):
                line = edge.line_shown(fetched, at, minute_seconds=MINUTE)
                shown = None if line is None else line.place(turn)
                assert shown == place_shown(copy, turn, moment, minute_seconds=MINUTE)
                checked += 1
    assert checked == 4 * 6 * 6
    # The two copies show different lines at the same moment: each page its own copy's.
    later = EPOCH + 80
    first = edge.line_shown(EPOCH + 6, later, minute_seconds=MINUTE)
    second = edge.line_shown(EPOCH + 46, later, minute_seconds=MINUTE)
    assert first is not None and second is not None
    assert first.serving != second.serving


def test_an_edge_without_a_copy_shows_no_line() -> None:
    edge = EdgeCopies(table_with([]))
    assert edge.line_shown(EPOCH, EPOCH + 1, minute_seconds=MINUTE) is None
