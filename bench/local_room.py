"""`beekeeper local` in a subprocess, for the benchmark scripts beside this file (each runs as
`python bench/<script>.py`, so this module is importable as `local_room`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BEEKEEPER = Path(sys.executable).with_name("beekeeper")


@dataclass(frozen=True)
class LocalRoom:
    base: str  # the gateway's base URL: http://127.0.0.1:PORT
    pid: int
    outputs: dict[str, Any]  # the room's record, under the stack's output keys

    @property
    def marketing_url(self) -> str:
        return f"{self.base}/beekeeper"


def _drain(process: subprocess.Popen[str], log_path: str | None) -> None:
    assert process.stdout is not None
    with open(log_path or os.devnull, "w", encoding="utf-8") as log:
        for line in process.stdout:
            log.write(line)


@contextmanager
def running_room(
    name: str, args: list[str], config: str, log_path: str | None = None
) -> Iterator[LocalRoom]:
    """`beekeeper local --name NAME ARGS` on free ports with a new line, until the block ends."""
    env = {**os.environ, "BEEKEEPER_CONFIG_DIR": config}
    command = [str(BEEKEEPER), "local", "--port", "0", "--operator-port", "0", "--name", name]
    process = subprocess.Popen(
        [*command, "--new-line", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        base = ""
        for line in process.stdout:
            if "marketing URL:" in line:
                base = line.split()[-1].rsplit("/beekeeper", 1)[0]
            if "Ctrl-C" in line:
                break
        if not base:
            raise SystemExit("beekeeper local did not start")
        # Keep reading its log (into `log_path`, if given): a full pipe would block the room.
        threading.Thread(target=_drain, args=(process, log_path), daemon=True).start()
        record = json.loads((Path(config) / "rooms" / f"{name}.local.json").read_text())
        yield LocalRoom(base, process.pid, record["outputs"])
    finally:
        process.terminate()
        process.wait(30)
