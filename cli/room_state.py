"""The operator's live switches: the `config` item, the governor reset, the status copies.

Field names follow docs/data-model.md exactly. `off`, `on` and `rate` write the `config` item
(bumping `version`, which the producer and trigger compare with what they cached), and then
update the ten `status#<d>` copies so waiting visitors' pages show the change on their next poll
instead of after the next publish. A status copy that does not exist yet is created whole, with
the totals taken from the counters, never a half item the /polling template can not read.

The pipeline's `lambdas/room_state.py` holds the same reads and writes for the Lambdas; once
both are merged the CLI can call its config and status helpers instead of these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beekeeper.cli.table import batch_get, from_item, get_item, key, to_attribute
from beekeeper.core.datamodel import (
    ADMITTED_COUNTER_KEY,
    CONFIG_KEY,
    GOVERNOR_KEY,
    PARTITION_KEY,
    STATUS_COPIES,
    arrival_shard_key,
    status_key,
)
from beekeeper.core.settings import RoomSettings

GOVERNOR_BASELINE_STATE = "baseline"


@dataclass(frozen=True)
class LiveConfig:
    """The room's live state; before the first write it is on at the settings' rate."""

    enabled: bool
    operator_rate: int
    rate: int
    version: int
    updated_at: int | None

    @property
    def slowed(self) -> bool:
        return self.rate < self.operator_rate

    @classmethod
    def from_item(cls, item: dict[str, Any] | None, settings: RoomSettings) -> LiveConfig:
        item = item or {}
        operator_rate = int(item.get("operator_rate", settings.rate))
        return cls(
            enabled=bool(item.get("enabled", True)),
            operator_rate=operator_rate,
            rate=int(item.get("rate", operator_rate)),
            version=int(item.get("version", 0)),
            updated_at=int(item["updated_at"]) if "updated_at" in item else None,
        )


class RoomControl:
    """Switches a deployed room on or off and sets its rate, live."""

    def __init__(
        self,
        dynamodb: Any,
        table_name: str,
        settings: RoomSettings,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self._db = dynamodb
        self._table = table_name
        self._settings = settings
        self._clock = clock
        self._sleep = sleep

    @property
    def settings(self) -> RoomSettings:
        return self._settings

    def read_config(self) -> LiveConfig:
        return LiveConfig.from_item(get_item(self._db, self._table, CONFIG_KEY), self._settings)

    def set_enabled(self, enabled: bool) -> LiveConfig:
        now = int(self._clock())
        config = self._update_config(
            "SET enabled = :enabled, updated_at = :now, "
            "operator_rate = if_not_exists(operator_rate, :settings_rate), "
            "rate = if_not_exists(rate, :settings_rate) ADD version :one",
            {":enabled": enabled, ":now": now, ":settings_rate": self._settings.rate, ":one": 1},
        )
        self._update_status_copies(config, now)
        return config

    def set_rate(self, rate: int) -> LiveConfig:
        """The operator's new rate; the governor starts over from it (a fresh baseline)."""
        now = int(self._clock())
        config = self._update_config(
            "SET operator_rate = :rate, rate = :rate, updated_at = :now, "
            "enabled = if_not_exists(enabled, :on) ADD version :one",
            {":rate": rate, ":now": now, ":on": True, ":one": 1},
        )
        self._db.put_item(
            TableName=self._table,
            Item={
                PARTITION_KEY: {"S": GOVERNOR_KEY},
                "state": {"S": GOVERNOR_BASELINE_STATE},
                "updated_at": to_attribute(now),
            },
        )
        self._update_status_copies(config, now)
        return config

    def _update_config(self, expression: str, values: dict[str, Any]) -> LiveConfig:
        response = self._db.update_item(
            TableName=self._table,
            Key=key(CONFIG_KEY),
            UpdateExpression=expression,
            ExpressionAttributeValues={name: to_attribute(v) for name, v in values.items()},
            ReturnValues="ALL_NEW",
        )
        return LiveConfig.from_item(from_item(response["Attributes"]), self._settings)

    def _update_status_copies(self, config: LiveConfig, now: int) -> None:
        arrivals, admitted = self._counter_totals()
        values = {
            ":enabled": config.enabled,
            ":rate": config.rate,
            ":operator_rate": config.operator_rate,
            ":slowed": config.slowed,
            ":now": now,
            ":arrivals": arrivals,
            ":admitted": admitted,
        }
        for copy in range(STATUS_COPIES):
            self._db.update_item(
                TableName=self._table,
                Key=key(status_key(copy)),
                UpdateExpression=(
                    "SET enabled = :enabled, rate = :rate, operator_rate = :operator_rate, "
                    "slowed = :slowed, updated_at = :now, "
                    "arrivals_total = if_not_exists(arrivals_total, :arrivals), "
                    "admitted_total = if_not_exists(admitted_total, :admitted)"
                ),
                ExpressionAttributeValues={n: to_attribute(v) for n, v in values.items()},
            )

    def _counter_totals(self) -> tuple[int, int]:
        return counter_totals(self._db, self._table, self._settings, self._sleep)


def counter_keys(settings: RoomSettings) -> list[str]:
    return [arrival_shard_key(k) for k in range(settings.arrival_shards)] + [ADMITTED_COUNTER_KEY]


def totals_from(items: dict[str, dict[str, Any]], settings: RoomSettings) -> tuple[int, int]:
    """(arrivals, admitted) so far, summed over the arrival shards."""
    arrivals = sum(
        int(items.get(arrival_shard_key(k), {}).get("n", 0)) for k in range(settings.arrival_shards)
    )
    admitted = int(items.get(ADMITTED_COUNTER_KEY, {}).get("n", 0))
    return arrivals, admitted


def counter_totals(
    dynamodb: Any, table: str, settings: RoomSettings, sleep: Callable[[float], None]
) -> tuple[int, int]:
    return totals_from(batch_get(dynamodb, table, counter_keys(settings), sleep), settings)
