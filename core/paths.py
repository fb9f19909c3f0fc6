"""Where the package's data folders are, in the repository and in an installed wheel alike.

Every folder of the repository is mapped under the `beekeeper` namespace when installed
(pyproject.toml), so the folders stay siblings of this package's folder in both cases.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent

LAMBDAS_DIR = PACKAGE_ROOT / "lambdas"
ROOM_DIR = PACKAGE_ROOT / "room"
VTL_DIR = PACKAGE_ROOT / "vtl"
SITE_DIR = PACKAGE_ROOT / "waiting_room_site"
STACKS_DIR = PACKAGE_ROOT / "stacks"
CORE_DIR = PACKAGE_ROOT / "core"
