"""The shared state document (GET /state): its template against the status copy the room
writes, and the serving number's history (core/shared_state.py)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity import RenderInput, render
from beekeeper.core import shared_state
from beekeeper.core.datamodel import STATE_KEY
from beekeeper.core.polling import admission_flow
from beekeeper.core.routes import route
from beekeeper.core.settings import RoomSettings
from beekeeper.core.shared_state import (
    HISTORY_POINTS,
    HISTORY_SECONDS,
    JOINS_OVER_SECONDS,
    Point,
    document_state,
    extend_history,
    joins_per_minute,
    parse_history,
)
from beekeeper.room.room_state import DrawStatus, RoomConfig, RoomSnapshot, status_item
from beekeeper.vtl import load_template, template_values
from beekeeper.vtl.methods import response_headers

ORIGIN = "https://shop.example/sale"
SETTINGS = RoomSettings(
    name="sale", display_name="Sale", region="eu-west-1", origin=ORIGIN, rate=600
)
NOW = 1_800_000_000.0
NOW_MS = 1_800_000_002_500
VALUES = template_values(table_name="beekeeper-sale", origin=ORIGIN)


def document(item: dict[str, Any] | None, *, now_ms: int = NOW_MS, **request: Any) -> Any:
    body = json.dumps({"Item": item} if item is not None else {})
    template = load_template(route("state").vtl.response_template, VALUES)
    data = RenderInput(body=body, context={"requestTimeEpoch": now_ms}, **request)
    return json.loads(render(template, data))


def snapshot(**config: Any) -> RoomSnapshot:
    base = RoomConfig.from_item(None, SETTINGS)
    draw = config.pop("draw", DrawStatus())
    inside = config.pop("inside", 0)
    turnover = config.pop("turnover", 0)
    return RoomSnapshot(
        config=dataclasses.replace(base, **config),
        shard_counts=(700, 700),
        admitted_total=1000,
        inside=inside,
        turnover=turnover,
        draw=draw,
    )


def test_the_request_reads_the_state_copy_and_nothing_the_client_sends() -> None:
    template = load_template(route("state").vtl.request_template("rate"), VALUES)
    plain = json.loads(render(template, RenderInput()))
    assert plain == {"TableName": "beekeeper-sale", "Key": {"pk": {"S": STATE_KEY}}}
    item = status_item(snapshot(), 0, NOW)
    hostile = {"headers": {"Cookie": "beekeeper_token=x"}, "query": {"turn": '1"}'}}
    assert document(item, **hostile) == document(item)


def test_an_open_room_tells_the_serving_number_the_flow_and_its_history() -> None:
    item = status_item(snapshot(), 0, NOW)
    assert document(item) == {
        "state": "open",
        "serving": 1000,
        "rate": 600,
        "flow": 600,
        "slowed": False,
        "updated_at": int(NOW),
        # When, the serving number, its flow, the visitors waiting, the joins a minute lately,
        # the floor the pages keep to, and no hold announced.
        "history": f"{round(NOW * 1000)}:1000:600:400:0:1000:0",
        "now": NOW_MS,
        # The room has pushed nothing yet (core/push.py).
        "seq": 0,
    }
    assert response_headers(route("state"), ORIGIN) == {
        "Content-Type": "application/json",
        "Cache-Control": f"public, max-age={shared_state.STATE_MAX_AGE_SECONDS}",
    }


@settings(max_examples=120, deadline=None)
@given(
    enabled=st.booleans(),
    closed=st.booleans(),
    held=st.booleans(),
    starts_in=st.sampled_from([None, -30, 0, 1, 90]),
    drawn=st.booleans(),
)
def test_the_state_follows_the_python_rule(
    enabled: bool, closed: bool, held: bool, starts_in: int | None, drawn: bool
) -> None:
    starts_at = 0 if starts_in is None else int(NOW_MS / 1000) + starts_in
    draw = DrawStatus(state="drawn", size=5, base=900, ranked=True) if drawn else DrawStatus()
    if starts_at == 0 and not drawn:
        draw = DrawStatus()
    item = status_item(
        snapshot(
            enabled=enabled,
            closed=closed,
            held=held,
            starts_at=starts_at,
            draw=draw,
            message="Sold out",
        ),
        0,
        NOW,
    )
    answer = document(item)
    expected = document_state(
        enabled=enabled,
        closed=closed,
        held=held,
        starts_at=starts_at,
        drawn=draw.drawn,
        now=NOW_MS / 1000,
    )
    assert answer["state"] == expected
    assert answer["flow"] == (600 if expected == "open" else 0)
    assert ("origin" in answer) == (expected == "off")
    if expected == "off":
        assert answer["origin"] == ORIGIN
    assert ("message" in answer) == (expected == "closed")
    if starts_at or draw.drawn:
        assert answer["starts_at"] == starts_at and answer["drawn"] is draw.drawn


def test_a_full_shop_moves_at_its_turnover_and_says_how_full_it_is() -> None:
    settings_ = SETTINGS.replace(max_inside=50)
    base = RoomConfig.from_item(None, settings_)
    full = RoomSnapshot(
        config=base,
        shard_counts=(700, 700),
        admitted_total=1000,
        inside=50,
        turnover=7,
        claim_seconds=120,
    )
    answer = document(status_item(full, 0, NOW))
    assert answer["flow"] == admission_flow(600, max_inside=50, inside=50, turnover=7) == 7
    assert {k: answer[k] for k in ("max_inside", "inside", "turnover", "full")} == {
        "max_inside": 50,
        "inside": 50,
        "turnover": 7,
        "full": True,
    }
    assert answer["claim_seconds"] == 120


def test_a_history_the_publisher_did_not_write_is_left_out() -> None:
    item = status_item(snapshot(), 0, NOW)
    for bad in ('1:2:3", "x": "', "1:2", "1:2:3 " * 30, "1:2:3\n"):
        item["history"] = {"S": bad}
        assert document(item)["history"] == ""


def test_a_message_that_could_break_the_answer_is_left_out() -> None:
    item = status_item(snapshot(closed=True, message="Sold out"), 0, NOW)
    item["message"] = {"S": 'Sold "out"'}
    assert "message" not in document(item)


def test_a_room_without_a_status_yet_is_open_and_serves_nobody() -> None:
    assert document(None) == {
        "state": "open",
        "serving": 0,
        "rate": 0,
        "flow": 0,
        "slowed": False,
        "updated_at": 0,
        "history": "",
        "now": NOW_MS,
        "seq": 0,
    }


def test_only_the_state_copy_carries_the_history() -> None:
    assert "history" in status_item(snapshot(), 0, NOW)
    assert all("history" not in status_item(snapshot(), copy, NOW) for copy in range(1, 10))


def test_the_history_keeps_a_minute_and_the_anchor_before_it_in_time_order() -> None:
    text = ""
    for second in range(0, 200, 5):
        text = extend_history(text, Point(second * 1000, second, 600))
    points = parse_history(text)
    assert [p.at_ms for p in points] == sorted(p.at_ms for p in points)
    newest = points[-1].at_ms
    assert points[0].at_ms < newest - HISTORY_SECONDS * 1000 <= points[1].at_ms
    assert len(points) <= HISTORY_POINTS
    # Many publishes a second (a quiet room admitting): at most HISTORY_POINTS are kept.
    for tick in range(100):
        text = extend_history(text, Point(newest + tick, tick, 5))
    assert len(parse_history(text)) == HISTORY_POINTS
    # However many, never the point a page reading the copy anchors on (the newest one at
    # least the display delay old): a publish that would push it out adds nothing.
    text = ""
    for second in range(0, 200, 5):
        text = extend_history(text, Point(second * 1000, second, 600))
    newest = parse_history(text)[-1].at_ms
    for tick in range(100):
        text = extend_history(text, Point(newest + tick, tick, 5), anchor_age_seconds=9)
        points = parse_history(text)
        assert len(points) <= HISTORY_POINTS
        assert points[0].at_ms <= points[-1].at_ms - 9_000
    assert [p.at_ms for p in points[:3]] == [185_000, 190_000, 195_000]
    # A point older than the newest (a publisher whose clock is behind) is not added.
    assert extend_history(text, Point(1, 1, 1)) == text


@pytest.mark.parametrize("text", ["", "x", "1:2:3 4:5", "1:2:3  4:5:6", "1:2:3:4", "1:2:3:4:5:6"])
def test_a_malformed_history_reads_as_none(text: str) -> None:
    assert parse_history(text) == ()


def test_a_point_states_the_line_and_the_joins_a_minute_lately() -> None:
    old = Point(1_000_000, 50, 600)  # written before points stated their line
    assert parse_history(f"{old.text()} 1001000:60:600:5:120") == (
        old,
        Point(1_001_000, 60, 600, waiting=5, joins=120),
    )
    text = ""
    for second, arrivals in ((0, 100), (2, 110), (6, 130), (8, 150)):
        text = extend_history(text, Point(second * 1000, 90, 600, waiting=arrivals - 90))
    # From the newest point at least JOINS_OVER_SECONDS back: 8 s, 150 joined, to 10 s, 190.
    assert JOINS_OVER_SECONDS == 1
    assert joins_per_minute(text, 10_000, 190) == round(40 * 60 / 2)
    # None that old: the oldest.
    assert joins_per_minute(text, 500, 103) == round(3 * 60 / 0.5)
    # None stating its line, or none at all: 0.
    assert joins_per_minute(Point(0, 1, 1).text(), 10_000, 500) == 0
    assert joins_per_minute("", 10_000, 500) == 0


# Attributes of a state copy as the room writes them, and as anything else might have left them.
_NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=10**12).map(str),
    st.sampled_from(["", "-5", "12.5", "1e3", "007", "x"]),
)
_SMALL_NUMBERS = st.sampled_from(["", "0", "1", "5", "50", "600", "x"])
_FLAGS = st.one_of(st.booleans(), st.none())


@settings(max_examples=300, deadline=None)
@given(
    numbers=st.fixed_dictionaries(
        {},
        optional={
            **{
                name: _NUMBERS
                for name in (
                    "admitted_total",
                    "updated_at",
                    "starts_at",
                    "prequeue_base",
                    "claim_seconds",
                    "push_seq",
                )
            },
            # Small figures, so that a full shop, a slower turnover and no rate all come up.
            **{name: _SMALL_NUMBERS for name in ("rate", "max_inside", "inside", "turnover")},
        },
    ),
    flags=st.fixed_dictionaries(
        {
            name: _FLAGS
            for name in ("enabled", "slowed", "closed", "held", "drawn", "prequeue_ranked")
        }
    ),
    message=st.sampled_from([None, "Sold out", 'Sold "out"', "x" * 201]),
    history=st.sampled_from([None, "1:2:3", "1:2:3:4:5 6:7:8:9:10", "1:2", "a"]),
    starts_in=st.sampled_from([None, -30, 0, 1, 90]),
    now_ms=st.sampled_from([NOW_MS, NOW_MS + 999, 0]),
)
def test_the_python_document_is_the_templates_answer(
    numbers: dict[str, str],
    flags: dict[str, bool | None],
    message: str | None,
    history: str | None,
    starts_in: int | None,
    now_ms: int,
) -> None:
    """core/shared_state.document (what the room pushes) is what GET /state answers, for any
    state copy, the room's own and ones it never writes."""
    item: dict[str, Any] = {"pk": {"S": STATE_KEY}}
    item.update({name: {"N": value} for name, value in numbers.items()})
    item.update({name: {"BOOL": value} for name, value in flags.items() if value is not None})
    if message is not None:
        item["message"] = {"S": message}
    if history is not None:
        item["history"] = {"S": history}
    if starts_in is not None:
        item["starts_at"] = {"N": str(NOW_MS // 1000 + starts_in)}
    templated = document(item, now_ms=now_ms)
    assert shared_state.document(item, now_ms=now_ms, origin=ORIGIN) == templated
    assert list(shared_state.document(item, now_ms=now_ms, origin=ORIGIN)) == list(templated)


def test_the_python_document_of_no_status_is_the_templates() -> None:
    assert shared_state.document(None, now_ms=NOW_MS, origin=ORIGIN) == document(None)


def test_the_document_says_the_rooms_last_push() -> None:
    item = status_item(snapshot(), 0, NOW)
    item["push_seq"] = {"N": "1800000001234"}
    assert document(item)["seq"] == 1_800_000_001_234


@pytest.mark.parametrize(
    "attributes",
    [
        # A full shop nobody left lately: the flow is one a minute, not none.
        {"rate": {"N": "600"}, "max_inside": {"N": "5"}, "inside": {"N": "5"}},
        # A full shop turning over faster than the rate: the rate.
        {
            "rate": {"N": "6"},
            "max_inside": {"N": "5"},
            "inside": {"N": "9"},
            "turnover": {"N": "50"},
        },
        # Off, with a message and a history the room wrote.
        {"enabled": {"BOOL": False}, "message": {"S": "Gone"}, "history": {"S": "1:2:3"}},
        # Closed with a message, a draw made, pushed before.
        {
            "closed": {"BOOL": True},
            "message": {"S": "Sold out"},
            "drawn": {"BOOL": True},
            "prequeue_ranked": {"BOOL": True},
            "push_seq": {"N": "1800000001000"},
        },
    ],
)
def test_the_python_document_is_the_templates_answer_for_these(
    attributes: dict[str, Any],
) -> None:
    item = {"pk": {"S": STATE_KEY}, **attributes}
    assert shared_state.document(item, now_ms=NOW_MS, origin=ORIGIN) == document(item)


@pytest.mark.parametrize(
    ("inside", "turnover", "flow"),
    [
        (0, 5, 600),  # an empty shop: the line moves at the rate
        (99, 5, 7),  # one free place: passed within the display delay (60 / 9 s), then slow
        (99, 30, 30),  # ... or the turnover, when faster
        (100, 5, 5),  # a full shop: the turnover
    ],
)
def test_a_capacity_rooms_points_state_the_flow_its_free_places_allow(
    inside: int, turnover: int, flow: int
) -> None:
    """A point's flow is what every page extrapolates for up to the display delay: a moment's
    free place in a capacity room is not the whole rate (the pages' places would run ahead,
    and their floor would keep them there)."""
    room = snapshot(max_inside=100, rate=600, inside=inside, turnover=turnover)
    assert room.serving_flow(NOW) == flow
