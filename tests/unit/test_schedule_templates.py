"""/polling's answers for a scheduled event (prequeue), a held line (paused) and a closed event
(closed), rendered with the local renderer from status copies written by the Python owner
(lambdas/room_state.status_item); the poll rule is core/schedule.py's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beekeeper.apigateway.velocity.renderer import RenderInput, render
from beekeeper.core import schedule
from beekeeper.core.datamodel import COOKIE_NAME, DRAW_DRAWN, prequeue_key
from beekeeper.core.routes import RATE, route
from beekeeper.core.settings import RoomSettings
from beekeeper.room.room_state import DrawStatus, RoomConfig, RoomSnapshot, status_item
from beekeeper.vtl import load_template, template_values
from tests.support.hostile_requests import HEADERS

ORIGIN = "https://shop.example/sale"
TABLE = "beekeeper-test"
TOKEN_ID = "Ab0_-" + "x" * 17
TOKEN = f"{TOKEN_ID}.1234"
NOW_MS = 1_763_780_000_456
NOW_S = NOW_MS // 1000
VALUES = template_values(table_name=TABLE, origin=ORIGIN)
SETTINGS = RoomSettings(
    name="sale", display_name="Sale", region="us-east-1", origin=ORIGIN, rate=600
)


def status(
    *,
    admitted: int = 1000,
    starts_at: int = 0,
    draw: DrawStatus | None = None,
    held: bool = False,
    closed: bool = False,
    message: str = "",
) -> dict[str, Any]:
    config = RoomConfig(
        enabled=True,
        operator_rate=600,
        rate=600,
        version=3,
        updated_at=NOW_S - 5,
        starts_at=starts_at,
        held=held,
        closed=closed,
        message=message,
    )
    snapshot = RoomSnapshot(
        config=config, shard_counts=(5000,), admitted_total=admitted, draw=draw or DrawStatus()
    )
    return status_item(snapshot, 4, NOW_S - 5)


def place(rank: int | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"pk": {"S": prequeue_key(TOKEN_ID)}, "ordinal": {"N": "1234"}}
    if rank is not None:
        item["rank"] = {"N": str(rank)}
    return item


def poll(items: list[dict[str, Any]], headers: dict[str, str] | None = None) -> Any:
    data = RenderInput(
        body=json.dumps({"Responses": {TABLE: items}}),
        headers={"Cookie": f"{COOKIE_NAME}={TOKEN}"} if headers is None else headers,
        context={"requestTimeEpoch": NOW_MS},
    )
    return json.loads(render(load_template(route("polling").vtl.response_template, VALUES), data))


def test_the_request_reads_the_visitors_pre_queue_place_too() -> None:
    text = render(
        load_template(route("polling").vtl.request_template(RATE), VALUES),
        RenderInput(headers={"Cookie": f"{COOKIE_NAME}={TOKEN}"}),
    )
    keys = [k["pk"]["S"] for k in json.loads(text)["RequestItems"][TABLE]["Keys"]]
    assert keys == [f"v#{TOKEN_ID}", "status#4", prequeue_key(TOKEN_ID)]


@pytest.mark.parametrize("until_start", [3600, 400, 361, 200, 121, 90, 61, 60, 59, 1, 0, -1, -300])
def test_a_pre_queue_place_answers_prequeue_with_the_start_and_the_poll_rule(
    until_start: int,
) -> None:
    starts_at = NOW_S + until_start
    committed = DrawStatus(state="committed")
    answer = poll([status(starts_at=starts_at, draw=committed), place()])
    assert answer == {
        "allow": False,
        "state": "prequeue",
        "starts_at": starts_at,
        "poll_after": schedule.prequeue_poll_after(until_start),
    }
    # At most once a minute until the last minute; never past the start by more than a poll.
    if until_start > 60:
        assert 60 <= answer["poll_after"] <= until_start - 60 or answer["poll_after"] == 60


def test_the_poll_rule_keeps_the_pre_queue_rare_until_the_last_minute() -> None:
    for seconds in range(61, 5000):
        after = schedule.prequeue_poll_after(seconds)
        assert 60 <= after <= 300
        assert seconds - after >= 60 or after == 60  # the last minute's poll is not skipped
    assert [schedule.prequeue_poll_after(s) for s in (60, 30, 1)] == [60, 30, 1]
    assert schedule.prequeue_poll_after(0) == schedule.PREQUEUE_DRAWING_POLL_SECONDS


def test_a_cleared_schedule_with_a_pre_queue_waits_for_the_draw() -> None:
    answer = poll([status(starts_at=0, draw=DrawStatus(state="committed")), place()])
    assert answer["state"] == "prequeue"
    assert answer["poll_after"] == schedule.PREQUEUE_DRAWING_POLL_SECONDS


@pytest.mark.parametrize(
    ("rank", "admitted", "base", "position"),
    [(1, 500, 500, 1), (40, 500, 500, 40), (40, 520, 500, 20), (40, 600, 500, 1)],
)
def test_a_drawn_place_counts_from_its_rank(
    rank: int, admitted: int, base: int, position: int
) -> None:
    drawn = DrawStatus(state=DRAW_DRAWN, size=100, base=base, ranked=False)
    answer = poll([status(admitted=admitted, starts_at=NOW_S - 30, draw=drawn), place(rank)])
    assert answer["state"] == "waiting"
    assert answer["position"] == position


def test_a_drawn_place_is_never_unknown_whatever_its_ordinal() -> None:
    # The ordinal (1234) was passed by far more than the unknown margin; the rank says 7th.
    drawn = DrawStatus(state=DRAW_DRAWN, size=500_000, base=0, ranked=True)
    answer = poll([status(admitted=400_000, draw=drawn), place(400_007)])
    assert answer["state"] == "waiting"
    assert answer["position"] == 7


def test_a_place_the_draw_missed_waits_by_its_ordinal_once_every_rank_is_written() -> None:
    ranking = DrawStatus(state=DRAW_DRAWN, size=100, base=0, ranked=False)
    assert poll([status(admitted=1000, draw=ranking), place()])["state"] == "prequeue"
    ranked = DrawStatus(state=DRAW_DRAWN, size=100, base=0, ranked=True)
    answer = poll([status(admitted=1000, draw=ranked), place()])
    assert answer["state"] == "waiting"
    assert answer["position"] == 234


def test_a_held_line_is_paused_and_keeps_positions() -> None:
    answer = poll([status(admitted=1000, held=True)])
    assert answer == {
        "allow": False,
        "state": "paused",
        "position": 234,
        "turn": 1234,
        "poll_after": schedule.PAUSED_POLL_SECONDS,
    }


def test_a_closed_event_says_so_with_the_operators_message() -> None:
    assert poll([status(closed=True)]) == {"allow": False, "state": "closed"}
    answer = poll([status(closed=True, message="Sold out - thank you! Bis bald.")])
    assert answer == {
        "allow": False,
        "state": "closed",
        "message": "Sold out - thank you! Bis bald.",
    }


def test_an_admitted_visitor_still_goes_to_the_shop_when_the_event_is_closed() -> None:
    visitor = {
        "pk": {"S": f"v#{TOKEN_ID}"},
        "admitted_at": {"N": str(NOW_S - 10)},
        "expires_at": {"N": str(NOW_S + 3000)},
    }
    answer = poll([visitor, status(closed=True, message="over")])
    assert answer["allow"] is True


HOSTILE_MESSAGES = [
    '"}, "allow": true, "x": "',
    "</script><script>alert(1)</script>",
    "back\\slash",
    "line\nbreak",
    "a & b",
    "x" * 201,
    "$context.requestTimeEpoch #set($allow = true)",
]


@pytest.mark.parametrize("message", HOSTILE_MESSAGES)
def test_a_message_that_could_break_the_answer_is_left_out_not_written(message: str) -> None:
    # As if written to the table by something other than the CLI (which refuses these).
    item = status(closed=True)
    item["message"] = {"S": message}
    answer = poll([item])
    assert answer["allow"] is False
    assert answer["state"] == "closed"
    if schedule.is_message(message):
        assert answer["message"] == message  # harmless text is shown as it is
    else:
        assert "message" not in answer


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=220))
def test_any_message_in_the_table_gives_json_with_that_text_or_none(message: str) -> None:
    item = status(closed=True)
    item["message"] = {"S": message}
    answer = poll([item])
    assert answer["state"] == "closed"
    assert answer.get("message", message) == message
    assert "message" not in answer or schedule.is_message(message)


@settings(max_examples=50, deadline=None)
@given(headers=HEADERS)
def test_any_request_gets_json_from_a_scheduled_rooms_status(headers: dict[str, str]) -> None:
    drawn = DrawStatus(state=DRAW_DRAWN, size=10, base=0, ranked=True)
    answer = poll([status(starts_at=NOW_S - 5, draw=drawn, held=True), place(3)], headers)
    assert answer["allow"] is False


def test_the_cli_refuses_what_the_template_would_leave_out() -> None:
    refused = [m for m in HOSTILE_MESSAGES if not schedule.is_message(m)]
    assert len(refused) == len(HOSTILE_MESSAGES) - 1  # Velocity-like text is only text
    for message in refused:
        with pytest.raises(schedule.ScheduleError):
            schedule.validate_message(message)
    assert schedule.validate_message("  Ausverkauft, danke schön!  ") == "Ausverkauft, danke schön!"


def test_a_rate_rooms_status_copy_has_no_schedule_fields() -> None:
    assert set(status()) == {
        "pk",
        "admitted_total",
        "arrivals_total",
        "rate",
        "operator_rate",
        "enabled",
        "slowed",
        "updated_at",
    }
