"""The `beekeeper` command: a click group whose commands stay thin.

Each command parses its options and hands the work to a plain object; errors a user can fix
become one sentence and a documented exit code (cli/errors.py), a bug prints a traceback and
exits 70.
"""

from __future__ import annotations

import sys
import traceback
from importlib.metadata import PackageNotFoundError, version

import click

from beekeeper.cli.commands.simulate import simulate_command
from beekeeper.cli.errors import EXIT_BUG
from beekeeper.core.settings import SettingsError


def _version() -> str:
    try:
        return version("beekeeper-waiting-room")
    except PackageNotFoundError:  # running from a source tree that is not installed
        return "0+unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), prog_name="beekeeper")
def cli() -> None:
    """Beekeeper: a virtual waiting room for a one-off event, in your own AWS account.

    Point the marketing link at the room; it lets visitors through to your shop at the rate
    you set, and your shop can ask it whether a visitor really came through the line.
    """


cli.add_command(simulate_command)


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the group, turning leftover settings errors into sentences."""
    try:
        result = cli.main(args=argv, prog_name="beekeeper", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except SettingsError as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(1)
    except click.exceptions.Exit as exit_:
        sys.exit(exit_.exit_code)
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
