"""The wheel built from this checkout and a fresh virtualenv with it: what a shop installs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    # --no-isolation: the build backend (setuptools) comes from this environment; what is
    # built is the same wheel, and the build needs no download.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (built,) = out.glob("beekeeper_waiting_room-*.whl")
    return built


def install_in_fresh_venv(wheel: Path, env_dir: Path) -> Path:
    """A plain virtualenv with the wheel and its base dependencies; returns its bin/ folder."""
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        # --no-compile: pip would compile every module of every dependency (the AWS CDK's
        # library alone is most of a minute of CPU); Python compiles what is imported.
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-compile",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return env_dir / "bin"
