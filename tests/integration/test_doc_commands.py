"""Every shell command README.md and docs/*.md show runs as written, without AWS.

The commands are found as tests/support/doc_commands.py says. Each document's commands run in
a config directory of their own, fresh, with the repository's .venv/bin first on PATH, no AWS
credentials, and every HTTP(S) request sent to a closed loopback proxy (nothing leaves the
machine). A command passes when it exits 0 and prints no traceback.

Commands that start a server (`beekeeper local`, `scripts/local-demo`) run after the
document's other commands (which make the rooms they rehearse), each until it says it is up;
the commands DURING names run while it is, then Ctrl-C must stop it with exit code 0. They get
`--port 0 --demo-port 0 --operator-port 0` added, so they never fight another process over
8080: the one change made to a command as written.

A `beekeeper simulate` command is run as written by tests/unit/pipeline/test_pages_simulation.py,
which also holds its figures to their bounds; it is not run a second time here.

A command that can not run here is in SKIPPED, by document and text, with the reason: a
reviewed list. A command neither run nor listed can not exist (the list is checked against
the documents both ways).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.doc_commands import REPO, Command, is_simulation, shown_commands

pytestmark = [pytest.mark.slow, pytest.mark.minutes(1)]

AWS = "needs a room deployed in AWS"
NEEDS_A_PERSON = "asks its questions at a terminal"
NAMES_A_FLAG = "names a flag or a command in prose, not a command to run"

SKIPPED: dict[tuple[str, str], str] = {
    ("README.md", "bash .ci/run"): "the whole quality gate (10+ minutes), which CI runs",
    ("docs/deploy.md", "pip install ."): "installs into the environment it runs in",
    ("docs/deploy.md", "beekeeper init"): NEEDS_A_PERSON,
    ("docs/deploy.md", "beekeeper deploy NAME"): AWS,
    ("docs/deploy.md", "beekeeper status NAME --watch"): AWS,
    ("docs/deploy.md", "beekeeper off NAME"): AWS,
    ("docs/deploy.md", "beekeeper report NAME --out NAME.html"): AWS,
    ("docs/deploy.md", "beekeeper reset NAME"): AWS,
    ("docs/deploy.md", "beekeeper destroy NAME"): AWS,
    ("docs/deploy.md", "bash .ci/run"): "the whole quality gate (10+ minutes), which CI runs",
    (
        "docs/deploy.md",
        "BEEKEEPER_REAL_AWS=1 AWS_PROFILE=your-profile AWS_REGION=eu-west-1 "
        ".venv/bin/python -m pytest tests/aws -s",
    ): "the opt-in test in a real AWS account",
    (
        "docs/capacity.md",
        "beekeeper init --max-inside 500 --session-minutes 10 --claim-minutes 2",
    ): (NEEDS_A_PERSON),
    ("docs/shop-integration.md", "curl 'https://<room>/client?token=<token>'"): AWS,
    ("docs/shop-integration.md", "curl 'https://<room>/client?token=<token>&redeem=1'"): AWS,
    ("docs/charts.md", "pip install 'beekeeper-waiting-room[charts]'"): "installs from PyPI",
    ("docs/charts.md", "beekeeper report --json"): NAMES_A_FLAG,
    ("docs/cli.md", "beekeeper init"): NEEDS_A_PERSON,
    ("docs/cli.md", "beekeeper keys rotate spring-sale"): AWS,
    ("docs/cli.md", "beekeeper keys retire spring-sale"): AWS,
    ("docs/cli.md", "beekeeper keys retire spring-sale --force"): AWS,
    ("docs/cli.md", "beekeeper status spring-sale"): AWS,
    ("docs/cli.md", "beekeeper report spring-sale --out spring-sale.html"): AWS,
    (
        "docs/cli.md",
        "beekeeper report spring-sale --since 2026-05-01T09:00 --until 2026-05-01T10:30 --json",
    ): AWS,
    ("docs/cli.md", "beekeeper report spring-sale --since 3h --out today.html"): AWS,
    ("docs/cli.md", "beekeeper reset spring-sale"): AWS,
    ("docs/cli.md", "beekeeper report local --out rehearsal.html"): (
        "needs a running local room; docs/local.md's runs it during the demo"
    ),
    ("docs/local.md", "beekeeper reset local"): (
        "asks to confirm, and refuses a room that is on (tests/integration/test_local_report.py)"
    ),
    ("docs/apps.md", "curl -s -H 'Accept: application/json' http://127.0.0.1:8080/beekeeper"): (
        "needs a room running on the default port (the document starts none); the same request "
        "is asked of the producer by tests/functional/pipeline/test_pipeline_json_join.py"
    ),
    ("docs/pipeline.md", "beekeeper init --starts-at"): NAMES_A_FLAG,
    ("docs/pipeline.md", "beekeeper simulate --json"): NAMES_A_FLAG,
    ("docs/stack.md", "beekeeper keys rotate"): NAMES_A_FLAG,
}

# Run while a server of the same document is up: (document, server) -> commands.
DURING: dict[tuple[str, str], tuple[str, ...]] = {
    ("README.md", "scripts/local-demo"): (".venv/bin/beekeeper status local",),
    ("docs/events.md", "beekeeper local drop --starts-in 30 --minute-seconds 10"): (
        "beekeeper schedule drop --starts-at 2027-11-01T09:00:00Z",
    ),
    ("docs/local.md", "scripts/local-demo"): ("beekeeper report local --out rehearsal.html",),
}

# What a document's commands take as given, made first in its config directory.
GIVEN: dict[str, tuple[str, ...]] = {
    # "rehearse the room of `beekeeper init --name spring-sale`"
    "docs/local.md": (
        "beekeeper init --yes --name spring-sale --region eu-west-1 "
        "--origin https://shop.example/sale --rate 1200",
    ),
}

FREE_PORTS = ("--port", "0", "--demo-port", "0", "--operator-port", "0")
CLOSED_PROXY = "http://127.0.0.1:9"
UP = "Press Ctrl-C to stop."


def is_server(command: Command) -> bool:
    return command.words[:1] == ("scripts/local-demo",) or command.words[1:2] == ("local",)


def during(document: str) -> set[str]:
    return {text for (doc, _), texts in DURING.items() if doc == document for text in texts}


def environment(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        PATH=f"{REPO / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        BEEKEEPER_CONFIG_DIR=str(config),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_CONFIG_FILE=os.devnull,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        HTTP_PROXY=CLOSED_PROXY,
        HTTPS_PROXY=CLOSED_PROXY,
        http_proxy=CLOSED_PROXY,
        https_proxy=CLOSED_PROXY,
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    """A directory standing for a clone: `scripts/` and `.venv/` of this one, nothing else."""
    for name in ("scripts", ".venv"):
        (tmp_path / name).symlink_to(REPO / name)
    yield tmp_path


def run(words: tuple[str, ...] | list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        list(words), cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in said, f"{' '.join(words)}:\n{said}"
    return said


def serve(command: Command, cwd: Path, env: dict[str, str]) -> str:
    """Start the server, wait until it is up, run what DURING names, stop it with Ctrl-C."""
    process = subprocess.Popen(
        [*command.words, *FREE_PORTS],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    up = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if UP in line:
                up.set()
        up.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert up.wait(90) and process.poll() is None, f"{command.text}:\n{''.join(lines)}"
        for text in DURING.get((command.document, command.text), ()):
            run(next(c.words for c in shown_commands() if c.text == text), cwd, env)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(60)
        reader.join(10)
    said = "".join(lines)
    assert code == 0 and "Traceback" not in said, f"{command.text} (exit {code}):\n{said}"
    return said


def test_every_command_shown_is_run_or_listed_with_its_reason() -> None:
    shown = {(c.document, c.text) for c in shown_commands()}
    assert set(SKIPPED) <= shown, "SKIPPED names commands the documents no longer show"
    for (document, server), texts in DURING.items():
        assert (document, server) in shown and {(document, t) for t in texts} <= shown
    # A command run during a server is not skipped, and a skipped one is never run.
    assert not {(d, t) for d in {d for d, _ in DURING} for t in during(d)} & set(SKIPPED)


@pytest.mark.parametrize(
    "document", sorted({c.document for c in shown_commands()}, key=lambda d: d != "README.md")
)
def test_the_documents_commands_run_as_written(document: str, workspace: Path) -> None:
    config = workspace / "config"
    env = environment(config)
    for given in GIVEN.get(document, ()):
        run(shlex.split(given), workspace, env)
    commands = [c for c in shown_commands() if c.document == document]
    runnable = [
        c
        for c in commands
        if (document, c.text) not in SKIPPED
        and c.text not in during(document)
        and not is_simulation(c)
    ]
    for command in [c for c in runnable if not is_server(c)]:
        run(command.words, workspace, env)
    for command in [c for c in runnable if is_server(c)]:
        serve(command, workspace, env)
