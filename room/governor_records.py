"""What the governor keeps between runs: its state (`governor` item) and its recent decisions
(`governor-log` item), as DynamoDB attributes. docs/data-model.md describes both items.

Values are rounded as they are stored (0.1 ms, the spread to 4 places), so what a run reads
back is exactly what the previous run decided.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from beekeeper.core.datamodel import GOVERNOR_KEY, GOVERNOR_LOG_KEY
from beekeeper.room.governor_stats import Baseline
from beekeeper.room.room_state import RoomConfig, key, number, read_number

RECENT_DECISIONS = 10  # kept in the governor-log item for `beekeeper status`


@dataclass(frozen=True)
class GovernorState:
    state: str  # "baseline" (none yet), "passing", "throttled"
    config_version: int
    operator_rate: int
    baseline: Baseline | None = None
    checks_since_baseline: int = 0
    pool: tuple[tuple[float, ...], ...] = ()  # healthy checks' latencies toward a baseline
    slow_streak: int = 0  # slow checks in a row, this one included

    @classmethod
    def fresh(cls, config: RoomConfig) -> GovernorState:
        return cls("baseline", config.version, config.operator_rate)

    def to_item(self, now: float) -> dict[str, Any]:
        item: dict[str, Any] = {
            **key(GOVERNOR_KEY),
            "state": {"S": self.state},
            "config_version": number(self.config_version),
            "operator_rate": number(self.operator_rate),
            "checks_since_baseline": number(self.checks_since_baseline),
            "slow_streak": number(self.slow_streak),
            "updated_at": number(now),
        }
        if self.pool:
            item["pool"] = {"S": "|".join(" ".join(f"{ms:.1f}" for ms in c) for c in self.pool)}
        if self.baseline is not None:
            item["baseline_median_ms"] = _decimal(self.baseline.median_ms, 1)
            item["baseline_spread"] = _decimal(self.baseline.spread, 4)
            item["baseline_samples"] = number(self.baseline.samples)
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any] | None) -> GovernorState | None:
        if not item:
            return None
        baseline = None
        median = _read_float(item, "baseline_median_ms")
        if median is not None and read_number(item, "baseline_samples") > 0:
            baseline = Baseline(
                median,
                _read_float(item, "baseline_spread") or 0.0,
                read_number(item, "baseline_samples"),
            )
        pool_text = item.get("pool", {}).get("S", "")
        return cls(
            state=item.get("state", {}).get("S", "baseline"),
            config_version=read_number(item, "config_version", -1),
            operator_rate=read_number(item, "operator_rate", -1),
            baseline=baseline,
            checks_since_baseline=read_number(item, "checks_since_baseline"),
            pool=tuple(
                tuple(float(ms) for ms in check.split()) for check in pool_text.split("|") if check
            ),
            slow_streak=read_number(item, "slow_streak"),
        )


@dataclass(frozen=True)
class Decision:
    """What one check decided and why: logged, kept for `beekeeper status`, and the metrics."""

    at: float
    decision: str
    reason: str
    rate_before: int
    rate_after: int
    samples: int
    errors: int
    median_ms: float | None
    p90_ms: float | None
    mean_ms: float | None
    slow_above_ms: float | None  # the median above which the check was slow; None: no baseline

    def describe(self) -> str:
        """One line: the decision, the rate, the reason and the figures it was judged on."""
        rate = (
            f"{self.rate_before:,}"
            if self.rate_after == self.rate_before
            else f"{self.rate_before:,} -> {self.rate_after:,}"
        )
        figures = [f"errors {self.errors}/{self.samples}"]
        if self.median_ms is not None and self.p90_ms is not None:
            figures.append(f"median {ms_text(self.median_ms)}")
            figures.append(f"p90 {ms_text(self.p90_ms)}")
        if self.slow_above_ms is not None:
            figures.append(f"slow above {ms_text(self.slow_above_ms)}")
        return f"{self.decision}, rate {rate}: {self.reason} ({', '.join(figures)})"

    def to_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "minute": int(self.at // 60)}

    def to_attribute(self) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "at": _decimal(self.at, 3),
            "decision": {"S": self.decision},
            "reason": {"S": self.reason},
            "rate_before": number(self.rate_before),
            "rate_after": number(self.rate_after),
            "samples": number(self.samples),
            "errors": number(self.errors),
        }
        for name in ("median_ms", "p90_ms", "mean_ms", "slow_above_ms"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = _decimal(value, 1)
        return {"M": fields}

    @classmethod
    def from_attribute(cls, attribute: Mapping[str, Any]) -> Decision:
        fields = attribute.get("M", {})
        return cls(
            at=_read_float(fields, "at") or 0.0,
            decision=fields.get("decision", {}).get("S", "?"),
            reason=fields.get("reason", {}).get("S", ""),
            rate_before=read_number(fields, "rate_before"),
            rate_after=read_number(fields, "rate_after"),
            samples=read_number(fields, "samples"),
            errors=read_number(fields, "errors"),
            median_ms=_read_float(fields, "median_ms"),
            p90_ms=_read_float(fields, "p90_ms"),
            mean_ms=_read_float(fields, "mean_ms"),
            slow_above_ms=_read_float(fields, "slow_above_ms"),
        )


def recent_decisions(item: Mapping[str, Any] | None) -> list[Decision]:
    """The decisions kept in the governor-log item, oldest first."""
    if not item:
        return []
    return [Decision.from_attribute(a) for a in item.get("recent", {}).get("L", [])]


def log_item(decisions: Sequence[Decision]) -> dict[str, Any]:
    kept = decisions[-RECENT_DECISIONS:]
    return {**key(GOVERNOR_LOG_KEY), "recent": {"L": [d.to_attribute() for d in kept]}}


def _decimal(value: float, places: int) -> dict[str, str]:
    return {"N": f"{value:.{places}f}"}


def _read_float(item: Mapping[str, Any], name: str) -> float | None:
    try:
        return float(item[name]["N"])
    except (KeyError, TypeError, ValueError):
        return None


def tenth(value: float | None) -> float | None:
    """Rounded to 0.1 ms, as the governor-log item stores it."""
    return None if value is None else round(value, 1)


def ms_text(value: float) -> str:
    return f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"
