"""The installed `beekeeper` executable, as an operator's shell runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from beekeeper.cli.node import PROJECT_NODE
from beekeeper.core.paths import PACKAGE_ROOT

BEEKEEPER = Path(sys.executable).parent / "beekeeper"

pytestmark = pytest.mark.slow


def run(
    *args: str, config: Path, path: str | None = None, credentials: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BEEKEEPER_CONFIG_DIR": str(config)}
    if path is not None:
        env["PATH"] = path
    if not credentials:  # none anywhere botocore looks: nothing can reach AWS
        for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
            env.pop(variable, None)
        env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
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


def test_deploy_without_node_on_path_takes_the_checkouts_or_says_to_install_one(
    tmp_path: Path,
) -> None:
    """With no node on PATH, deploy runs the CDK on the checkout's Node.js 22 where `npm ci`
    installed it (Linux x64; it then goes on to the credentials, which are missing here), and
    says to install Node.js where there is none."""
    config = tmp_path / "config"
    created = run(
        "init", "--yes", "--name", "sale", "--region", "eu-west-1",
        "--origin", "https://shop.example", "--rate", "60", config=config,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    result = run("deploy", "sale", config=config, path=str(empty_path), credentials=False)
    assert "Traceback" not in result.stderr
    if (PACKAGE_ROOT / PROJECT_NODE).is_file():
        assert result.returncode == 3, result.stderr
        assert "No AWS credentials were found" in result.stderr
        assert "Deploying needs Node.js" not in result.stderr
    else:
        assert result.returncode == 1, result.stderr
        assert "Deploying needs Node.js" in result.stderr
