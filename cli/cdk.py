"""Running the AWS CDK CLI: where it is, and a small runner object tests replace.

The CLI is found on PATH as `cdk`, else in the checkout's node_modules (a developer running
from a clone after `npm ci`), else fetched by `npx --yes aws-cdk@2`. All three need Node.js.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from beekeeper.cli.errors import UserError
from beekeeper.core.paths import PACKAGE_ROOT

LineSink = Callable[[str], None]
Which = Callable[[str], str | None]

NPX_PACKAGE = "aws-cdk@2"
# The Node.js releases the AWS CDK supports ("Supported Node.js versions for the AWS CDK",
# https://docs.aws.amazon.com/cdk/v2/guide/node-versions.html: 22.x until 2027-10-30, 24.x
# until 2028-10-30; 20.x ended 2026-10-30).
SUPPORTED_NODE = "Node.js 24 or 22 (LTS)"
# A line of the CDK app's output that jsii's Python runtime wrote as a bytes object (its
# warnings about the Node.js version, for one): b'...\n'.
_BYTES_LINE = re.compile(r"""b(['"]).*\1""")


def as_text(line: str) -> str:
    """The line, with a bytes object jsii printed (`b'!!  Node 20 is ...\\n'`) as its text."""
    if _BYTES_LINE.fullmatch(line) is None:
        return line
    try:
        data = ast.literal_eval(line)
    except (ValueError, SyntaxError):
        return line
    if not isinstance(data, bytes):
        return line
    return data.decode("utf-8", errors="replace").rstrip("\r\n")


class CdkRunner(Protocol):
    def ensure_available(self) -> None:
        """Raise a UserError saying what to install when the CDK CLI can not run here."""
        ...

    def run(
        self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, on_line: LineSink
    ) -> int:
        """Run `cdk <args>`, passing each output line to on_line; return the exit code."""
        ...


def locate_cdk(which: Which, package_root: Path = PACKAGE_ROOT) -> list[str]:
    """The command prefix that runs the CDK CLI, or a UserError saying what to install."""
    if which("node") is None:
        raise UserError(
            f"Deploying needs Node.js (the AWS CDK CLI runs on it); install {SUPPORTED_NODE} "
            "from https://nodejs.org and run again."
        )
    on_path = which("cdk")
    if on_path:
        return [on_path]
    checkout = package_root / "node_modules" / ".bin" / "cdk"
    if checkout.is_file():
        return [str(checkout)]
    npx = which("npx")
    if npx:
        return [npx, "--yes", NPX_PACKAGE]
    raise UserError(
        "The AWS CDK CLI was not found and npx is missing; run `npm install -g aws-cdk` "
        "(npm comes with Node.js) and run again."
    )


class SubprocessCdkRunner:
    """Runs the CDK CLI as a child process, streaming its merged output line by line."""

    def __init__(self, which: Which) -> None:
        self._which = which

    def ensure_available(self) -> None:
        locate_cdk(self._which)

    def run(
        self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, on_line: LineSink
    ) -> int:
        command = [*locate_cdk(self._which), *args]
        cwd.mkdir(parents=True, exist_ok=True)
        with subprocess.Popen(  # noqa: S603 - a fixed program and arguments, no shell
            command,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                on_line(as_text(line.rstrip("\n")))
            return process.wait()
