"""`beekeeper local` as a subprocess for the tests: started, its URLs read, stopped by Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from beekeeper.core.local_room import LOCAL_OUTPUTS_KEY

BEEKEEPER = str(Path(sys.executable).with_name("beekeeper"))


@dataclass
class LocalProcess:
    process: subprocess.Popen[str]
    config_dir: Path
    name: str
    lines: list[str] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)

    @property
    def record_path(self) -> Path:
        return self.config_dir / "rooms" / f"{self.name}.local.json"

    @property
    def record(self) -> dict[str, Any]:
        """The room's stack outputs, as its local record holds them."""
        data: dict[str, Any] = json.loads(self.record_path.read_text())[LOCAL_OUTPUTS_KEY]
        return data

    def client(self, service: str) -> Any:
        return boto3.client(
            service,  # type: ignore[call-overload]
            endpoint_url=self.record["EndpointUrl"],
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def interrupt(self, timeout: float = 20) -> int:
        """Ctrl-C, as a person at the terminal would press it; the exit code."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout)

    def output(self) -> str:
        return "".join(self.lines)


def start_local(args: list[str], config_dir: Path, name: str, timeout: float = 60) -> LocalProcess:
    env = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(config_dir), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [BEEKEEPER, "local", "--port", "0", "--operator-port", "0", "--name", name, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    room = LocalProcess(process, config_dir, name)
    ready = threading.Event()  # up, or its output ended
    up = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            room.lines.append(line)
            for key in (
                "marketing URL", "page URL", "client check URL", "JWKS URL", "demo shop",
                "operator view",
            ):  # fmt: skip
                if line.strip().startswith(f"{key}:"):
                    room.urls[key] = line.split()[-1]
            if "Press Ctrl-C" in line:
                up.set()
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout) or not up.is_set() or process.poll() is not None:
        process.kill()
        raise AssertionError("beekeeper local did not start:\n" + room.output())
    return room


def wait_until(predicate: Any, timeout: float, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def operator(
    config_dir: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The operator CLI in a process of its own, on a machine with no AWS credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["BEEKEEPER_CONFIG_DIR"] = str(config_dir)
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    return subprocess.run(
        [BEEKEEPER, *args], env=env, capture_output=True, text=True, timeout=timeout
    )
