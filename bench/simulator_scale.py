"""Benchmark: the simulator at its own scale, 1,000,000 visitors at 300,000/min.

    .venv/bin/python bench/simulator_scale.py [--quick] [--visitors N --rate N] [--json]

Runs `beekeeper simulate --rate 300000 --visitors 1000000 --json` (a burst, the default five
minutes) as a process of its own and reports its peak memory (the maximum resident set size),
its wall time and the CPU time it used (user + system), against the goal: at most 2 GB
(issue 36). `--quick`: 100,000 visitors at 30,000/min. The simulation's own figures are in its
JSON, which is not printed: the same seed gives the same figures on any machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GOAL_MIB = 2048
FULL = (300_000, 1_000_000)
QUICK = (30_000, 100_000)


def measure(rate: int, visitors: int) -> dict[str, Any]:
    """One `beekeeper simulate` run in a child process: its peak memory and times."""
    beekeeper = Path(sys.executable).with_name("beekeeper")
    command = [str(beekeeper), "simulate", "--rate", str(rate), "--visitors", str(visitors)]
    started = time.monotonic()
    pid = subprocess.Popen([*command, "--json"], stdout=subprocess.DEVNULL).pid
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {os.waitstatus_to_exitcode(status)})")
    peak_mib = usage.ru_maxrss / 1024  # kilobytes on Linux
    return {
        "rate": rate,
        "visitors": visitors,
        "peak_memory_mib": round(peak_mib),
        "within_goal": peak_mib <= GOAL_MIB,
        "wall_seconds": round(wall, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        "load_average": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 visitors at 30,000/min")
    parser.add_argument("--visitors", type=int, help="how many visitors (with --rate)")
    parser.add_argument("--rate", type=int, help="visitors let through per minute")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rate, visitors = QUICK if args.quick else FULL
    rate, visitors = args.rate or rate, args.visitors or visitors
    row = measure(rate, visitors)
    if args.json:
        print(json.dumps(row, indent=2))
        return 0
    print("| visitors @ rate/min | peak memory (goal 2,048 MiB) | wall | CPU | load average |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| {row['visitors']:,} @ {row['rate']:,} | {row['peak_memory_mib']:,} MiB | "
        f"{row['wall_seconds']:,.0f} s | {row['cpu_seconds']:,.0f} s | {row['load_average']} |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
