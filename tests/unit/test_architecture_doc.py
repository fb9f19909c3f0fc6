"""docs/architecture.md names every module of the source packages, in its folder's row.

A module is named by its file name in backticks (`pacing.py`) in the row of the table that
describes its top-level folder; a module in a subfolder is named with the subfolder
(`commands/`, `velocity/`), whose modules its own page describes.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.packages import SOURCE_PACKAGES

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"


def folder_rows() -> dict[str, str]:
    """Each table row of the doc, by the folder it describes."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\| `([a-z_]+)/` \|(.*)\|$", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def unnamed_modules() -> list[str]:
    rows = folder_rows()
    missing = []
    for package in SOURCE_PACKAGES:
        row = rows.get(package, "")
        for module in sorted((REPO / package).rglob("*.py")):
            if module.name == "__init__.py":
                continue
            inside = module.relative_to(REPO / package)
            name = f"`{inside.parts[0]}/`" if len(inside.parts) > 1 else f"`{module.name}`"
            if name not in row:
                missing.append(f"{package}/{inside.as_posix()}")
    return missing


def test_every_package_has_a_row() -> None:
    assert set(SOURCE_PACKAGES) <= set(folder_rows())


def test_every_module_is_named_in_its_folders_row() -> None:
    assert unnamed_modules() == []
