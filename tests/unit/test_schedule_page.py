"""The scheduled event's words: the producer's closed page says what the waiting room page
says, in both languages, and every new page string exists in English and German."""

from __future__ import annotations

import pytest

from beekeeper.room.producer import CLOSED_WORDS, closed_page
from beekeeper.waiting_room_site import load_locales

NEW_KEYS = (
    "prequeueCountdown",
    "prequeueStartsAt",
    "prequeueDraw",
    "prequeueDrawing",
    "countdownDays",
    "pausedText",
    "closedTitle",
    "closedText",
    "announcePrequeue",
    "announcePaused",
)


def strings(language: str) -> dict[str, object]:
    return load_locales()[language]


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_closed_page_and_the_waiting_room_page_say_the_same(language: str) -> None:
    page = strings(language)
    assert CLOSED_WORDS[language] == (page["closedTitle"], page["closedText"])


def test_every_new_string_is_in_english_and_german() -> None:
    english, german = strings("en"), strings("de")
    for key in NEW_KEYS:
        assert key in english and key in german
        assert english[key] != german[key]
    assert set(english) == set(german)


def test_the_closed_page_escapes_the_message_and_follows_the_browsers_language() -> None:
    event = {"httpMethod": "GET", "headers": {"Accept-Language": "de-DE,de;q=0.9"}}
    response = closed_page("Sold out & <b>gone</b>", event)
    assert response["statusCode"] == 200
    assert '<html lang="de">' in response["body"]
    assert "Diese Aktion ist beendet" in response["body"]
    assert "&lt;b&gt;gone&lt;/b&gt;" in response["body"]
    assert "<b>" not in response["body"]
    assert "This event is over" in closed_page("", {"headers": ["not", "a", "map"]})["body"]


@pytest.mark.parametrize(("language", "keep_open"), [("en", "page open"), ("de", "Seite geöffnet")])
def test_the_pre_queue_says_keep_this_page_open_once(language: str, keep_open: str) -> None:
    # The page's standing note (keepPlace) is shown beside the pre-queue's note on the draw.
    page = strings(language)
    assert keep_open in str(page["keepPlace"])
    assert keep_open not in str(page["prequeueDraw"]) and "offen" not in str(page["prequeueDraw"])
