"""Which room `cdk synth` builds: the sample, -c room=NAME, or -c room_file=PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from beekeeper.stacks.app import (
    SAMPLE_ROOM,
    RoomChoiceError,
    api_logging_from_context,
    room_from_context,
)


@pytest.fixture
def config_dir(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "rooms").mkdir()
    return {"BEEKEEPER_CONFIG_DIR": str(tmp_path)}


def _write_room(environ: dict[str, str], name: str, text: str) -> Path:
    path = Path(environ["BEEKEEPER_CONFIG_DIR"], "rooms", f"{name}.toml")
    path.write_text(text, encoding="utf-8")
    return path


def test_no_context_builds_the_documented_sample_room() -> None:
    assert room_from_context({}) == SAMPLE_ROOM
    assert SAMPLE_ROOM.name == "sample"
    assert SAMPLE_ROOM.origin == "https://shop.example.com"


def test_room_context_reads_the_clis_room_file(config_dir: dict[str, str]) -> None:
    room = SAMPLE_ROOM.replace(name="spring-sale", rate=1_234)
    _write_room(config_dir, "spring-sale", room.to_toml())
    assert room_from_context({"room": "spring-sale"}, config_dir) == room


def test_room_file_context_reads_any_path(tmp_path: Path) -> None:
    room = SAMPLE_ROOM.replace(name="elsewhere")
    path = tmp_path / "mine.toml"
    path.write_text(room.to_toml(), encoding="utf-8")
    assert room_from_context({"room_file": str(path)}) == room


def test_missing_room_file_says_how_to_make_one(config_dir: dict[str, str]) -> None:
    with pytest.raises(RoomChoiceError) as raised:
        room_from_context({"room": "nope"}, config_dir)
    message = str(raised.value)
    assert "no room file at" in message
    assert "nope.toml" in message
    assert "beekeeper init" in message
    assert "\n" not in message


def test_invalid_room_file_names_the_file_and_the_field(config_dir: dict[str, str]) -> None:
    text = SAMPLE_ROOM.replace(name="bad").to_toml().replace("rate = 600", "rate = 0")
    path = _write_room(config_dir, "bad", text)
    with pytest.raises(RoomChoiceError) as raised:
        room_from_context({"room": "bad"}, config_dir)
    message = str(raised.value)
    assert message.startswith(f"{path}: rate: 0 is not allowed")
    assert "\n" not in message


def test_a_room_name_that_is_a_path_is_refused(config_dir: dict[str, str]) -> None:
    with pytest.raises(RoomChoiceError, match=r"^-c room: name: '\.\./etc' is not allowed"):
        room_from_context({"room": "../etc"}, config_dir)


def test_room_file_and_room_name_must_agree(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_text(SAMPLE_ROOM.replace(name="alpha").to_toml(), encoding="utf-8")
    with pytest.raises(RoomChoiceError, match="name = 'alpha' but -c room=beta"):
        room_from_context({"room_file": str(path), "room": "beta"})


@pytest.mark.parametrize(
    ("given", "expected"),
    [(None, True), (True, True), ("true", True), ("false", False), (False, False), ("off", False)],
)
def test_api_logging_is_on_unless_turned_off(given: object, expected: bool) -> None:
    context = {} if given is None else {"api_logging": given}
    assert api_logging_from_context(context) is expected


def test_api_logging_rejects_anything_else() -> None:
    with pytest.raises(RoomChoiceError, match="use true or false"):
        api_logging_from_context({"api_logging": "maybe"})
