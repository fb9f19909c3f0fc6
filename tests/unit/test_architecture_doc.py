"""docs/architecture.md says how the source packages are laid out, as the code has it.

- Its picture's arrows are the imports between packages (`beekeeper.<package>`, anywhere in a
  module, a function's own imports included), each drawn once, and `core/`, undrawn, is
  imported by every other package: an import added or dropped fails here until the picture
  says so.
- Each package has a section (`### \\`room/\\``) that names every module of the package: by its
  file name in backticks (`pacing.py`), or a module in a subfolder by the subfolder
  (`commands/`, `velocity/`), whose modules its own page describes.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.packages import SOURCE_PACKAGES

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "architecture.md"
GROUND = "core"
# The picture's node names for packages whose folder name is long.
NODES = {"site": "waiting_room_site"}


def package_sections() -> dict[str, str]:
    """Each package's section of the doc, by the package it describes."""
    parts = re.split(r"^### `([a-z_]+)/`\s*$", DOC.read_text(encoding="utf-8"), flags=re.M)
    ends = re.compile(r"^##", flags=re.M)  # the next heading, of any depth
    return {
        name: ends.split(text, 1)[0] for name, text in zip(parts[1::2], parts[2::2], strict=True)
    }


def drawn_imports() -> list[tuple[str, str]]:
    """The picture's arrows, as (importer, imported) packages."""
    picture = DOC.read_text(encoding="utf-8").split("```mermaid", 1)[1].split("```", 1)[0]
    arrows = re.findall(r"^\s*([a-z_]+) --> ([a-z_]+)\s*$", picture, flags=re.M)
    return [(NODES.get(a, a), NODES.get(b, b)) for a, b in arrows]


def package_imports() -> set[tuple[str, str]]:
    """(importer, imported) for every import of one source package by another."""
    found = set()
    for package in SOURCE_PACKAGES:
        for module in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
                names = (
                    [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else []
                )
                for name in names:
                    parts = name.split(".")
                    if parts[0] == "beekeeper" and len(parts) > 1 and parts[1] != package:
                        found.add((package, parts[1]))
    return found


def unnamed_modules() -> list[str]:
    sections = package_sections()
    missing = []
    for package in SOURCE_PACKAGES:
        text = sections.get(package, "")
        for module in sorted((REPO / package).rglob("*.py")):
            if module.name == "__init__.py":
                continue
            inside = module.relative_to(REPO / package)
            name = f"`{inside.parts[0]}/`" if len(inside.parts) > 1 else f"`{module.name}`"
            if name not in text:
                missing.append(f"{package}/{inside.as_posix()}")
    return missing


def test_every_package_has_a_section() -> None:
    assert sorted(package_sections()) == sorted(SOURCE_PACKAGES)


def test_every_module_is_named_in_its_packages_section() -> None:
    assert unnamed_modules() == []


def test_the_picture_draws_each_import_between_packages_once() -> None:
    drawn = drawn_imports()
    assert len(drawn) == len(set(drawn)), "an arrow is drawn twice"
    imports = package_imports()
    assert set(drawn) == {(a, b) for a, b in imports if b != GROUND}


def test_every_package_imports_the_ground_and_the_ground_imports_none() -> None:
    imports = package_imports()
    assert {a for a, b in imports if b == GROUND} == set(SOURCE_PACKAGES) - {GROUND}
    assert not [b for a, b in imports if a == GROUND]
