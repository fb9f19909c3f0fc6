"""The room the page tests render (unit and browser alike), changed field by field."""

from __future__ import annotations

from beekeeper.core.settings import RoomSettings


def sample_room(**changes: object) -> RoomSettings:
    base = RoomSettings(
        name="spring-sale",
        display_name="Spring Sale",
        region="us-east-1",
        origin="https://shop.example.com",
        rate=100,
    )
    return base.replace(**changes)
