"""How long `beekeeper --help` (and a command's own --help) takes on this machine.

    .venv/bin/python bench/cli_startup.py [--runs 15] [ARGS ...]

Each run is a fresh process of the installed console script (interpreter start, every import
and the help text), timed from spawn to exit with a monotonic clock; the figures are the
median, fastest and slowest of the runs after one warm-up run that fills the file cache. Goal:
`beekeeper --help` under 0.3 s. It also lists the slowest imports of one run (python -X
importtime), which is where a regression shows: `beekeeper --help` loads no command's module
(cli/main.py, COMMANDS; tests/functional/cli/test_cli_main.py holds that).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BEEKEEPER = str(Path(sys.executable).with_name("beekeeper"))
GOAL_SECONDS = 0.3


def run_once(args: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([BEEKEEPER, *args], check=True, capture_output=True)
    return time.monotonic() - started


def slowest_imports(args: list[str], count: int) -> list[tuple[int, str]]:
    """(cumulative microseconds, module) of the top-level imports of one run."""
    code = (
        "import sys\nfrom beekeeper.cli.main import main\n"
        f"sys.argv = ['beekeeper', *{args!r}]\nmain()"
    )
    ran = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    found = []
    for line in ran.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _self, cumulative, name = line.removeprefix("import time:").split("|")
        if cumulative.strip().isdigit() and not name.startswith("   "):
            found.append((int(cumulative), name.strip()))
    return sorted(found, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("args", nargs="*", help="what to run (default: --help)")
    options = parser.parse_args()
    args = options.args or ["--help"]
    run_once(args)  # warm-up: the file cache, .pyc files
    times = [run_once(args) for _ in range(options.runs)]
    median = statistics.median(times)
    print(
        f"beekeeper {' '.join(args)}: median {median:.3f} s, fastest {min(times):.3f} s, "
        f"slowest {max(times):.3f} s over {options.runs} runs "
        f"({'within' if median < GOAL_SECONDS else 'OVER'} the goal of {GOAL_SECONDS} s)"
    )
    print("slowest top-level imports of one run (cumulative):")
    for microseconds, name in slowest_imports(args, 8):
        print(f"  {microseconds / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
