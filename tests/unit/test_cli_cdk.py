"""Finding and running the CDK CLI; progress lines on a terminal and in a log."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from beekeeper.cli.cdk import SubprocessCdkRunner, locate_cdk
from beekeeper.cli.errors import UserError
from beekeeper.cli.node import PROJECT_NODE
from beekeeper.cli.progress import ProgressReporter


def which_of(found: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda name: found.get(name)


def test_cdk_on_path_comes_first(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / "cdk").write_text("")
    which = which_of({"node": "/usr/bin/node", "cdk": "/usr/local/bin/cdk", "npx": "/usr/bin/npx"})
    assert locate_cdk(which, tmp_path) == ["/usr/local/bin/cdk"]


def test_then_the_checkouts_node_modules(tmp_path: Path) -> None:
    (tmp_path / "node_modules" / ".bin").mkdir(parents=True)
    (tmp_path / "node_modules" / ".bin" / "cdk").write_text("")
    which = which_of({"node": "/usr/bin/node", "npx": "/usr/bin/npx"})
    assert locate_cdk(which, tmp_path) == [str(tmp_path / "node_modules" / ".bin" / "cdk")]


def test_then_npx(tmp_path: Path) -> None:
    which = which_of({"node": "/usr/bin/node", "npx": "/usr/bin/npx"})
    assert locate_cdk(which, tmp_path) == ["/usr/bin/npx", "--yes", "aws-cdk@2"]


def test_without_cdk_or_npx_the_message_says_to_install_the_cdk(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"npm install -g aws-cdk"):
        locate_cdk(which_of({"node": "/usr/bin/node"}), tmp_path)


def node_22(_path: str) -> str:
    """`node --version` of a node the CDK supports."""
    return "v22.23.5"


def test_the_subprocess_runner_streams_lines_and_returns_the_exit_code(tmp_path: Path) -> None:
    fake_cdk = tmp_path / "cdk"
    fake_cdk.write_text(
        '#!/bin/sh\necho "args: $*"\necho "region: $AWS_REGION" >&2\necho "cwd: $(pwd)"\nexit 3\n'
    )
    fake_cdk.chmod(0o755)
    runner = SubprocessCdkRunner(
        which_of({"node": "/usr/bin/node", "cdk": str(fake_cdk)}), node_22, tmp_path
    )
    lines: list[str] = []
    work = tmp_path / "work"
    code = runner.run(
        ["deploy", "--no-notices"],
        env={"PATH": os.environ["PATH"], "AWS_REGION": "eu-west-1"},
        cwd=work,
        on_line=lines.append,
    )
    assert code == 3
    assert lines == ["args: deploy --no-notices", "region: eu-west-1", f"cwd: {work}"]


# What jsii's Python runtime prints on a Node.js release the CDK no longer supports, through
# the CDK CLI: each line of node's banner as a Python bytes object.
JSII_BANNER = (
    "b'!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\\n'",
    "b'!!  Node 20 is end-of-life and not supported anymore by this software since "
    "2026-10-30.  !!\\n'",
    "b\"!!  caf\\xc3\\xa9 'quoted'  !!\\n\"",
)


# The same banner when jsii's warning reaches the output as text, coloured on a terminal.
TEXT_BANNER = (
    "\x1b[97;41;1m!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\x1b[0m",
    "!!  This software has not been tested with node v25.1.0.                 !!",
)


def test_the_runner_drops_jsiis_node_banner_and_passes_other_byte_strings_as_text(
    tmp_path: Path,
) -> None:
    fake_cdk = tmp_path / "cdk"
    printed = (
        "Bundling the room",
        *JSII_BANNER,
        *TEXT_BANNER,
        "b'Synthesis time: 2.1s\\n'",
        "b'not closed",
        "b'x'y'",
        "a line with !! in it !",
    )
    fake_cdk.write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(printed) + "\nEOF\n")
    fake_cdk.chmod(0o755)
    runner = SubprocessCdkRunner(
        which_of({"node": "/usr/bin/node", "cdk": str(fake_cdk)}), node_22, tmp_path
    )
    lines: list[str] = []
    code = runner.run(
        ["synth"], env={"PATH": os.environ["PATH"]}, cwd=tmp_path, on_line=lines.append
    )
    assert code == 0
    assert lines == [
        "Bundling the room",
        "Synthesis time: 2.1s",  # a bytes object jsii printed: its text
        "b'not closed",  # not a bytes object: as it came
        "b'x'y'",
        "a line with !! in it !",
    ]


def test_the_cdk_runs_on_the_chosen_node_with_jsiis_banners_silenced(tmp_path: Path) -> None:
    """The machine's node is 20, so the checkout's Node.js 22 runs the CDK CLI (its
    `#!/usr/bin/env node` finds it first on PATH) and jsii in the CDK app (JSII_NODE)."""
    project_node = tmp_path / PROJECT_NODE
    project_node.parent.mkdir(parents=True)
    project_node.write_text("#!/bin/sh\necho v22.23.5\n")
    project_node.chmod(0o755)
    fake_cdk = tmp_path / "cdk"
    fake_cdk.write_text(
        "#!/bin/sh\n"
        'echo "node: $(command -v node)"\n'
        'echo "jsii: $JSII_NODE"\n'
        'echo "end of life: $JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"\n'
        'echo "untested: $JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION"\n'
    )
    fake_cdk.chmod(0o755)
    versions = {"/usr/bin/node": "v20.20.2", str(project_node): "v22.23.5"}
    runner = SubprocessCdkRunner(
        which_of({"node": "/usr/bin/node", "cdk": str(fake_cdk)}), versions.get, tmp_path
    )
    note = runner.ensure_available()
    assert note is not None and "wants Node.js 24 or 22 (LTS)" in note and "20.20.2" in note
    lines: list[str] = []
    env = {"PATH": os.environ["PATH"], "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18"}
    assert runner.run(["synth"], env=env, cwd=tmp_path, on_line=lines.append) == 0
    assert lines == [
        f"node: {project_node}",
        f"jsii: {project_node}",
        "end of life: 18,22",  # the operator's own list is kept
        "untested: 1",
    ]


EVENT = "beekeeper-sale |  3/12 | 10:00:07 | CREATE_COMPLETE      | AWS::SQS::Queue | Visitors"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_progress_in_a_log_is_the_cdk_output_unchanged() -> None:
    stream = io.StringIO()
    reporter = ProgressReporter(stream, is_terminal=False, clock=Clock(), label="deploying")
    reporter.line(EVENT)
    reporter.line("done")
    reporter.finish()
    assert stream.getvalue() == f"{EVENT}\ndone\n"


def test_progress_on_a_terminal_colours_events_and_keeps_a_status_line() -> None:
    stream = io.StringIO()
    clock = Clock()
    reporter = ProgressReporter(stream, is_terminal=True, clock=clock, label="deploying")
    clock.now += 75
    reporter.line(EVENT)
    out = stream.getvalue()
    assert "\x1b[32m" + EVENT in out  # green: complete
    assert out.endswith("deploying 1m15s [#####...............] 3/12")
    reporter.line("beekeeper-sale | 4/12 | 10:00:09 | CREATE_FAILED | AWS::Lambda::Function")
    assert "\x1b[31mbeekeeper-sale | 4/12" in stream.getvalue()  # red: failed
    reporter.finish()
    assert stream.getvalue().endswith("\r\x1b[K")
