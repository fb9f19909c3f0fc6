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
    """A plain virtualenv with the wheel and its base dependencies; returns its bin/ folder.

    The dependencies are resolved as a shop's install resolves them: by uv where this test
    environment was installed with it (.ci/run), from uv's cache when it holds them (it does
    after .ci/run: the base dependencies are among the test extras'; 0.4 s against pip's 11 s
    of CPU), else by pip from the package index."""
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    uv = Path(sys.executable).with_name("uv")
    attempts: list[list[str]] = []
    if uv.exists():
        uv_install = [str(uv), "pip", "install", "--quiet", "--python", str(python), str(wheel)]
        attempts += [[*uv_install, "--offline"], uv_install]
    # --no-compile: pip would compile every module of every dependency (the AWS CDK's
    # library alone is most of a minute of CPU); Python compiles what is imported.
    attempts.append(
        [str(python), "-m", "pip", "install", "--quiet", "--no-compile",
         "--disable-pip-version-check", str(wheel)]
    )  # fmt: skip
    failures = []
    for command in attempts:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return env_dir / "bin"
        failures.append(f"{' '.join(command)}:\n{done.stderr}")
    raise AssertionError("the wheel did not install:\n" + "\n".join(failures))
