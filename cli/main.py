"""The `beekeeper` command: a click group whose commands stay thin.

Each command parses its options and hands the work to a plain object; errors a user can fix
become one sentence and a documented exit code (cli/errors.py, docs/cli.md), a bug prints a
traceback and exits 70. AWS failures are turned into sentences inside the group, so tests
through CliRunner see the same messages and exit codes as the installed command.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import click

from beekeeper.cli.errors import EXIT_BUG, EXIT_INTERRUPTED, EXIT_USER_ERROR, UserError
from beekeeper.core.settings import SettingsError


@dataclass(frozen=True)
class Entry:
    """Where a command lives (a module of beekeeper.cli.commands and its click command) and
    the line `beekeeper --help` shows for it. A command's module, with what it imports (boto3,
    the simulator, the CDK's definitions), loads only when that command runs or shows its help:
    `beekeeper --help` imports none of them (bench/cli_startup.py measures it)."""

    module: str
    command: str
    short_help: str


# One entry per command, so adding one never conflicts with adding another.
COMMANDS = {
    "capacity": Entry(
        "capacity", "capacity", "Set how many visitors may be inside the shop at once, live."
    ),
    "check": Entry(
        "check", "check", "Prove a room works end to end, with test visitors, before the drop."
    ),
    "close": Entry("schedule", "close", "End the event: nobody more is admitted or joins."),
    "deploy": Entry("deploy", "deploy", "Deploy (or update) a room in AWS."),
    "destroy": Entry("destroy", "destroy", "Remove a room from AWS and forget it."),
    "hold": Entry("schedule", "hold", "Hold the line: admit nobody, keep every place."),
    "init": Entry("init", "init", "Create a room (six questions, or flags)."),
    "keys": Entry("keys", "keys", "Rotate or retire the keys that sign admission tickets."),
    "list": Entry("list_rooms", "list_rooms", "List rooms, regions and URLs."),
    "local": Entry(
        "local", "local", "Rehearse a room on this machine, with the same code as in AWS."
    ),
    "off": Entry(
        "off",
        "off",
        "Switch a room off: everyone in line and every newcomer goes into the shop with a ticket.",
    ),
    "on": Entry("on", "on", "Switch a room on: visitors wait in line."),
    "rate": Entry("rate", "rate", "Set visitors let through per minute, live."),
    "report": Entry("report", "report", "Report how a room's event went (HTML or JSON)."),
    "reset": Entry("reset", "reset", "Empty a room for its next event (settings and keys stay)."),
    "resume": Entry("schedule", "resume", "Carry on admitting after a hold or a close."),
    "schedule": Entry(
        "schedule", "schedule", "Schedule the event's start: a pre-queue, and a fair draw at it."
    ),
    "simulate": Entry(
        "simulate", "simulate_command", "Simulate admissions minute by minute, without AWS."
    ),
    "status": Entry("status", "status", "Show how a room is doing."),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only for --version

    try:
        return version("beekeeper-waiting-room")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"beekeeper, version {_version()}")
        ctx.exit()


class BeekeeperGroup(click.Group):
    """Loads each command when it is used (COMMANDS); turns AWS failures and invalid settings
    into one-sentence errors."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"beekeeper.cli.commands.{entry.module}")
        command = getattr(module, entry.command)
        assert isinstance(command, click.Command)
        command.short_help = entry.short_help
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name].short_help) for name in sorted(COMMANDS)])

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SettingsError as error:
            raise UserError(f"{error} Fix it and run again.") from error
        except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # a command's own sentence, --help's end, a declined question: as they are
        except Exception as error:
            from beekeeper.cli.aws import explain_aws_failure  # botocore: loaded when needed

            explained = explain_aws_failure(error)
            if explained is None:
                raise
            raise explained from error


@click.group(cls=BeekeeperGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """Beekeeper: a virtual waiting room for a one-off event, in your own AWS account.

    Point the marketing link at the room; it lets visitors through to your shop at the rate
    you set, and your shop can ask it whether a visitor really came through the line.
    """


def main(argv: list[str] | None = None, *, factory: object = None) -> None:
    """Console entry point: one sentence and an exit code for each kind of failure.

    `factory` replaces the real outside world (tests); None builds the default one.
    """
    try:
        result = cli.main(args=argv, prog_name="beekeeper", standalone_mode=False, obj=factory)
    except click.exceptions.Abort as abort:
        # click turns Ctrl-C and end of input into Abort; a declined confirmation is one too.
        reason = abort.__cause__ or abort.__context__
        if isinstance(reason, KeyboardInterrupt):
            click.echo("Interrupted.", err=True)
            sys.exit(EXIT_INTERRUPTED)
        if isinstance(reason, EOFError):
            click.echo(
                "Error: the input ended before every question was answered; "
                "give the answers as flags (see --help), with --yes for scripts.",
                err=True,
            )
            sys.exit(EXIT_USER_ERROR)
        click.echo("Aborted: nothing was changed.", err=True)
        sys.exit(EXIT_USER_ERROR)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except SettingsError as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(EXIT_USER_ERROR)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
    except KeyboardInterrupt:
        click.echo("\nInterrupted.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except Exception:
        traceback.print_exc()
        click.echo(
            "Error: this is a bug in Beekeeper, not something you did. "
            "Please report it with the traceback above.",
            err=True,
        )
        sys.exit(EXIT_BUG)
    # Without standalone mode click returns the exit code of --help and --version.
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    main()
