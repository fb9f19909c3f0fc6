"""What `beekeeper local` tells the operator as it starts: an operator command that runs as
printed, and a warning when nothing answers at the room's origin."""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.localroom.process import start_local

pytestmark = pytest.mark.slow


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        port: int = listener.getsockname()[1]
    return port


def test_the_printed_operator_command_runs_and_a_silent_origin_is_named(tmp_path: Path) -> None:
    origin = f"http://127.0.0.1:{closed_port()}/"
    room = start_local(["--origin", origin, "--rate", "60"], tmp_path, name="hint")
    try:
        output = room.output()
        assert (
            f"Warning: nothing answers at the room's origin {origin} (connection refused): "
            "admitted visitors are sent there."
        ) in output
        printed = re.search(r"Operate it from another terminal: (.+ status hint) \(", output)
        assert printed is not None, output
        # Run as printed, split as a shell splits it (the path, or `beekeeper` found on PATH).
        env = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(tmp_path)}
        status = subprocess.run(
            shlex.split(printed.group(1)), env=env, capture_output=True, text=True, timeout=60
        )
        assert status.returncode == 0, status.stderr
        assert status.stdout.startswith("Room hint (local): ON")
    finally:
        assert room.interrupt() == 0


def test_the_demo_shop_as_origin_gets_no_warning(tmp_path: Path) -> None:
    room = start_local(["--demo-port", "0"], tmp_path, name="demo")
    try:
        assert "Warning" not in room.output()
        assert "Operate it from another terminal: " in room.output()
    finally:
        assert room.interrupt() == 0
