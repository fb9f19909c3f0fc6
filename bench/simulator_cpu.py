"""Benchmark: the CPU a simulation takes, and a digest of what it reported.

    .venv/bin/python bench/simulator_cpu.py [--repeats N] [--runs NAME ...]

For each of the simulations the tests run at the largest sizes (a burst of 100,000 at
100,000/min; 130,000 at 30,000/min with every page simulated; 100,000 pre-queued at
30,000/min; an hour of a capacity room with every fault), runs it N times (1 by default) and
prints its median CPU seconds (time.process_time) and the SHA-256 of its `simulate --json`
answer. Two checkouts compare by running this script each with its own Python, alternately:
the digests must be equal (the same seed gives the same result), and the ratio of the medians
is what one checkout costs against the other.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import time
from collections.abc import Callable

from beekeeper.simulator.faults import Faults
from beekeeper.simulator.result import SimulationResult
from beekeeper.simulator.run import Arrival, Crowd, Visits, simulate, simulated_room

EVERY_FAULT = Faults.parse("crash,throttle,duplicates,double-trigger")

RUNS: dict[str, Callable[[], SimulationResult]] = {
    # The issue-sized burst: the store's writes and the producer's places.
    "burst": lambda: simulate(
        simulated_room(rate=100_000, join_work=0),
        Crowd(
            visitors=102_000,
            arrival=Arrival.parse("burst"),
            minutes=1,
            faults=Faults.parse(""),
            seed=100_000 % 97,
        ),
    ),
    # tests/unit/pipeline/test_pages_simulation.py: every page and its push channel.
    "pages": lambda: simulate(
        simulated_room(rate=30_000, join_work=0),
        Crowd(visitors=130_000, arrival=Arrival.parse("uniform:1"), minutes=5, seed=26),
    ),
    # tests/unit/pipeline/test_prequeue_simulation.py: the draw and the drain.
    "prequeue": lambda: simulate(
        simulated_room(rate=30_000, join_work=0),
        Crowd(
            visitors=100_000,
            arrival=Arrival.parse("uniform:1"),
            minutes=6,
            seed=5,
            starts_at_minute=1,
        ),
    ),
    # bench/capacity_table.py's first shop with every fault: places, sessions, the warden.
    "capacity": lambda: simulate(
        simulated_room(
            rate=600, join_work=0, max_inside=100, session_minutes=5.0, claim_minutes=2.0
        ),
        Crowd(
            visitors=1300,
            arrival=Arrival.parse("uniform:30"),
            minutes=60,
            faults=EVERY_FAULT,
            seed=1,
            visits=Visits(visit_minutes=10.0, abandon=0.2, leave=1.0, leave_line=0.02),
        ),
    ),
}


def measured(go: Callable[[], SimulationResult]) -> tuple[float, str]:
    gc.collect()
    started = time.process_time()
    result = go()
    seconds = time.process_time() - started
    answer = json.dumps(result.to_json(), sort_keys=True).encode()
    return seconds, hashlib.sha256(answer).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--runs", nargs="+", choices=list(RUNS), default=list(RUNS))
    arguments = parser.parse_args()
    print("| run | CPU s (median) | digest of the --json answer |")
    print("|---|---:|---|")
    for name in arguments.runs:
        seconds: list[float] = []
        digests: set[str] = set()
        for _ in range(arguments.repeats):
            spent, digest = measured(RUNS[name])
            seconds.append(spent)
            digests.add(digest)
        print(f"| {name} | {statistics.median(seconds):.2f} | {', '.join(sorted(digests))} |")


if __name__ == "__main__":
    main()
