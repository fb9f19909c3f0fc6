"""Benchmark: what a line of millions sends the origin (API Gateway) and the edge (CloudFront).

    .venv/bin/python bench/edge_load.py [--quick | --small] [--faults] [--join-work MS] [--json]

Runs `beekeeper simulate` (simulator/run.py: the real producer, trigger and consumers, and
every visitor's page by the page's own rule, simulator/pages.py) at 30,000/min with 130,000
visitors arriving over the first minute (100,000 waiting at the longest) and, unless --quick,
at 300,000/min with 1,300,000 (1,000,000 waiting); with --small instead at 600/min with
2,000 and 3,000/min with 10,000, the lines where the margin is longest. Reported per run:
the origin's requests (mean and busiest second; against the joins and admissions of the same
minute at the worst minute, over the run, and at the busiest second), the edge's busiest
second, the pages' own /polling per admission, how soon a page notices its admission, how far
the places the pages showed were from the truth (percentiles over the sampled page-moments), the
model's figure (core/polling_load.py, what the stack sizes its throttle with) and what the
poll rule alone would cost the same line without the edge (every page polling /polling as its
answer asks). Also the run's wall time and the process's peak memory.

Visitors do the work a place costs first, at the room's default (`join_work`, 1,000 ms of a
typical phone): the bare marketing link's shared challenge from the edge, then the join;
`--join-work 0` for a room without it.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from typing import Any

from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS
from beekeeper.core.polling_load import origin_requests_per_second, standing_polls_per_second
from beekeeper.core.serving import margin_seconds
from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.pages import PageCrowd
from beekeeper.simulator.run import Arrival, Crowd, simulate, simulated_room

RUNS = ((30_000, 130_000), (300_000, 1_300_000))
# --small: lines a single consumer or a few serve, where the margin is longest.
SMALL_RUNS = ((600, 2_000), (3_000, 10_000))
MINUTES = 6
SEED = 1


def run(
    rate: int, visitors: int, faults: Faults | None = None, join_work_ms: int = 0
) -> dict[str, Any]:
    kept: list[PageCrowd] = []
    started = time.monotonic()
    result = simulate(
        simulated_room(rate=rate, join_work=join_work_ms),
        Crowd(
            visitors=visitors,
            arrival=Arrival.parse("uniform:1"),
            minutes=MINUTES,
            faults=faults or Faults(),
            seed=SEED,
        ),
        watch_pages=kept.append,
    )
    wall = time.monotonic() - started
    pages = kept[0]
    late = lateness(pages)
    origin = pages.figures().origin_per_second
    served = pages.served_per_second()
    # The busiest second against the joins and admissions of that second, over the seconds
    # the room admits at its rate (a second with next to no work has no meaningful ratio).
    busy = [
        (o / s, i) for i, (o, s) in enumerate(zip(origin, served, strict=True)) if s >= rate / 60
    ]
    second_ratio, second = max(busy) if busy else (None, None)
    most_waiting = max(result.waiting_over_time, default=0)
    return {
        "rate": rate,
        "visitors": visitors,
        "join_work_ms": join_work_ms,
        "still_solving": result.still_solving,
        "most_waiting": most_waiting,
        "origin_per_second_mean": result.origin_requests_per_second_mean,
        "origin_per_second_peak": result.origin_requests_per_second_peak,
        "origin_ratio_worst_minute": result.origin_ratio_max,
        "origin_ratio_run": result.origin_ratio,
        "origin_ratio_busiest_second": None if second_ratio is None else round(second_ratio, 3),
        "busiest_ratio_second": second,
        "edge_per_second_peak": result.edge_requests_per_second_peak,
        "origin_requests_per_minute": result.origin_requests_per_minute,
        "edge_requests_per_minute": result.edge_requests_per_minute,
        "visitor_polls_per_admission": result.visitor_polls_per_admission,
        "noticed_seconds_p50": result.noticed_seconds_p50,
        "noticed_seconds_p90": result.noticed_seconds_p90,
        "model_origin_per_second_admitting": round(
            origin_requests_per_second(joins_per_second=0, rate_per_minute=rate), 1
        ),
        "poll_rule_without_edge_per_second": round(standing_polls_per_second(most_waiting, rate)),
        # The places the sampled pages showed against the true place (simulator/true_place.py).
        "positions_checked": result.positions_checked,
        "positions_unshown": result.positions_unshown,
        "position_error_p50": result.position_error_p50,
        "position_error_p90": result.position_error_p90,
        "position_error_p99": result.position_error_p99,
        "position_error_max": result.position_error_max,
        "lost": result.lost,
        "admitted_twice": result.admitted_twice,
        "admitted_per_minute": result.admitted_per_minute,
        "wall_seconds": round(wall, 1),
        **late,
    }


def lateness(pages: PageCrowd) -> dict[str, Any]:
    """How late the queue admits a visitor after the serving number passed their turn: the
    k-th admission of the run is when the serving number reaches k, so a visitor whose turn
    is k, admitted later than that, is found by an own poll only after the difference (the
    margin, core/serving.py, covers it); in places, admission rank minus turn."""
    done = pages.admissions()
    times = [when for _, when in done]
    seconds = sorted(when - times[turn - 1] for turn, when in done if turn <= len(times))
    places = sorted(rank + 1 - turn for rank, (turn, _) in enumerate(done))

    def at(values: list[float] | list[int], fraction: float) -> float:
        return values[min(len(values) - 1, int(fraction * len(values)))]

    return {
        "late_seconds_p99_9": round(at(seconds, 0.999), 3),
        "late_seconds_max": round(seconds[-1], 3),
        "early_seconds_p0_1": round(at(seconds, 0.001), 3),
        "reordered_places_p0_1": at(places, 0.001),
        "reordered_places_p99_9": at(places, 0.999),
        "reordered_places_min": places[0],
        "reordered_places_max": places[-1],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 30,000/min run")
    parser.add_argument(
        "--small", action="store_true", help="600/min with 2,000 and 3,000/min with 10,000"
    )
    parser.add_argument(
        "--faults", action="store_true", help="with crash, throttle, duplicates, double-trigger"
    )
    parser.add_argument(
        "--join-work",
        type=int,
        default=DEFAULT_JOIN_WORK_MS,
        metavar="MS",
        help=f"the work a place costs (default {DEFAULT_JOIN_WORK_MS:,}; 0: none)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    faults = Faults.parse(",".join(FAULT_NAMES)) if args.faults else None
    runs = SMALL_RUNS if args.small else RUNS[: 1 if args.quick else 2]
    rows = [run(rate, visitors, faults, args.join_work) for rate, visitors in runs]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.json:
        print(json.dumps({"runs": rows, "peak_memory_mb": round(peak_mb)}, indent=2))
        return 0
    print(
        "| rate/min | waiting at most | origin req/s mean / busiest s | origin / (joins + "
        "admissions): worst minute, run, busiest s | edge req/s busiest s | own /polling per "
        "admission | noticed p50 / p90 | model (admitting) | poll rule without the edge | wall |"
    )
    print("|---:|---:|---|---|---:|---:|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['rate']:,} | {row['most_waiting']:,} | "
            f"{row['origin_per_second_mean']:,.0f} / {row['origin_per_second_peak']:,} | "
            f"{row['origin_ratio_worst_minute']:.3f}, {row['origin_ratio_run']:.3f}, "
            f"{row['origin_ratio_busiest_second']:.2f} (second {row['busiest_ratio_second']}) | "
            f"{row['edge_per_second_peak']:,} | {row['visitor_polls_per_admission']:.3f} | "
            f"{row['noticed_seconds_p50']:.2f} s / {row['noticed_seconds_p90']:.2f} s | "
            f"{row['model_origin_per_second_admitting']:,.0f} | "
            f"{row['poll_rule_without_edge_per_second']:,} | {row['wall_seconds']:.0f} s |"
        )
    for row in rows:
        rate = f"{row['rate']:,}/min"
        print(
            f"\n{rate}: admitted after the serving number passed the turn by at most "
            f"{row['late_seconds_max']:.3f} s (p99.9 {row['late_seconds_p99_9']:.3f} s; the "
            f"margin: {margin_seconds(row['rate'], 60.0)} s); admission rank - turn "
            f"{row['reordered_places_min']} .. {row['reordered_places_max']} places "
            f"(p0.1 {row['reordered_places_p0_1']}, p99.9 {row['reordered_places_p99_9']})"
        )
        print(
            f"{rate}: places shown off the true place by (places) median "
            f"{row['position_error_p50']}, p90 {row['position_error_p90']}, p99 "
            f"{row['position_error_p99']}, most {row['position_error_max']} over "
            f"{row['positions_checked']:,} page-moments ({row['positions_unshown']:,} with no "
            "number yet)"
        )
        print(f"{rate}: origin requests per minute {row['origin_requests_per_minute']}")
        print(f"{rate}: edge requests per minute {row['edge_requests_per_minute']}")
        print(f"{rate}: admitted per minute {row['admitted_per_minute']}")
    print(f"\njoin work {args.join_work:,} ms; peak memory {peak_mb:,.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
