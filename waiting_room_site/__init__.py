"""The waiting room page's files (package data) and how a room's settings go into them.

`render_page(settings)` is the contract with the stack (which inlines the page in the API) and
local mode (which serves it at /room): it returns the complete page for one room.
"""

from __future__ import annotations

import html
import json

from beekeeper.core.paths import SITE_DIR
from beekeeper.core.settings import RoomSettings


def render_page(settings: RoomSettings) -> str:
    """The room's page: index.html with the room's display name and settings filled in."""
    page = (SITE_DIR / "index.html").read_text(encoding="utf-8")
    room = {"displayName": settings.display_name, "accentColour": settings.accent_colour}
    # "</" is escaped so no setting can close the script element it is embedded in.
    room_json = json.dumps(room).replace("</", "<\\/")
    return page.replace("{{DISPLAY_NAME}}", html.escape(settings.display_name)).replace(
        "{{ROOM_JSON}}", room_json
    )
