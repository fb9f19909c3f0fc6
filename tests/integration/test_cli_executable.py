"""The installed `beekeeper` executable, as an operator's shell runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BEEKEEPER = Path(sys.executable).parent / "beekeeper"

pytestmark = pytest.mark.slow


def run(*args: str, config: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(config)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run(
        [str(BEEKEEPER), *args], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_init_then_list(tmp_path: Path) -> None:
    config = tmp_path / "config"
    created = run(
        "init", "--yes", "--name", "spring-sale", "--display-name", "Spring Sale",
        "--region", "eu-west-1", "--origin", "https://shop.example", "--rate", "1,200", "--drt",
        config=config,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert (config / "rooms" / "spring-sale.toml").is_file()

    listed = run("list", "--json", config=config)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [
        {"name": "spring-sale", "region": "eu-west-1", "deployed": False, "local": False}
    ]


def test_user_mistakes_get_a_sentence_and_their_exit_code(tmp_path: Path) -> None:
    config = tmp_path / "config"
    bad_rate = run("rate", "spring-sale", "0", config=config)
    assert bad_rate.returncode == 2
    assert "rate: 0 is not allowed; use a whole number from 1 to 300,000" in bad_rate.stderr

    unknown = run("status", "spring-sale", config=config)
    assert unknown.returncode == 1
    assert unknown.stderr == (
        "Error: There is no room named 'spring-sale' (rooms: none yet); "
        "create it with `beekeeper init --name spring-sale`.\n"
    )
    assert unknown.stdout == ""


def test_deploy_without_node_says_to_install_it(tmp_path: Path) -> None:
    config = tmp_path / "config"
    created = run(
        "init", "--yes", "--name", "sale", "--region", "eu-west-1",
        "--origin", "https://shop.example", "--rate", "60", config=config,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    result = run("deploy", "sale", config=config, path=str(empty_path))
    assert result.returncode == 1
    assert "Deploying needs Node.js" in result.stderr
    assert "Traceback" not in result.stderr
