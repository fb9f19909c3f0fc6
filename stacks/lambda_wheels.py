"""The consumer's third-party code, as wheels built for Lambda's platform, with no Docker.

The consumer signs admission tickets with `cryptography` (OpenSSL, compiled code). Lambda runs
the room's functions on ARM64 under CPython 3.14 (stacks/functions.py); the machine that
deploys may be anything. pip downloads the wheels PyPI has built for exactly that platform
(`--platform manylinux_*_aarch64 --python-version 3.14 --implementation cp --only-binary=:all:`:
nothing is compiled here), each pinned by version and SHA-256 in lambda-requirements.txt, into a
per-user cache. A wheel is a zip of what an install puts in site-packages, so staging the asset
unpacks them beside `beekeeper/`.

Synth only reads the cache and never downloads (the tests synth offline): `beekeeper deploy`
fills it before it runs the CDK, and .ci/run fills it for the tests with
`python -m beekeeper.stacks.lambda_wheels`. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from beekeeper.core.paths import STACKS_DIR

REQUIREMENTS_FILE = STACKS_DIR / "lambda-requirements.txt"
CACHE_VARIABLE = "BEEKEEPER_WHEEL_CACHE"
# Written last into a complete download: a folder without it is an interrupted one.
COMPLETE_MARKER = ".complete"
# glibc of Lambda's Amazon Linux 2023 runtimes is 2.34: wheels for it and for older glibc run.
GLIBC_TAGS = ("manylinux_2_34", "manylinux_2_28", "manylinux2014")
# Lambda's architecture names, as pip's platform tags spell the machine.
MACHINES = {"arm64": "aarch64", "x86_64": "x86_64"}
# The runtime and architecture the room's functions run on (Lambda's names for them). Named
# here, in a module of the standard library only, so `beekeeper deploy` and .ci/run fetch the
# wheels without starting the CDK's jsii runtime; stacks/functions.py makes the CDK's runtime
# and architecture from them.
LAMBDA_RUNTIME = "python3.14"
LAMBDA_ARCHITECTURE = "arm64"

Run = Callable[[Sequence[str]], int]


class MissingWheels(RuntimeError):
    """The cache lacks the wheels; the message says how to fill it."""


@dataclass(frozen=True)
class WheelTarget:
    """The platform the wheels must run on: Lambda's Python version and machine."""

    python_version: str  # "3.14"
    machine: str  # "aarch64"

    @classmethod
    def for_lambda(cls, runtime_name: str, architecture_name: str) -> WheelTarget:
        """From CDK's names: Runtime.PYTHON_3_14.name is "python3.14", ARM_64's is "arm64"."""
        if not runtime_name.startswith("python") or architecture_name not in MACHINES:
            raise ValueError(f"no wheels for {runtime_name} on {architecture_name}")
        return cls(runtime_name.removeprefix("python"), MACHINES[architecture_name])

    @property
    def platforms(self) -> tuple[str, ...]:
        return tuple(f"{glibc}_{self.machine}" for glibc in GLIBC_TAGS)

    def folder_name(self, requirements: bytes) -> str:
        # A new pin or a new platform gets its own folder: a stale cache is never reused.
        pins = hashlib.sha256(requirements).hexdigest()[:12]
        return f"cp{self.python_version.replace('.', '')}-{self.machine}-{pins}"


# The consumer's compiled dependencies are wheels for exactly Lambda's runtime and architecture.
WHEEL_TARGET = WheelTarget.for_lambda(LAMBDA_RUNTIME, LAMBDA_ARCHITECTURE)


def cache_root(environ: Mapping[str, str]) -> Path:
    """$BEEKEEPER_WHEEL_CACHE, else $XDG_CACHE_HOME/beekeeper/lambda-wheels, else
    ~/.cache/beekeeper/lambda-wheels (a cache: deleting it costs one download)."""
    if environ.get(CACHE_VARIABLE):
        return Path(environ[CACHE_VARIABLE]).expanduser()
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    return Path(base).expanduser() / "beekeeper" / "lambda-wheels"


def wheel_dir(
    target: WheelTarget, environ: Mapping[str, str], requirements: Path = REQUIREMENTS_FILE
) -> Path:
    return cache_root(environ) / target.folder_name(requirements.read_bytes())


def download_command(
    target: WheelTarget, destination: Path, requirements: Path = REQUIREMENTS_FILE
) -> list[str]:
    platforms = [arg for platform in target.platforms for arg in ("--platform", platform)]
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--only-binary=:all:",
        *platforms,
        "--python-version",
        target.python_version,
        "--implementation",
        "cp",
        "--require-hashes",
        "--no-deps",  # every dependency is pinned in the file itself
        "--requirement",
        str(requirements),
        "--dest",
        str(destination),
    ]


def _run(command: Sequence[str]) -> int:
    return subprocess.run(list(command), check=False).returncode  # noqa: S603 - our own pip


def fetch(
    target: WheelTarget,
    environ: Mapping[str, str],
    *,
    run: Run = _run,
    requirements: Path = REQUIREMENTS_FILE,
) -> Path:
    """The folder of the target's wheels, downloaded first when the cache lacks them."""
    folder = wheel_dir(target, environ, requirements)
    if (folder / COMPLETE_MARKER).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".download-") as partial:
        code = run(download_command(target, Path(partial), requirements))
        if code != 0:
            raise MissingWheels(
                f"pip could not download the Lambda's wheels for Python {target.python_version} "
                f"on {target.machine} (exit code {code}; its output above says why). Check the "
                "network (PyPI must be reachable) and run again."
            )
        Path(partial, COMPLETE_MARKER).write_text("", encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        Path(partial).rename(folder)
    return folder


def cached_wheels(
    target: WheelTarget, environ: Mapping[str, str], requirements: Path = REQUIREMENTS_FILE
) -> list[Path]:
    """The cached wheels; never downloads (synth must work offline)."""
    folder = wheel_dir(target, environ, requirements)
    wheels = sorted(folder.glob("*.whl"))
    if not (folder / COMPLETE_MARKER).exists() or not wheels:
        raise MissingWheels(
            f"The Lambda's wheels for Python {target.python_version} on {target.machine} are not "
            f"in {folder}. `beekeeper deploy` downloads them; to synthesize without deploying, "
            f"run `{shlex.quote(sys.executable)} -m beekeeper.stacks.lambda_wheels` once (it "
            "needs PyPI), then synthesize again."
        )
    return wheels


def unpack(wheels: Sequence[Path], destination: Path) -> list[str]:
    """Unpack the wheels into `destination` as an install would lay them out; returns the
    paths written (posix, relative). Only plain files inside the folder are accepted."""
    written: list[str] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            for member in sorted(archive.namelist()):
                target = (destination / member).resolve()
                if member.endswith("/"):
                    continue
                if not target.is_relative_to(destination.resolve()) or ".data/" in member:
                    raise ValueError(f"{wheel.name}: {member} does not belong in an asset")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))
                written.append(member)
    return written


def main(environ: Mapping[str, str] = os.environ) -> int:
    """Fill the cache for the deployed platform (what .ci/run does before the tests)."""
    try:
        folder = fetch(WHEEL_TARGET, environ)
    except MissingWheels as error:
        print(error, file=sys.stderr)
        return 1
    print(f"Lambda wheels for Python {WHEEL_TARGET.python_version} on {WHEEL_TARGET.machine}:")
    for wheel in sorted(folder.glob("*.whl")):
        print(f"  {wheel.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
