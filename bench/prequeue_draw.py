"""Benchmark: a scheduled event's pre-queue and draw in the simulator (real producer, trigger
and consumer code on a simulated clock).

    .venv/bin/python bench/prequeue_draw.py [--quick]

Prints:
1. 100,000 visitors pre-queued before the start, admitted at 30,000/min: admitted per minute,
   every full minute exact, lost, admitted twice, still waiting, Kendall's tau between arrival
   and admission order, and the run's wall-clock time;
2. fairness: 5,000 pre-queued over several seeds, tau and tau in standard deviations of a
   uniformly random order (the issue's bar: |tau| <= 0.05);
3. later arrivals behind the pre-queue, with and without every fault: exceptions (pre-queue
   visitors admitted after a later arrival) against 0.1% of the pre-queue.
"""

from __future__ import annotations

import argparse
import math
import time

from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room


def tau_sd(n: int) -> float:
    return math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="20,000 instead of 100,000")
    quick = parser.parse_args().quick
    size, rate = (20_000, 6_000) if quick else (100_000, 30_000)

    started = time.perf_counter()
    big = simulate(
        simulated_room(rate=rate, join_work=0),
        Crowd(
            visitors=size,
            arrival=Arrival.parse("uniform:1"),
            minutes=math.ceil(size / rate) + 2,
            seed=1,
            starts_at_minute=1,
        ),
    )
    seconds = time.perf_counter() - started
    print(f"1. {size:,} pre-queued, {rate:,}/min from the start")
    print(f"   admitted per minute {big.admitted_per_minute}; every full minute exact: {big.exact}")
    print(
        f"   lost {big.lost}, admitted twice {big.admitted_twice}, still waiting "
        f"{big.still_waiting}; tau {big.prequeue_order_tau}; run took {seconds:.1f} s"
    )

    print("2. fairness, 5,000 pre-queued")
    for seed in range(1, 4 if quick else 11):
        result = simulate(
            simulated_room(rate=5000, join_work=0),
            Crowd(
                visitors=5000,
                arrival=Arrival.parse("uniform:1"),
                minutes=3,
                seed=seed,
                starts_at_minute=1,
            ),
        )
        tau = result.prequeue_order_tau or 0.0
        print(f"   seed {seed}: tau {tau:+.4f} ({tau / tau_sd(5000):+.2f} sd)")

    print("3. later arrivals behind the pre-queue (1,000/min, 5,000 over 6 minutes, start at 3)")
    for faults in ("", ",".join(FAULT_NAMES)):
        result = simulate(
            simulated_room(rate=1000, join_work=0),
            Crowd(
                visitors=5000,
                arrival=Arrival.parse("uniform:6"),
                minutes=10,
                faults=Faults.parse(faults),
                seed=7,
                starts_at_minute=3,
            ),
        )
        print(
            f"   faults {faults or 'none'}: pre-queue {result.prequeue_visitors:,}, exceptions "
            f"{result.prequeue_exceptions} (allowed {result.prequeue_visitors // 1000}), "
            f"exact {result.exact}, lost {result.lost}, twice {result.admitted_twice}"
        )


if __name__ == "__main__":
    main()
