"""How long the README's two quick-start commands take on a fresh clone of this repository.

    .venv/bin/python bench/quick_start.py [--ci] [--keep]

Clones the repository's committed HEAD (`git clone`, no network) into a temporary directory,
so nothing of this checkout (.venv, node_modules) helps, and with pip's download cache off
(`PIP_NO_CACHE_DIR`), as on a machine that never installed Beekeeper, then:

1. `scripts/local-demo` as a newcomer runs it: from the start to the line that says the room
   is up ("Press Ctrl-C to stop."), which includes making .venv and installing Beekeeper with
   its `local` extra from the package index; then Ctrl-C, and the same command once more (the
   second start, with .venv in place). The demo is given free ports (`--port 0 --demo-port 0
   --operator-port 0`), so it never meets a room already on 8080.
2. with --ci, `bash .ci/run` in the same clone (the installs, then the whole quality gate):
   its wall time and its exit code. Tens of minutes: run it on a machine with nothing else
   to do, or the figure says more about the machine than about the suite.

Printed: each command's wall time, what the first run printed before the room's own lines
(the install's output: its own "Installing ..." line and nothing else, warnings included), and
the machine's load average before and after (the figures are only comparable at a similar
load).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UP = "Press Ctrl-C to stop."
ROOM_STARTS = "Room '"  # the room's first line: "Room 'local' is running at ..."
FREE_PORTS = ["--port", "0", "--demo-port", "0", "--operator-port", "0"]
LIMIT_SECONDS = 600.0


def fresh_clone(into: Path) -> Path:
    clone = into / "beekeeper"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    return clone


def fresh_machine(home: Path) -> dict[str, str]:
    """No pip cache, and a config directory of its own (no room saved by an earlier run)."""
    return {**os.environ, "PIP_NO_CACHE_DIR": "1", "BEEKEEPER_CONFIG_DIR": str(home / "config")}


def time_local_demo(clone: Path) -> tuple[float, list[str]]:
    """Seconds from `scripts/local-demo` to the room being up, and what it printed before the
    room's own lines; then Ctrl-C."""
    started = time.monotonic()
    process = subprocess.Popen(
        ["scripts/local-demo", *FREE_PORTS],
        cwd=clone,
        env=fresh_machine(clone.parent),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    up = threading.Event()
    said: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            said.append(line)
            if UP in line:
                up.set()
        up.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        if not up.wait(LIMIT_SECONDS) or process.poll() is not None:
            sys.exit("scripts/local-demo did not come up:\n" + "".join(said))
        took = time.monotonic() - started
        before = next((i for i, line in enumerate(said) if line.startswith(ROOM_STARTS)), 0)
        return took, said[:before]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


def time_ci(clone: Path) -> tuple[float, int]:
    started = time.monotonic()
    done = subprocess.run(
        ["bash", ".ci/run"],
        cwd=clone,
        env=fresh_machine(clone.parent),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.monotonic() - started, done.returncode


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ci", action="store_true", help="also time `bash .ci/run`")
    parser.add_argument("--keep", action="store_true", help="keep the clone (printed)")
    options = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="beekeeper-quick-start-"))
    try:
        clone = fresh_clone(where)
        print(f"load average before: {load()}")
        first, printed = time_local_demo(clone)
        print(f"scripts/local-demo, first run (makes .venv, installs): {first:.0f} s")
        print(f"  it printed before the room's lines ({len(printed)}):")
        print("".join(f"  | {line}" for line in printed), end="")
        again, _ = time_local_demo(clone)
        print(f"scripts/local-demo, second run: {again:.1f} s")
        if options.ci:
            seconds, code = time_ci(clone)
            print(f"bash .ci/run: {seconds / 60:.1f} min, exit code {code}")
        print(f"load average after: {load()}")
    finally:
        if options.keep:
            print(f"the clone: {where / 'beekeeper'}")
        else:
            shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main()
