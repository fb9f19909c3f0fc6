"""The consumer's crypto wheels: pinned, downloaded for Lambda's platform, cached, unpacked."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from beekeeper.stacks import lambda_wheels
from beekeeper.stacks.lambda_asset import stage_lambda_source
from beekeeper.stacks.lambda_wheels import (
    COMPLETE_MARKER,
    MissingWheels,
    WheelTarget,
    cache_root,
    cached_wheels,
    download_command,
    fetch,
    unpack,
)

TARGET = WheelTarget("3.14", "aarch64")


def make_wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return path


class FakePip:
    """Stands in for `pip download`: writes a wheel into --dest, or fails."""

    def __init__(self, code: int = 0) -> None:
        self.code = code
        self.commands: list[list[str]] = []

    def __call__(self, command: Sequence[str]) -> int:
        self.commands.append(list(command))
        dest = Path(command[command.index("--dest") + 1])
        make_wheel(dest / "cryptography-50-cp311-abi3-manylinux_2_34_aarch64.whl", {"c.py": b""})
        return self.code


def test_the_target_is_lambdas_runtime_and_architecture() -> None:
    from beekeeper.stacks.functions import ARCHITECTURE, RUNTIME
    from beekeeper.stacks.lambda_wheels import WHEEL_TARGET

    assert WheelTarget.for_lambda(RUNTIME.name, ARCHITECTURE.name) == WHEEL_TARGET
    assert WheelTarget("3.14", "aarch64") == WHEEL_TARGET
    assert WheelTarget.for_lambda("python3.12", "x86_64").platforms[0] == "manylinux_2_34_x86_64"
    with pytest.raises(ValueError, match="no wheels"):
        WheelTarget.for_lambda("nodejs22.x", "arm64")


def test_every_requirement_is_pinned_to_a_version_and_a_hash() -> None:
    lines = [
        line
        for line in lambda_wheels.REQUIREMENTS_FILE.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    names = set()
    for line in lines:
        match = re.fullmatch(r"([a-z0-9-]+)==[0-9.]+ --hash=sha256:[0-9a-f]{64}", line)
        assert match, line
        names.add(match.group(1))
    # cryptography and what it needs at run time on CPython.
    assert names == {"cryptography", "cffi", "pycparser"}


def test_pip_is_asked_for_binary_wheels_of_the_target_platform_checked_by_hash(
    tmp_path: Path,
) -> None:
    command = download_command(TARGET, tmp_path)
    joined = " ".join(command)
    assert command[1:4] == ["-m", "pip", "download"]
    assert "--only-binary=:all:" in command and "--require-hashes" in command
    assert "--platform manylinux_2_34_aarch64" in joined
    assert "--python-version 3.14 --implementation cp" in joined
    assert f"--requirement {lambda_wheels.REQUIREMENTS_FILE}" in joined


def test_the_cache_is_filled_once_and_then_read_without_pip(tmp_path: Path) -> None:
    environ = {lambda_wheels.CACHE_VARIABLE: str(tmp_path / "cache")}
    pip = FakePip()
    folder = fetch(TARGET, environ, run=pip)
    assert (folder / COMPLETE_MARKER).exists()
    assert fetch(TARGET, environ, run=pip) == folder
    assert len(pip.commands) == 1
    assert [w.name for w in cached_wheels(TARGET, environ)] == [
        "cryptography-50-cp311-abi3-manylinux_2_34_aarch64.whl"
    ]


def test_a_failed_download_leaves_nothing_half_done_and_says_what_to_check(
    tmp_path: Path,
) -> None:
    environ = {lambda_wheels.CACHE_VARIABLE: str(tmp_path / "cache")}
    with pytest.raises(MissingWheels, match="PyPI must be reachable"):
        fetch(TARGET, environ, run=FakePip(code=1))
    with pytest.raises(MissingWheels, match="beekeeper deploy"):
        cached_wheels(TARGET, environ)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []


def test_the_cache_follows_the_documented_precedence(tmp_path: Path) -> None:
    assert cache_root({lambda_wheels.CACHE_VARIABLE: "/w", "XDG_CACHE_HOME": "/x"}) == Path("/w")
    assert cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/beekeeper/lambda-wheels")
    assert cache_root({"HOME": "/home/op"}) == Path("/home/op/.cache/beekeeper/lambda-wheels")


def test_a_new_pin_gets_a_new_cache_folder(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("cryptography==1\n")
    second.write_text("cryptography==2\n")
    environ = {lambda_wheels.CACHE_VARIABLE: str(tmp_path)}
    assert lambda_wheels.wheel_dir(TARGET, environ, first) != lambda_wheels.wheel_dir(
        TARGET, environ, second
    )


@pytest.mark.parametrize("member", ["../outside.py", "pkg-1.data/scripts/run"])
def test_unpacking_refuses_what_does_not_belong_in_an_asset(tmp_path: Path, member: str) -> None:
    wheel = make_wheel(tmp_path / "bad.whl", {member: b"x"})
    target = tmp_path / "asset"
    target.mkdir()
    with pytest.raises(ValueError, match="does not belong"):
        unpack([wheel], target)


def test_staging_unpacks_wheels_beside_the_rooms_code_and_refuses_a_clash(
    tmp_path: Path,
) -> None:
    from aws_cdk import FileSystem

    core, lambdas = tmp_path / "core", tmp_path / "lambdas"
    core.mkdir()
    lambdas.mkdir()
    (core / "settings.py").write_text("S = 1\n")
    (lambdas / "consumer.py").write_text("def handler(e, c): ...\n")
    wheel = make_wheel(
        tmp_path / "lib.whl", {"lib/__init__.py": b"X = 1\n", "lib-1.dist-info/RECORD": b""}
    )
    staged = []
    for name in ("a", "b"):
        destination = tmp_path / name
        destination.mkdir()
        staged.append(
            stage_lambda_source(
                destination, core_dir=core, packages={"lambdas": lambdas}, wheels=[wheel]
            )
        )
    assert (staged[0] / "lib" / "__init__.py").read_text() == "X = 1\n"
    assert (staged[0] / "beekeeper" / "lambdas" / "consumer.py").is_file()
    assert FileSystem.fingerprint(str(staged[0])) == FileSystem.fingerprint(str(staged[1]))
    clash = make_wheel(tmp_path / "clash.whl", {"beekeeper/core/settings.py": b"evil"})
    destination = tmp_path / "c"
    destination.mkdir()
    with pytest.raises(ValueError, match="own package"):
        stage_lambda_source(
            destination, core_dir=core, packages={"lambdas": lambdas}, wheels=[clash]
        )


def test_the_wheels_are_fetched_without_starting_the_cdk() -> None:
    """`beekeeper deploy` and .ci/run fetch the wheels before any synth: loading the CDK there
    would start jsii's Node.js runtime (and its banner about the Node.js release)."""
    code = (
        "import sys\n"
        "from beekeeper.stacks.lambda_wheels import WHEEL_TARGET, main\n"
        "print(sorted(m for m in sys.modules if m.startswith(('aws_cdk', 'jsii'))))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"
