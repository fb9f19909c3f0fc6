"""A command's flags become a room's settings in one function (cli/options.py
`settings_from_flags`); what is not a setting (local mode's ports, the simulated crowd) is
kept apart from the settings, never a copy of some of them."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from beekeeper.cli.errors import UserError
from beekeeper.cli.options import given_settings, settings_from_flags
from beekeeper.core.settings import SETTINGS, RoomSettings
from beekeeper.local.room import LocalOptions
from beekeeper.simulator.crowd import Crowd, Visits
from beekeeper.simulator.run import simulate

ROOT = Path(__file__).resolve().parents[2]
ROOM = RoomSettings(
    name="sale", display_name="Sale", region="eu-west-1", origin="https://s.example", rate=60
)


def test_flags_given_are_laid_over_a_room_file_and_the_others_keep_it() -> None:
    flags = {"rate": 900, "max_inside": None, "port": 8080, "join_work": 0}
    assert given_settings(flags) == {"rate": 900, "join_work": 0}
    settings = settings_from_flags(ROOM.replace(max_inside=5), flags)
    assert (settings.rate, settings.max_inside, settings.join_work) == (900, 5, 0)
    assert settings_from_flags(ROOM, {"rate": None}) is ROOM


def test_flags_complete_a_room_described_by_flags_alone() -> None:
    base = {"name": "local", "display_name": "Local", "region": "us-east-1", "rate": 10}
    settings = settings_from_flags(base, {"origin": "http://localhost:3000/", "rate": 60})
    assert (settings.origin, settings.rate, settings.join_work) == (
        "http://localhost:3000/",
        60,
        SETTINGS["join_work"].default,
    )
    with pytest.raises(UserError, match="origin: None is not allowed"):
        settings_from_flags(base, {"origin": None})
    with pytest.raises(UserError, match="a certificate is for a domain"):
        settings_from_flags(
            ROOM,
            {"certificate_arn": "arn:aws:acm:us-east-1:123456789012:certificate/" + "0" * 36},
        )


def test_local_options_and_the_simulated_crowd_hold_no_setting() -> None:
    for kept_apart in (LocalOptions, Crowd, Visits):
        fields = {f.name for f in dataclasses.fields(kept_apart)}
        assert fields & set(SETTINGS) == set(), kept_apart
    parameters = set(inspect.signature(simulate).parameters)
    assert parameters & set(SETTINGS) == set() and {"settings", "crowd"} <= parameters


def _builds_settings(source: str) -> list[int]:
    """Lines that build a RoomSettings (its constructor, from_mapping, or replace(**values))."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        spread = any(keyword.arg is None for keyword in node.keywords)
        if name in ("RoomSettings", "from_mapping") or (name == "replace" and spread):
            found.append(node.lineno)
    return found


def test_the_commands_build_a_room_from_flags_in_one_place() -> None:
    # The one function, and the records a room is read back from.
    allowed = {Path("cli/options.py"), Path("cli/rooms.py")}
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "cli").rglob("*.py"))
        if path.relative_to(ROOT) not in allowed
        for line in _builds_settings(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "lay flags over a room with cli.options.settings_from_flags"
