"""The operator command a running command prints: `beekeeper` only when PATH finds this very
program, else its absolute path (quoted for a shell), else `python -m beekeeper.cli.main`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beekeeper.cli.invocation import operator_command

PYTHON = "/opt/py/bin/python3"


def program(folder: Path) -> Path:
    folder.mkdir(parents=True)
    path = folder / "beekeeper"
    path.write_text("#!/bin/sh\n")
    return path


def test_the_program_path_finds_is_named_by_its_name(tmp_path: Path) -> None:
    venv = program(tmp_path / "repo" / ".venv" / "bin")
    assert operator_command(str(venv), lambda _name: str(venv), PYTHON) == "beekeeper"


def test_a_program_path_does_not_find_is_named_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = program(tmp_path / "my repo" / ".venv" / "bin")
    other = program(tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path / "my repo")  # scripts/local-demo runs .venv/bin/beekeeper here
    relative = os.path.join(".venv", "bin", "beekeeper")
    expected = f"'{venv}'"  # quoted: the folder's name has a space
    assert operator_command(relative, lambda _name: None, PYTHON) == expected
    assert operator_command(relative, lambda _name: str(other), PYTHON) == expected


def test_run_as_a_module_it_says_so() -> None:
    assert (
        operator_command("/repo/cli/main.py", lambda _name: None, PYTHON)
        == "/opt/py/bin/python3 -m beekeeper.cli.main"
    )
