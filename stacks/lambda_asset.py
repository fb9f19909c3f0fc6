"""The Lambda code asset: `beekeeper/core/*.py`, `beekeeper/room/**` and `beekeeper/lambdas/**`,
and for the consumer the third-party wheels built for Lambda's platform (stacks/lambda_wheels.py),
unpacked.

The repository keeps `core/`, `room/` and `lambdas/` at its top level while an installed wheel
keeps them under `beekeeper/`; the asset is staged in a fresh directory with the installed layout
either way, so a handler imports `beekeeper.core.settings` in AWS exactly as in tests.
Staging copies file contents only, in sorted order, so the asset hash depends on what the
files say and not on when or where they were checked out.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from beekeeper.core.paths import CORE_DIR, LAMBDAS_DIR, ROOM_DIR
from beekeeper.stacks.lambda_wheels import unpack

# Never shipped: tests and byte-code caches (Lambda compiles on its own).
EXCLUDED_PARTS = frozenset({"tests", "__pycache__"})
EXCLUDED_SUFFIXES = frozenset({".pyc", ".pyo"})

# The packages shipped whole, by their installed name: the room's logic and the handlers.
# core/ ships its modules only (it has no data the functions read).
SHIPPED_PACKAGES: Mapping[str, Path] = {"room": ROOM_DIR, "lambdas": LAMBDAS_DIR}


def _package_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if EXCLUDED_PARTS.intersection(relative.parts) or path.suffix in EXCLUDED_SUFFIXES:
            continue
        if path.is_file():
            yield relative


def asset_files(
    *, core_dir: Path = CORE_DIR, packages: Mapping[str, Path] = SHIPPED_PACKAGES
) -> dict[str, Path]:
    """Asset path (posix, as shipped) -> source file."""
    files = {
        f"beekeeper/core/{path.name}": path
        for path in sorted(core_dir.glob("*.py"))
        if path.is_file()
    }
    for name, folder in packages.items():
        for relative in _package_files(folder):
            files[f"beekeeper/{name}/{relative.as_posix()}"] = folder / relative
    return files


def stage_lambda_source(
    destination: Path,
    *,
    core_dir: Path = CORE_DIR,
    packages: Mapping[str, Path] = SHIPPED_PACKAGES,
    wheels: Sequence[Path] = (),
) -> Path:
    """Copy the asset's files into the empty folder `destination`, and unpack `wheels` beside
    them; returns it."""
    if any(destination.iterdir()):
        raise ValueError(f"{destination} must be empty to stage the Lambda asset")
    # Wheels first: none may put a file where the room's own code goes.
    written = unpack(wheels, destination)
    clash = [path for path in written if path.startswith("beekeeper/")]
    if clash:
        raise ValueError(f"a wheel writes into the room's own package: {clash[0]}")
    for shipped, source in asset_files(core_dir=core_dir, packages=packages).items():
        target = destination / shipped
        target.parent.mkdir(parents=True, exist_ok=True)
        # Contents only: no timestamps or permission bits that would vary between checkouts.
        shutil.copyfile(source, target)
    return destination
