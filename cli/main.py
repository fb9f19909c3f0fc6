"""The `beekeeper` command: a click group whose commands stay thin.

Each command parses its options and hands the work to a plain object; errors a user can fix
become one sentence and a documented exit code (cli/errors.py, docs/cli.md), a bug prints a
traceback and exits 70. AWS failures are turned into sentences inside the group, so tests
through CliRunner see the same messages and exit codes as the installed command.
"""

from __future__ import annotations

import sys
import traceback
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import click

from beekeeper.cli.aws import explain_aws_failure
from beekeeper.cli.commands.capacity import capacity
from beekeeper.cli.commands.deploy import deploy
from beekeeper.cli.commands.destroy import destroy
from beekeeper.cli.commands.init import init
from beekeeper.cli.commands.keys import keys
from beekeeper.cli.commands.list_rooms import list_rooms
from beekeeper.cli.commands.local import local
from beekeeper.cli.commands.off import off
from beekeeper.cli.commands.on import on
from beekeeper.cli.commands.rate import rate
from beekeeper.cli.commands.report import report
from beekeeper.cli.commands.reset import reset
from beekeeper.cli.commands.schedule import close, hold, resume, schedule
from beekeeper.cli.commands.simulate import simulate_command
from beekeeper.cli.commands.status import status
from beekeeper.cli.errors import EXIT_BUG, EXIT_INTERRUPTED, EXIT_USER_ERROR, UserError
from beekeeper.core.settings import SettingsError


def _version() -> str:
    try:
        return version("beekeeper-waiting-room")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


class BeekeeperGroup(click.Group):
    """Turns AWS failures and invalid settings into one-sentence errors."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SettingsError as error:
            raise UserError(f"{error} Fix it and run again.") from error
        except click.ClickException:
            raise
        except Exception as error:
            explained = explain_aws_failure(error)
            if explained is None:
                raise
            raise explained from error


@click.group(cls=BeekeeperGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), prog_name="beekeeper")
def cli() -> None:
    """Beekeeper: a virtual waiting room for a one-off event, in your own AWS account.

    Point the marketing link at the room; it lets visitors through to your shop at the rate
    you set, and your shop can ask it whether a visitor really came through the line.
    """


# One line per command, so adding one never conflicts with adding another.
cli.add_command(capacity)
cli.add_command(close)
cli.add_command(deploy)
cli.add_command(destroy)
cli.add_command(init)
cli.add_command(hold)
cli.add_command(keys)
cli.add_command(list_rooms)
cli.add_command(local)
cli.add_command(off)
cli.add_command(on)
cli.add_command(rate)
cli.add_command(report)
cli.add_command(reset)
cli.add_command(resume)
cli.add_command(schedule)
cli.add_command(simulate_command)
cli.add_command(status)


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
