"""How long `beekeeper --help` and every command's `--help` take on this machine, and how long
`beekeeper deploy` takes to say that there are no AWS credentials.

    .venv/bin/python bench/cli_startup.py [--runs 9] [--imports] [-- COMMAND ...]

Each run is a fresh process of the installed console script (interpreter start, every import
and the help text), timed from spawn to exit with a monotonic clock; the figures are the median,
fastest and slowest of the runs after one warm-up run that fills the file cache, and the median
CPU time the process used (user + system): on a busy machine the wall time grows with the
queue for a core, the CPU time much less. Goal: every
`--help` within 0.5 s. Without COMMAND it measures `beekeeper --help`, each command's (and each
`keys` subcommand's) `--help`, and `beekeeper deploy` of a room file in a temporary config
folder with no AWS credentials anywhere (no variables, empty config files, the instance
metadata service off, an empty wheel cache): the time until it exits with its sentence, which
it must say before anything is downloaded or synthesized (docs/cli.md "deploy").

--imports lists the slowest imports of one run of the slowest `--help` (python -X importtime):
a command's --help loads none of what it does (boto3, botocore, the simulator, the CDK:
tests/functional/cli/test_cli_main.py holds that), which is where a regression shows.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from beekeeper.cli.main import cli

BEEKEEPER = str(Path(sys.executable).with_name("beekeeper"))
GOAL_SECONDS = 0.5
CREDENTIAL_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def help_commands() -> list[list[str]]:
    """`--help` of the group, of every command and of every subcommand of a group command."""
    context = click.Context(cli)
    found: list[list[str]] = [["--help"]]
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        found.append([name, "--help"])
        if isinstance(command, click.Group):
            found += [[name, sub, "--help"] for sub in sorted(command.commands)]
    return found


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, exit code, stderr) of one run."""
    cpu = children_cpu()
    started = time.monotonic()
    ran = subprocess.run([BEEKEEPER, *args], capture_output=True, text=True, env=env)
    return time.monotonic() - started, children_cpu() - cpu, ran.returncode, ran.stderr


def measure(
    args: list[str], runs: int, env: dict[str, str] | None = None
) -> tuple[list[float], list[float]]:
    """The wall and CPU seconds of `runs` runs after a warm-up (the file cache, .pyc files)."""
    run_once(args, env)
    results = [run_once(args, env) for _ in range(runs)]
    return [wall for wall, *_ in results], [cpu for _, cpu, *_ in results]


def line(label: str, times: tuple[list[float], list[float]], goal: float | None) -> str:
    wall, cpu = times
    median = statistics.median(wall)
    verdict = "" if goal is None else ("  within" if median <= goal else "  OVER")
    return (
        f"{label:<32} median {median:.3f} s  fastest {min(wall):.3f} s  "
        f"slowest {max(wall):.3f} s  cpu {statistics.median(cpu):.3f} s{verdict}"
    )


def without_credentials(folder: Path) -> dict[str, str]:
    """This environment, with no AWS credentials anywhere botocore looks and nothing that
    would reach a network for them."""
    env = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARIABLES}
    empty = folder / "empty"
    empty.write_text("", encoding="utf-8")
    env.update(
        AWS_CONFIG_FILE=str(empty),
        AWS_SHARED_CREDENTIALS_FILE=str(empty),
        AWS_EC2_METADATA_DISABLED="true",
        BEEKEEPER_CONFIG_DIR=str(folder / "config"),
        BEEKEEPER_WHEEL_CACHE=str(folder / "wheels"),
        CDK_DISABLE_CLI_TELEMETRY="true",
    )
    return env


def deploy_without_credentials(runs: int) -> None:
    with tempfile.TemporaryDirectory() as work:
        env = without_credentials(Path(work))
        init = [
            "init", "--yes", "--name", "bench", "--region", "eu-west-1",
            "--origin", "https://shop.example/", "--rate", "100",
        ]  # fmt: skip
        subprocess.run([BEEKEEPER, *init], check=True, capture_output=True, env=env)
        _wall, _cpu, code, said = run_once(["deploy", "bench"], env)
        times = measure(["deploy", "bench"], runs, env)
        print(line("deploy without credentials", times, None))
        print(f"  exit code {code}; it said: {said.strip().splitlines()[-1]}")
        fetched = any(Path(work, "wheels").iterdir()) if Path(work, "wheels").exists() else False
        print(f"  wheels downloaded before it: {'yes' if fetched else 'none'}")


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
    for text in ran.stderr.splitlines():
        if not text.startswith("import time:") or "|" not in text:
            continue
        _self, cumulative, name = text.removeprefix("import time:").split("|")
        if cumulative.strip().isdigit() and not name.startswith("   "):
            found.append((int(cumulative), name.strip()))
    return sorted(found, reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--imports", action="store_true", help="the slowest help's imports")
    parser.add_argument("args", nargs="*", help="one command line to time instead of them all")
    options = parser.parse_args()
    commands = [options.args] if options.args else help_commands()
    print(f"{options.runs} runs each after a warm-up; goal for --help: {GOAL_SECONDS} s")
    slowest: tuple[float, list[str]] = (0.0, commands[0])
    for args in commands:
        times = measure(args, options.runs)
        goal = GOAL_SECONDS if args[-1] == "--help" else None
        print(line("beekeeper " + " ".join(args), times, goal))
        slowest = max(slowest, (statistics.median(times[0]), args))
    if not options.args:
        deploy_without_credentials(options.runs)
    if options.imports:
        print(f"slowest top-level imports of `beekeeper {' '.join(slowest[1])}` (cumulative):")
        for microseconds, name in slowest_imports(slowest[1], 8):
            print(f"  {microseconds / 1000:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
