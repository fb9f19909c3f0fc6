"""The operator's live switches: `off`, `on`, `rate`, `capacity`, `schedule`, `hold`, `resume`
and `close` on a deployed (or local) room.

The items themselves belong to `beekeeper.room.room_state`, which the Lambdas use too, so a
config item or a status copy has one shape wherever it is written (docs/data-model.md). Each
switch writes the `config` item (bumping `version`, which the producer, trigger and governor
compare with what they cached), then republishes the ten `status#<d>` copies from the config it
wrote and the counters, and publishes the change to the room's channel, so waiting visitors'
pages show it within seconds (room/push.py; on their next fetch of the shared state without it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Unpack

from beekeeper.cli.errors import AwsError
from beekeeper.core.datamodel import DRAW_KEY
from beekeeper.core.retry import Pauses
from beekeeper.core.serving import HOLD_NOTICE_SECONDS
from beekeeper.core.settings import RoomSettings
from beekeeper.room import room_state
from beekeeper.room.pacing import MINUTE_SECONDS
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import RoomConfig


class RoomControl:
    """Switches a deployed room on or off and sets its rate, live."""

    def __init__(
        self,
        dynamodb: Any,
        table_name: str,
        settings: RoomSettings,
        *,
        clock: Callable[[], float],
        pauses: Pauses,
        minute_seconds: float = MINUTE_SECONDS,
        push: StatePush | None = None,
    ) -> None:
        """`push`: the room's channel (None: a room without one, whose pages poll)."""
        self._db = dynamodb
        self._table = table_name
        self._settings = settings
        self._clock = clock
        self._pauses = pauses
        self._minute_seconds = minute_seconds
        self._push = push

    @property
    def settings(self) -> RoomSettings:
        return self._settings

    def read_config(self) -> RoomConfig:
        return room_state.read_config(self._db, self._table, self._settings)

    def set_enabled(self, enabled: bool) -> RoomConfig:
        return self._write(enabled=enabled)

    def set_rate(self, rate: int) -> RoomConfig:
        """The operator's new rate; the governor starts over from it (a fresh baseline)."""
        config = self._write(operator_rate=rate)
        room_state.reset_governor(self._db, self._table)
        return config

    def set_capacity(self, max_inside: int) -> RoomConfig:
        """The most visitors inside at once (0: no cap); the consumers follow within seconds."""
        return self._write(max_inside=max_inside)

    def set_schedule(self, starts_at: int) -> RoomConfig:
        """A scheduled start (epoch s; 0 clears it); producers and consumers follow within
        seconds, the trigger draws at the first minute at or after it."""
        return self._write(starts_at=starts_at)

    def hold(self) -> RoomConfig:
        """Admit nobody from HOLD_NOTICE_SECONDS on (or from the hold already set) and keep
        every place; new visitors still join. The moment is announced to every waiting page
        first (core/serving.py), so each stops its line where the consumers stop."""
        config = self.read_config()
        if config.held:
            return self._write(held=True, held_from=config.held_from)
        held_from = math.ceil(self._clock() + HOLD_NOTICE_SECONDS)
        return self._write(held=True, held_from=held_from)

    def resume(self) -> RoomConfig:
        """Carry on admitting after a hold (one still announced is called off) or a close."""
        return self._write(held=False, held_from=0, closed=False, message="")

    def close(self, message: str) -> RoomConfig:
        """End the event: nobody more is admitted or joins; the line is told `message`."""
        return self._write(closed=True, message=message)

    def draw(self) -> room_state.DrawStatus:
        """The draw's state, commitment and (once drawn) secret."""
        item = self._db.get_item(
            TableName=self._table, Key=room_state.key(DRAW_KEY), ConsistentRead=True
        ).get("Item")
        return room_state.DrawStatus.from_item(item)

    def _write(self, **change: Unpack[room_state.ConfigChange]) -> RoomConfig:
        now = self._clock()
        config = room_state.write_config(self._db, self._table, self._settings, now=now, **change)
        try:
            room_state.refresh_status(
                self._db,
                self._table,
                self._settings,
                now=now,
                pauses=self._pauses,
                config=config,
                minute_seconds=self._minute_seconds,
                push=self._push,
            )
        except room_state.Unprocessed as error:
            raise AwsError(
                f"The room's setting is saved, but its status copies were not updated ({error}: "
                "the table is throttled). Waiting pages catch up within a minute; or wait a "
                "moment and run the command again."
            ) from error
        return config
