"""The repository's top-level packages (each installed as `beekeeper.<name>`, pyproject.toml),
for the tests that read every module's source."""

from __future__ import annotations

SOURCE_PACKAGES = (
    "core",
    "cli",
    "stacks",
    "room",
    "lambdas",
    "vtl",
    "waiting_room_site",
    "simulator",
    "store",
    "local",
    "apigateway",
    "charts",
)
