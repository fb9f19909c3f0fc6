"""moto's CloudWatch, taught the statistics it lacks: percentiles (`p50`) and percentile ranks
(`PR(:60)`).

moto 5 computes Sum, SampleCount, Average, Minimum and Maximum; asked for a percentile its
GetMetricData fails while writing the answer. CloudWatch computes both from the raw values
("CloudWatch statistics definitions", Amazon CloudWatch User Guide), which moto keeps. This
fixture gives moto's statistics the store's definitions (store/cloudwatch.py), which
tests/unit/test_store_cloudwatch.py holds to CloudWatch's with known inputs; everything else
stays moto's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from beekeeper.store.cloudwatch import parse_statistic


@pytest.fixture
def moto_percentiles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from moto.cloudwatch import models

    own = models.Statistics.get_statistics_for_type

    def with_percentiles(self: Any, stat: str) -> Any:
        value = own(self, stat)
        if value is not None or stat in ("Sum", "SampleCount", "Average", "Minimum", "Maximum"):
            return value
        weighted = [(float(v), 1.0) for v in self.metric_single_values_list]
        return parse_statistic(stat).of(weighted)

    monkeypatch.setattr(models.Statistics, "get_statistics_for_type", with_percentiles)
    yield
