"""The entry point's exit codes: usage 2, user 1, AWS 3, bug 70 with a traceback."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from dataclasses import replace

import click
import pytest

from beekeeper.cli.factory import CliFactory
from beekeeper.cli.main import COMMANDS, cli, main
from tests.support.cli_testkit import DeployedRoom


def exit_code(argv: list[str], factory: CliFactory) -> int:
    with pytest.raises(SystemExit) as raised:
        main(argv, factory=factory)
    return int(raised.value.code or 0)


def test_usage_errors_exit_2(factory: CliFactory, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["frobnicate"], factory) == 2
    assert "No such command 'frobnicate'" in capsys.readouterr().err
    assert exit_code(["off"], factory) == 2
    assert "Missing argument 'NAME'" in capsys.readouterr().err


def test_help_and_version_exit_0(factory: CliFactory, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["--help"], factory) == 0
    out = capsys.readouterr().out
    for command in ("init", "deploy", "off", "on", "rate", "status", "list", "destroy"):
        assert f"  {command} " in out
    assert exit_code(["--version"], factory) == 0


def test_every_command_loads_under_its_name_with_the_line_help_shows() -> None:
    context = click.Context(cli)
    for name, entry in COMMANDS.items():
        command = cli.get_command(context, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(limit=200) == entry.short_help
    assert cli.get_command(context, "frobnicate") is None


def test_every_command_a_module_defines_is_in_the_table() -> None:
    """A new command's module without its COMMANDS entry would be missing from the CLI."""
    registered = {(entry.module, entry.command) for entry in COMMANDS.values()}
    package = importlib.import_module("beekeeper.cli.commands")
    defined = set()
    for module in pkgutil.iter_modules(package.__path__):
        loaded = importlib.import_module(f"beekeeper.cli.commands.{module.name}")
        commands = {
            attribute: value
            for attribute, value in vars(loaded).items()
            if isinstance(value, click.Command)
            and getattr(value.callback, "__module__", "") == loaded.__name__
        }
        # A group's sub-commands are reached through their group, not the table.
        nested = {
            id(sub)
            for group in commands.values()
            if isinstance(group, click.Group)
            for sub in group.commands.values()
        }
        defined |= {(module.name, a) for a, c in commands.items() if id(c) not in nested}
    assert defined == registered


# What `beekeeper --help` may not load: each command's module and what they import.
HEAVY = ("boto3", "botocore", "beekeeper.cli.commands.", "beekeeper.simulator", "beekeeper.stacks")
# What no command's --help may load: what the commands do (AWS, the simulator's run, the CDK).
WORK = (
    "boto3",
    "botocore",
    "aws_cdk",
    "jsii",
    "beekeeper.simulator.run",
    "beekeeper.simulator.capacity",
    "beekeeper.stacks",
    "beekeeper.local",
    "beekeeper.room.assembly",
)
_HELP_THEN_MODULES = """
import sys
from beekeeper.cli.main import cli
try:
    cli.main(sys.argv[1:], prog_name="beekeeper")
except SystemExit:
    pass
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def modules_loaded_by(*args: str) -> tuple[str, list[str]]:
    """The help text and the modules loaded by `beekeeper ARGS` in a fresh interpreter."""
    ran = subprocess.run(
        [sys.executable, "-c", _HELP_THEN_MODULES, *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return ran.stdout, ran.stderr.split()


def test_help_imports_no_command_module_nor_boto3() -> None:
    # Held here by what is imported; bench/cli_startup.py measures the time.
    shown, modules = modules_loaded_by("--help")
    assert "Commands:" in shown
    assert "beekeeper.cli.main" in modules
    assert [m for m in modules if m.startswith(HEAVY)] == []


@pytest.mark.parametrize("command", [*sorted(COMMANDS), "keys rotate", "keys retire"])
def test_a_commands_help_imports_none_of_what_it_does(command: str) -> None:
    """Every --help within 0.5 s (bench/cli_startup.py measures it): a command's help loads
    its options, not AWS's SDK, the simulator or the CDK."""
    shown, modules = modules_loaded_by(*command.split(), "--help")
    assert f"Usage: beekeeper {command}" in shown
    assert [m for m in modules if m.startswith(WORK)] == []


def test_a_user_error_exits_1(factory: CliFactory, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["status", "nope"], factory) == 1
    assert capsys.readouterr().err.startswith("Error: There is no room named 'nope'")


def test_a_declined_confirmation_exits_1(
    factory: CliFactory,
    deployed_room: DeployedRoom,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    assert exit_code(["reset", "sale", "--force"], factory) == 1
    assert "Aborted: nothing was changed." in capsys.readouterr().err


def test_a_bug_prints_a_traceback_and_exits_70(
    factory: CliFactory, deployed_room: DeployedRoom, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken_clock() -> float:
        raise ZeroDivisionError("a bug")

    assert exit_code(["off", "sale"], replace(factory, clock=broken_clock)) == 70
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert "ZeroDivisionError: a bug" in err
    assert "this is a bug in Beekeeper, not something you did" in err


def test_ctrl_c_exits_130(
    factory: CliFactory, deployed_room: DeployedRoom, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted() -> float:
        raise KeyboardInterrupt

    assert exit_code(["off", "sale"], replace(factory, clock=interrupted)) == 130
    assert "Interrupted." in capsys.readouterr().err


def test_input_ending_at_a_question_says_to_use_flags(
    factory: CliFactory, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert exit_code(["init"], factory) == 1
    assert "the input ended before every question was answered" in capsys.readouterr().err
