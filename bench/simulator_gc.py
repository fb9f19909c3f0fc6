"""Benchmark: what the garbage collector costs a simulation, at Python's default threshold and
at the simulator's (simulator/run.py, GC_YOUNG_THRESHOLD).

    .venv/bin/python bench/simulator_gc.py [--repeats N]

For each of three runs the tests make (the documented 12,000 visitors at 1,000/min with every
page simulated; 30,000 pre-queued at 30,000/min; a burst of 5,000 at 3,300/min with every
fault), runs it at both thresholds, alternating, N times each (3 by default) and prints the
median CPU seconds of each and their ratio. Both measure the same code in the same process,
so the ratio holds on a busy machine where the seconds do not.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

from beekeeper.simulator import run
from beekeeper.simulator.faults import Faults
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room

PYTHON_DEFAULT = 700  # gc.get_threshold()[0] of a fresh interpreter

RUNS: dict[str, Callable[[], object]] = {
    "12,000 at 1,000/min, pages": lambda: simulate(
        simulated_room(rate=1000),
        Crowd(visitors=12_000, arrival=Arrival.parse("uniform:6"), minutes=14, seed=5),
    ),
    "30,000 pre-queued at 30,000/min": lambda: simulate(
        simulated_room(rate=30_000, join_work=0),
        Crowd(
            visitors=30_000,
            arrival=Arrival.parse("uniform:1"),
            minutes=3,
            seed=5,
            starts_at_minute=1,
        ),
    ),
    "5,000 burst at 3,300/min, every fault": lambda: simulate(
        simulated_room(rate=3300, join_work=0),
        Crowd(
            visitors=5000,
            arrival=Arrival.parse("burst"),
            minutes=2,
            faults=Faults.parse("crash,throttle,duplicates,double-trigger"),
            seed=3,
        ),
    ),
}


def cpu_seconds(go: Callable[[], object], young: int) -> float:
    run.GC_YOUNG_THRESHOLD = young
    gc.collect()
    started = time.process_time()
    go()
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    repeats = parser.parse_args().repeats
    simulator_threshold = run.GC_YOUNG_THRESHOLD
    gc.set_threshold(PYTHON_DEFAULT, *gc.get_threshold()[1:])
    print(f"| run | CPU s at {PYTHON_DEFAULT} | CPU s at {simulator_threshold:,} | ratio |")
    print("|---|---:|---:|---:|")
    for name, go in RUNS.items():
        default: list[float] = []
        raised: list[float] = []
        for _ in range(repeats):
            default.append(cpu_seconds(go, PYTHON_DEFAULT))
            raised.append(cpu_seconds(go, simulator_threshold))
        before, after = statistics.median(default), statistics.median(raised)
        print(f"| {name} | {before:.2f} | {after:.2f} | {after / before:.2f} |")


if __name__ == "__main__":
    main()
