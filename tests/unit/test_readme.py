"""README.md is read in minutes: at most 200 lines, and its table of the shop owner's commands
names every command the CLI has (cli/main.py, COMMANDS), so a new command gets its line."""

from __future__ import annotations

import re
from pathlib import Path

from beekeeper.cli.main import COMMANDS

README = Path(__file__).resolve().parents[2] / "README.md"
MOST_LINES = 200


def command_rows() -> list[str]:
    """The first word after `beekeeper` in each table row of the README that starts with one."""
    text = README.read_text(encoding="utf-8")
    return re.findall(r"^\| `beekeeper ([a-z-]+)[ `]", text, flags=re.MULTILINE)


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MOST_LINES, f"README.md has {len(lines)} lines; at most {MOST_LINES}"


def test_the_readme_names_every_command_once() -> None:
    named = command_rows()
    assert sorted(set(named)) == sorted(COMMANDS)
    assert len(named) == len(set(named)), "a command has two rows"
