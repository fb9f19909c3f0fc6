"""The built wheel installs and runs its `beekeeper` command outside the repository.

The wheel is built from this checkout and installed, without its dependencies, into a fresh
virtualenv; the dependencies come from the test environment through a .pth file (installing
aws-cdk-lib again would cost a minute and prove nothing about our packaging).
"""

from __future__ import annotations

import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from beekeeper.vtl import template_values

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (built,) = out.glob("beekeeper_waiting_room-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding only the wheel; returns its bin/ folder."""
    env_dir = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # Dependencies only: a plain path entry, so the test venv's editable finder is not loaded.
    Path(purelib, "test-dependencies.pth").write_text(
        "\n".join(site.getsitepackages()) + "\n", encoding="utf-8"
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return env_dir / "bin"


def test_wheel_holds_only_the_beekeeper_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {t for t in top_level if not t.endswith(".dist-info")} == {"beekeeper"}
    assert not any(name.startswith(("cli/", "stacks/", "lambdas/", "tests/")) for name in names)
    assert "beekeeper/core/settings.py" in names
    assert "beekeeper/cli/main.py" in names


def test_installed_command_runs_outside_the_repo(installed: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [str(installed / "beekeeper"), "--help"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "virtual waiting room" in result.stdout


def test_installed_package_finds_its_data_files(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import json, beekeeper.core.paths as p, beekeeper.vtl as v\n"
        "print(json.dumps({'root': str(p.PACKAGE_ROOT),"
        " 'lambdas': sorted(f.name for f in p.LAMBDAS_DIR.glob('*.py')),"
        " 'vtl': v.template_names(),"
        " 'fragments': sorted(v.template_values(table_name='t', origin='https://x.example')),"
        " 'site': sorted(f.name for f in p.SITE_DIR.iterdir()"
        "   if f.is_file() and f.suffix != '.py'),"
        " 'stacks': sorted(f.name for f in p.STACKS_DIR.glob('*.py'))}))"
    )
    result = subprocess.run(
        [str(installed / "python"), "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    import json

    found = json.loads(result.stdout)
    assert not found["root"].startswith(str(REPO)), "imported from the checkout, not the wheel"
    expected = {
        "lambdas": sorted(f.name for f in (REPO / "lambdas").glob("*.py")),
        # Files starting with "_" are fragments template_values() reads: they must be packaged.
        "vtl": sorted(f.name for f in (REPO / "vtl").glob("*.vtl") if not f.name.startswith("_")),
        "fragments": sorted(template_values(table_name="t", origin="https://x.example")),
        "site": sorted(
            f.name
            for f in (REPO / "waiting_room_site").iterdir()
            if f.is_file() and f.suffix != ".py"
        ),
        "stacks": sorted(f.name for f in (REPO / "stacks").glob("*.py")),
    }
    for key, names in expected.items():
        assert found[key] == names, key
