"""Exit codes and the one error type for a user's mistakes.

| code | meaning |
|---|---|
| 0 | success |
| 1 | a user error: the message says what to do (UserError) |
| 2 | bad command line (click's usage errors) |
| 3 | AWS refused or could not be reached: credentials, region, permissions, throttling |
| 70 | a bug in Beekeeper: a traceback is printed; please report it |
"""

from __future__ import annotations

import click

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_USAGE = 2
EXIT_AWS_ERROR = 3
EXIT_BUG = 70


class UserError(click.ClickException):
    """Something the user can fix; shown as one sentence, exit code 1."""

    exit_code = EXIT_USER_ERROR


class AwsError(click.ClickException):
    """AWS said no or could not be reached; the message says what to check. Exit code 3."""

    exit_code = EXIT_AWS_ERROR
