"""Presence: the shop's own pages keep a visitor's place while they are open, visible and used.

Capacity mode holds a place until the visitor leaves or their session runs out, a session
after the shop's last /client check. Most visitors never say they are done: they close the
tab. The presence script (`waiting_room_site/presence.js`, served by the room at
`/presence.js`) runs on the shop's pages and sends a heartbeat, `POST /presence?token=`,
when a page loads, every `beat_seconds` while its tab is visible and its visitor uses it, and
once more when the tab is hidden or closed. A heartbeat is the session's UpdateItem
(core/sessions.py) with a shorter hold: the place's deadline becomes now + the grace
(`presence_grace_seconds`). So the place of a closed tab (or one hidden, or idle for
`presence_idle_minutes`) frees a grace after its last heartbeat, while a reload or the next
page of the shop beats again well within it. Each heartbeat writes the visitor's own item
only (one write unit), like a /client check.

A room without presence (grace 0) still answers heartbeats: each holds the place for a
session, as a /client check does, so a shop that only loads the script keeps its visitors'
sessions alive either way.

The warden (room/places.py) must look at a place no later than its deadline. Without
presence a deadline only ever moves later (each write sets now + the session), so the warden
looks at a place when its deadline comes and moves the look on when it was renewed. A
heartbeat can move a deadline earlier (a /client check set now + the session, the next
heartbeat sets now + the grace), but never earlier than now + min(grace, session): with
presence the warden looks at every place at least that often (`look_within`).

Standard library only: it ships in the Lambda asset with the rest of core/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from beekeeper.core.settings import DEFAULT_PRESENCE_IDLE_MINUTES, RoomSettings

# The grace the documentation recommends (and `beekeeper simulate --presence` assumes): a
# reload, a slow next page or a network blip of two heartbeats fits in it.
RECOMMENDED_GRACE_SECONDS = 10
# Heartbeats per hold: a place survives two heartbeats lost in a row (a network blip).
BEATS_PER_HOLD = 3
MIN_BEAT_SECONDS = 1
# The answer's keys the script reads.
PRESENT = "present"
BEAT_SECONDS = "beat_seconds"
IDLE_SECONDS = "idle_seconds"


@dataclass(frozen=True)
class Presence:
    """A room's presence settings, as the heartbeat's templates and the warden take them."""

    grace_seconds: int = 0  # 0: no presence (a heartbeat holds for a session)
    idle_seconds: int = round(DEFAULT_PRESENCE_IDLE_MINUTES * 60)

    @classmethod
    def of(cls, settings: RoomSettings) -> Presence:
        return cls(settings.presence_grace_seconds, settings.presence_idle_seconds)

    def hold_seconds(self, session_seconds: int) -> int:
        """How long a heartbeat holds the place: the grace, or without presence the session."""
        return self.grace_seconds or session_seconds

    def beat_seconds(self, session_seconds: int) -> int:
        """How often the script beats: BEATS_PER_HOLD times per hold."""
        return max(MIN_BEAT_SECONDS, self.hold_seconds(session_seconds) // BEATS_PER_HOLD)

    def look_within(self, session_seconds: int) -> int | None:
        """The longest the warden may leave a place unlooked at (None: until its deadline)."""
        return min(self.grace_seconds, session_seconds) if self.grace_seconds else None

    def answer(self, session_seconds: int) -> dict[str, Any]:
        """The heartbeat's answer while the visitor holds their place."""
        return {
            PRESENT: True,
            BEAT_SECONDS: self.beat_seconds(session_seconds),
            IDLE_SECONDS: self.idle_seconds,
        }

    def template_values(self, session_seconds: int) -> dict[str, str]:
        """The placeholders of the heartbeat's templates (see vtl.template_values)."""
        return {
            "PRESENCE_HOLD_SECONDS": str(self.hold_seconds(session_seconds)),
            "PRESENCE_BEAT_SECONDS": str(self.beat_seconds(session_seconds)),
            "PRESENCE_IDLE_SECONDS": str(self.idle_seconds),
        }


NO_PRESENCE = Presence()


def look_within(settings: RoomSettings) -> int | None:
    """The warden's longest look-away for a room's places (see the module)."""
    return Presence.of(settings).look_within(settings.session_seconds)


__all__ = [
    "BEATS_PER_HOLD",
    "BEAT_SECONDS",
    "IDLE_SECONDS",
    "NO_PRESENCE",
    "PRESENT",
    "RECOMMENDED_GRACE_SECONDS",
    "Presence",
    "look_within",
]
