"""The wheel, installed with its base dependencies only, deploys a room from outside the repo.

The wheel is built from this checkout (`python -m build`) and installed into a fresh virtualenv
(plain `python -m venv`) with nothing but its own `dependencies`, resolved by pip from the
package index: none of the test environment's packages are visible there. From a temporary
folder outside the repository the installed package synthesizes a room's stack and runs
`beekeeper --help`, `init --yes` and `list`; the deploy path must not import the local Velocity
engine (beekeeper.local), the charts (beekeeper.charts) or anything only `beekeeper local`, the
charts and the tests install.
"""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from beekeeper.vtl import template_values
from tests.support.wheel import build_wheel, install_in_fresh_venv

REPO = Path(__file__).resolve().parents[2]
# What only the `local`, `charts` and `test` extras install: the base install must not have them.
EXTRAS_ONLY = (
    "airspeed", "moto", "waitress", "werkzeug", "matplotlib", "numpy", "pytest", "hypothesis",
    "brotli",
)  # fmt: skip

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv with the wheel and its base dependencies; returns its bin/ folder."""
    return install_in_fresh_venv(wheel, tmp_path_factory.mktemp("venv"))


def _run(
    command: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _outside_environment(config: Path) -> dict[str, str]:
    """The caller's environment less anything that could reach into this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["BEEKEEPER_CONFIG_DIR"] = str(config)
    return env


def test_wheel_holds_only_the_beekeeper_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {t for t in top_level if not t.endswith(".dist-info")} == {"beekeeper"}
    assert not any(name.startswith(("cli/", "stacks/", "lambdas/", "tests/")) for name in names)
    assert not any("/tests/" in name for name in names)
    assert "beekeeper/core/settings.py" in names
    assert "beekeeper/cli/main.py" in names
    # Every folder of the repository's packages ships, sub-packages too.
    for folder in ("core", "cli", "stacks", "lambdas", "vtl", "simulator", "local"):
        for source in (REPO / folder).glob("**/*.py"):
            assert f"beekeeper/{source.relative_to(REPO)}" in names, source


def test_the_base_install_has_no_extra_and_nothing_of_the_test_environment(
    installed: Path, tmp_path: Path
) -> None:
    probe = (
        "import importlib.util, json, sys\n"
        f"print(json.dumps([n for n in {list(EXTRAS_ONLY)!r} if importlib.util.find_spec(n)]))\n"
    )
    result = _run([str(installed / "python"), "-c", probe], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_installed_command_runs_outside_the_repo(installed: Path, tmp_path: Path) -> None:
    env = _outside_environment(tmp_path / "config")
    helped = _run([str(installed / "beekeeper"), "--help"], tmp_path, env)
    assert helped.returncode == 0, helped.stderr
    assert "virtual waiting room" in helped.stdout

    created = _run(
        [
            str(installed / "beekeeper"),
            "init",
            "--yes",
            "--name",
            "wheel-room",
            "--display-name",
            "Wheel sale",
            "--region",
            "eu-west-1",
            "--origin",
            "https://shop.example.com",
            "--rate",
            "600",
        ],
        tmp_path,
        env,
    )
    assert created.returncode == 0, created.stderr
    assert (tmp_path / "config" / "rooms" / "wheel-room.toml").is_file()

    listed = _run([str(installed / "beekeeper"), "list", "--json"], tmp_path, env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert (row["name"], row["region"], row["deployed"]) == ("wheel-room", "eu-west-1", False)


# Run inside the installed environment: the CLI's deploy path and a synth of the room the CLI
# created, as `beekeeper deploy` runs `python -m beekeeper.stacks.app -c room=NAME`.
_DEPLOY_PATH_PROBE = """
import json, runpy, sys
import beekeeper.cli.main, beekeeper.cli.deployer
sys.argv = ["app"]
runpy.run_module("beekeeper.stacks.app", run_name="__main__")
print(json.dumps(sorted(name for name in sys.modules if name.startswith("beekeeper"))))
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def test_the_deploy_path_synthesizes_without_the_local_engine(
    installed: Path, tmp_path: Path
) -> None:
    env = _outside_environment(tmp_path / "config")
    created = _run(
        [
            str(installed / "beekeeper"),
            "init",
            "--yes",
            "--name",
            "deployable",
            "--display-name",
            "Deployable sale",
            "--region",
            "eu-west-1",
            "--origin",
            "https://bücher.example",
            "--rate",
            "600",
        ],
        tmp_path,
        env,
    )
    assert created.returncode == 0, created.stderr
    env |= {
        "CDK_OUTDIR": str(tmp_path / "cdk.out"),
        "CDK_CONTEXT_JSON": json.dumps({"room": "deployable"}),
    }
    result = _run([str(installed / "python"), "-c", _DEPLOY_PATH_PROBE], tmp_path, env)
    assert result.returncode == 0, result.stderr[-3000:]
    beekeeper_modules, top_level = (json.loads(line) for line in result.stdout.splitlines()[-2:])
    assert not [
        m for m in beekeeper_modules if m.startswith(("beekeeper.local", "beekeeper.charts"))
    ]
    assert not set(EXTRAS_ONLY) & set(top_level)
    template = json.loads((tmp_path / "cdk.out" / "beekeeper-deployable.template.json").read_text())
    tables = [r for r in template["Resources"].values() if r["Type"] == "AWS::DynamoDB::Table"]
    assert [t["Properties"]["TableName"] for t in tables] == ["beekeeper-deployable"]
    # Printed for the record (docs and issue notes quote the deploy path's imports).
    print("deploy path imports:", " ".join(beekeeper_modules))


def test_installed_package_finds_its_data_files(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import json, beekeeper.core.paths as p, beekeeper.vtl as v\n"
        "print(json.dumps({'root': str(p.PACKAGE_ROOT),"
        " 'lambdas': sorted(f.name for f in p.LAMBDAS_DIR.glob('*.py')),"
        " 'vtl': v.template_names(),"
        " 'fragments': sorted(v.template_values(table_name='t', origin='https://x.example')),"
        " 'site': sorted(f.name for f in p.SITE_DIR.iterdir()"
        "   if f.is_file() and f.suffix != '.py'),"
        " 'work': sorted(f.relative_to(p.SITE_DIR).as_posix()"
        "   for f in (p.SITE_DIR / 'work').rglob('*') if f.is_file()),"
        " 'stacks': sorted(f.name for f in p.STACKS_DIR.glob('*.py'))}))"
    )
    result = _run([str(installed / "python"), "-c", probe], tmp_path)
    assert result.returncode == 0, result.stderr
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
        # The work page's markup, scripts and strings (waiting_room_site/work_page.py).
        "work": sorted(
            f.relative_to(REPO / "waiting_room_site").as_posix()
            for f in (REPO / "waiting_room_site" / "work").rglob("*")
            if f.is_file()
        ),
    }
    for key, names in expected.items():
        assert found[key] == names, key
