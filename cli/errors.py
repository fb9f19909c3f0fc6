"""Exit codes and the error types for what a user can fix.

| code | meaning |
|---|---|
| 0 | success |
| 1 | a user error: the message says what to do (UserError); also a declined confirmation |
| 2 | bad command line: unknown option, missing argument, a flag value that is not allowed |
| 3 | AWS refused or could not be reached: credentials, region, permissions, throttling |
| 4 | the AWS CDK CLI reported a failed deploy or destroy; CloudFormation rolled back, run again |
| 5 | `beekeeper check` found a step of the room's journey failing (its report says which and why) |
| 70 | a bug in Beekeeper: a traceback is printed; please report it |
| 130 | interrupted with Ctrl-C |
"""

from __future__ import annotations

import click

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_USAGE = 2
EXIT_AWS_ERROR = 3
EXIT_DEPLOY_FAILED = 4
EXIT_CHECK_FAILED = 5
EXIT_BUG = 70
EXIT_INTERRUPTED = 130


class UserError(click.ClickException):
    """Something the user can fix; shown as one sentence, exit code 1."""

    exit_code = EXIT_USER_ERROR


class AwsError(click.ClickException):
    """AWS said no or could not be reached; the message says what to check. Exit code 3."""

    exit_code = EXIT_AWS_ERROR


class DeployError(click.ClickException):
    """The CDK CLI failed; its own output above says why. Exit code 4."""

    exit_code = EXIT_DEPLOY_FAILED
