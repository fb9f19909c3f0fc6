"""Running the AWS CDK CLI: where it is, and a small runner object tests replace.

The CLI is found on PATH as `cdk`, else in the checkout's node_modules (a developer running
from a clone after `npm ci`), else fetched by `npx --yes aws-cdk@2`. All three run on the
Node.js that cli/node.py chooses, and the CDK's output is passed on as text, without jsii's
banners about the Node.js release (cli/node.py says that once, plainly).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from beekeeper.cli.errors import UserError
from beekeeper.cli.node import NodeChoice, ReadVersion, Which, choose_node, node_version
from beekeeper.core.paths import PACKAGE_ROOT

LineSink = Callable[[str], None]

NPX_PACKAGE = "aws-cdk@2"
# A line of the CDK app's output that jsii's Python runtime wrote as a bytes object (its
# warnings about the Node.js version, for one): b'...\n'.
_BYTES_LINE = re.compile(r"""b(['"]).*\1""")
# A line of jsii's framed banner about the Node.js release ("!!  Node 20 is end-of-life ...  !!"
# inside a frame of "!"), colours removed.
_BANNER_LINE = re.compile(r"!!.*!!")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


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


def is_jsii_banner(line: str) -> bool:
    """A line of jsii's banner about the Node.js release (already as text)."""
    return _BANNER_LINE.fullmatch(_COLOUR.sub("", line).strip()) is not None


class CdkRunner(Protocol):
    def ensure_available(self) -> str | None:
        """Raise a UserError saying what to install when the CDK CLI can not run here; return
        what the operator should read once about the Node.js it runs on (None: nothing)."""
        ...

    def run(
        self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, on_line: LineSink
    ) -> int:
        """Run `cdk <args>`, passing each output line to on_line; return the exit code."""
        ...


def locate_cdk(which: Which, package_root: Path = PACKAGE_ROOT) -> list[str]:
    """The command prefix that runs the CDK CLI, or a UserError saying what to install (the
    CLI runs on the node first on the PATH it is given: cli/node.py)."""
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
    """Runs the CDK CLI as a child process on the chosen Node.js, streaming its merged output
    line by line as text, without jsii's banners."""

    def __init__(
        self,
        which: Which,
        read_version: ReadVersion = node_version,
        package_root: Path = PACKAGE_ROOT,
    ) -> None:
        self._which = which
        self._read_version = read_version
        self._package_root = package_root
        self._node: NodeChoice | None = None

    def node(self) -> NodeChoice:
        """The Node.js the CDK runs on, chosen once per command."""
        if self._node is None:
            self._node = choose_node(self._which, self._read_version, self._package_root)
        return self._node

    def ensure_available(self) -> str | None:
        choice = self.node()
        locate_cdk(self._which, self._package_root)
        return choice.note

    def run(
        self, args: Sequence[str], *, env: Mapping[str, str], cwd: Path, on_line: LineSink
    ) -> int:
        command = [*locate_cdk(self._which, self._package_root), *args]
        cwd.mkdir(parents=True, exist_ok=True)
        with subprocess.Popen(  # noqa: S603 - a fixed program and arguments, no shell
            command,
            cwd=cwd,
            env=self.node().environment(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
        ) as process:
            assert process.stdout is not None
            for raw in process.stdout:
                line = as_text(raw.rstrip("\n"))
                if not is_jsii_banner(line):
                    on_line(line)
            return process.wait()
