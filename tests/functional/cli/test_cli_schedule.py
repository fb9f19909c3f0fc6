"""`schedule`, `hold`, `resume` and `close` against moto: the config item and the status copies
that /polling reads, and clear sentences for what can not be used."""

from __future__ import annotations

from pathlib import Path

import pytest

from beekeeper.core.datamodel import STATUS_COPIES
from beekeeper.core.schedule import format_starts_at
from tests.support.cli_testkit import NOW, DeployedRoom, Invoke, put_item, read_item

START = "2023-11-15T09:00:00Z"  # about 11 hours after the test clock's NOW
START_EPOCH = 1_700_038_800


def status_copies(room: DeployedRoom) -> list[dict]:
    return [read_item(room.table, f"status#{d}") for d in range(STATUS_COPIES)]  # type: ignore[misc]


def test_schedule_sets_the_start_live_and_tells_the_pages(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    result = invoke("schedule", "sale", "--starts-at", "2023-11-15T10:00:00+01:00")

    assert result.exit_code == 0, result.output
    assert f"starts at {START}" in result.output
    config = read_item(deployed_room.table, "config")
    assert config is not None and config["starts_at"] == START_EPOCH
    for copy in status_copies(deployed_room):
        assert copy["starts_at"] == START_EPOCH
        assert copy["drawn"] is False

    cleared = invoke("schedule", "sale", "--clear")
    assert cleared.exit_code == 0, cleared.output
    assert read_item(deployed_room.table, "config")["starts_at"] == 0  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "sentence"),
    [
        (
            "2024-11-15T00:00:00Z",
            "is more than 365 days ahead: a visitor's place is kept in "
            "their cookie, which browsers keep 400 days at most",
        ),
        (
            "2023-11-14T22:13:59Z",
            "2023-11-14T22:13:59Z has passed (it is 2023-11-14T22:14:00Z "
            "now): give the event's start, ahead of now",
        ),
        ("2020-01-01T09:00:00Z", "has passed"),
        ("tomorrow at nine", "is not a time"),
        ("2023-11-15T09:00:00", "has no time zone"),
        ("", "give a time"),
    ],
)
def test_schedule_refuses_a_time_it_can_not_use_with_a_sentence(
    invoke: Invoke, deployed_room: DeployedRoom, value: str, sentence: str
) -> None:
    result = invoke("schedule", "sale", "--starts-at", value)

    assert result.exit_code == 1
    assert sentence in result.output
    assert "Traceback" not in result.output
    assert read_item(deployed_room.table, "config") is None  # nothing written


def test_schedule_takes_one_of_starts_at_and_clear(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    assert invoke("schedule", "sale").exit_code == 2
    assert invoke("schedule", "sale", "--starts-at", START, "--clear").exit_code == 2


def test_a_year_ahead_is_the_limit_and_now_has_passed(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    limit = int(NOW) + 365 * 24 * 3600

    assert invoke("schedule", "sale", "--starts-at", format_starts_at(limit)).exit_code == 0
    assert invoke("schedule", "sale", "--starts-at", format_starts_at(limit + 1)).exit_code == 1
    assert invoke("schedule", "sale", "--starts-at", format_starts_at(int(NOW) + 1)).exit_code == 0
    assert invoke("schedule", "sale", "--starts-at", format_starts_at(int(NOW))).exit_code == 1


def test_init_refuses_a_start_that_has_passed_or_is_too_far(
    invoke: Invoke, config_dir: Path
) -> None:
    base = ["init", "--yes", "--name", "drop", "--origin", "https://shop.example/", "--rate", "60"]
    for start, sentence in (("2020-01-01T09:00:00Z", "has passed"), ("2030-06-01T09:00:00Z",
                            "is more than 365 days ahead")):  # fmt: skip
        result = invoke(*base, "--starts-at", start)
        assert result.exit_code == 1
        assert f"--starts-at: {start} {sentence}" in result.output
        assert not (config_dir / "rooms" / "drop.toml").exists()
    assert invoke(*base, "--starts-at", START).exit_code == 0


def test_schedule_after_the_draw_says_it_changes_nothing_for_the_line(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    put_item(deployed_room.table, {"pk": "draw", "state": "drawn", "chunks": 1, "ranked": 1})

    result = invoke("schedule", "sale", "--starts-at", START)

    assert result.exit_code == 0, result.output
    assert "drawn already" in result.output


def test_hold_and_resume_flip_the_line_and_keep_the_rate(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    held = invoke("hold", "sale")
    assert held.exit_code == 0, held.output
    assert read_item(deployed_room.table, "config")["held"] is True  # type: ignore[index]
    assert all(copy["held"] is True for copy in status_copies(deployed_room))

    resumed = invoke("resume", "sale")
    assert resumed.exit_code == 0, resumed.output
    config = read_item(deployed_room.table, "config")
    assert config is not None and config["held"] is False and config["rate"] == 600
    assert all("held" not in copy for copy in status_copies(deployed_room))


def test_close_tells_the_line_the_operators_message(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    result = invoke("close", "sale", "--message", "Sold out. Thank you!")

    assert result.exit_code == 0, result.output
    for copy in status_copies(deployed_room):
        assert copy["closed"] is True
        assert copy["message"] == "Sold out. Thank you!"
    reopened = invoke("resume", "sale")
    assert reopened.exit_code == 0
    assert all("closed" not in copy for copy in status_copies(deployed_room))


@pytest.mark.parametrize("message", ['say "hi"', "<b>bold</b>", "a\nb", "x" * 201, "back\\"])
def test_close_refuses_a_message_that_could_break_an_answer_or_a_page(
    invoke: Invoke, deployed_room: DeployedRoom, message: str
) -> None:
    result = invoke("close", "sale", "--message", message)

    assert result.exit_code == 1
    assert "--message: the message must be one line" in result.output
    assert read_item(deployed_room.table, "config") is None


def test_status_shows_the_schedule_the_commitment_then_the_secret_and_a_hold(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    invoke("schedule", "sale", "--starts-at", START)
    put_item(deployed_room.table, {"pk": "draw", "state": "committed", "commitment": "c0ffee"})
    before = invoke("status", "sale")
    assert before.exit_code == 0, before.output
    assert f"Schedule: start {START}; pre-queue open" in before.output
    assert "Draw commitment (SHA-256 of the secret): c0ffee" in before.output

    put_item(
        deployed_room.table,
        {"pk": "draw", "state": "drawn", "size": 1234, "chunks": 62, "ranked": 62,
         "commitment": "c0ffee", "secret": "5ec2e7"},
    )  # fmt: skip
    invoke("hold", "sale")
    after = invoke("status", "sale")
    assert "Room sale (eu-west-1): HELD" in after.output
    assert "1,234 pre-queue visitors drawn" in after.output
    assert "Draw secret (published; its SHA-256 is the commitment): 5ec2e7" in after.output
