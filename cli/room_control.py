"""The operator's live switches: `off`, `on`, `rate` and `capacity` on a deployed (or local)
room.

The items themselves belong to `beekeeper.lambdas.room_state`, which the Lambdas use too, so a
config item or a status copy has one shape wherever it is written (docs/data-model.md). Each
switch writes the `config` item (bumping `version`, which the producer, trigger and governor
compare with what they cached), then republishes the ten `status#<d>` copies from the config it
wrote and the counters, so waiting visitors' pages show the change on their next poll.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beekeeper.cli.errors import AwsError
from beekeeper.core.settings import RoomSettings
from beekeeper.lambdas import room_state
from beekeeper.lambdas.room_state import RoomConfig


class RoomControl:
    """Switches a deployed room on or off and sets its rate, live."""

    def __init__(
        self,
        dynamodb: Any,
        table_name: str,
        settings: RoomSettings,
        *,
        clock: Callable[[], float],
    ) -> None:
        self._db = dynamodb
        self._table = table_name
        self._settings = settings
        self._clock = clock

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

    def _write(
        self,
        *,
        enabled: bool | None = None,
        operator_rate: int | None = None,
        max_inside: int | None = None,
    ) -> RoomConfig:
        now = self._clock()
        config = room_state.write_config(
            self._db,
            self._table,
            self._settings,
            now=now,
            enabled=enabled,
            operator_rate=operator_rate,
            max_inside=max_inside,
        )
        try:
            room_state.refresh_status(self._db, self._table, self._settings, now=now, config=config)
        except room_state.Unprocessed as error:
            raise AwsError(
                f"The room's setting is saved, but its status copies were not updated ({error}: "
                "the table is throttled). Waiting pages catch up within a minute; or wait a "
                "moment and run the command again."
            ) from error
        return config
