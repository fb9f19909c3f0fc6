"""The consumers' Wait metric is the wait visitors had: the simulator's own measurement of a run
(join to admission, on the simulated clock) against the EMF lines the real code wrote in it."""

from __future__ import annotations

import json
from collections.abc import Callable

from beekeeper.core import telemetry
from beekeeper.room.emf import MinuteMetrics
from beekeeper.simulator import measure
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room


def test_the_wait_metric_holds_every_admitted_visitors_wait() -> None:
    lines: list[str] = []

    def sink(clock: Callable[[], float]) -> MinuteMetrics:
        return MinuteMetrics("simulated", clock=clock, write=lines.append)

    result = simulate(
        simulated_room(rate=120, join_work=0),
        Crowd(visitors=900, arrival=Arrival.parse("uniform:4"), minutes=10, seed=3),
        metrics=sink,
    )
    documents = [json.loads(line) for line in lines]
    waits = sorted(w for d in documents for w in d.get(telemetry.WAIT.name, []))
    arrivals = sum(d.get(telemetry.ARRIVALS.name, 0) for d in documents)
    admitted = sum(d.get(telemetry.ADMITTED.name, 0) for d in documents)
    assert arrivals == result.visitors == 900
    assert admitted == sum(result.admitted_per_minute) == len(waits) == 900
    # Arrays of at most 100 values, as EMF allows.
    assert max(len(d.get(telemetry.WAIT.name, [])) for d in documents) == 100
    # The line built up (900 in 4 minutes at 120 a minute): waits from seconds to minutes.
    assert waits[0] < 2 and waits[-1] > 200
    assert result.wait_seconds_max is not None
    assert abs(waits[-1] - result.wait_seconds_max) < 0.5
    for fraction, measured in ((0.5, result.wait_seconds_p50), (0.9, result.wait_seconds_p90),
                               (0.99, result.wait_seconds_p99)):  # fmt: skip
        emitted = measure.percentile(waits, fraction)
        assert emitted is not None and measured is not None
        # The message's SentTimestamp is whole milliseconds, and the consumer takes the time
        # as its write returns: the same waits, to well under a second.
        assert abs(emitted - measured) < 0.5
