"""scripts/local-demo's install says nothing but errors: the environment it installs Beekeeper
with keeps setuptools' "Editable installation ... !!" block (information only) off the
newcomer's screen. The build backend is run as pip runs it for `pip install -e`, with that
environment."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "local-demo"


def install_environment() -> dict[str, str]:
    """The variables the script sets on its editable install's line."""
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [line for line in text.splitlines() if "pip install" in line and " -e " in line]
    return dict(re.findall(r"\b([A-Z_]+)=\"([^\"]*)\"", line.split(".venv/bin/python")[0]))


def test_the_demos_editable_install_prints_no_setuptools_block(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    env.update(install_environment())
    built = subprocess.run(
        [sys.executable, "-c",
         f"from setuptools import build_meta; build_meta.build_editable({str(tmp_path)!r})"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert list(tmp_path.glob("beekeeper_waiting_room-*.whl"))
    assert "!!" not in built.stderr and "Editable installation" not in built.stderr
