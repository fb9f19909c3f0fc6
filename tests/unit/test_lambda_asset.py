"""The Lambda asset: installed layout, nothing extra, the same hash for the same contents."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beekeeper.stacks.lambda_asset import asset_files, stage_lambda_source


@pytest.fixture
def sources(tmp_path: Path) -> tuple[Path, Path]:
    core = tmp_path / "src" / "core"
    lambdas = tmp_path / "src" / "lambdas"
    for folder in (core, lambdas / "sub", lambdas / "tests", lambdas / "__pycache__"):
        folder.mkdir(parents=True)
    (core / "settings.py").write_text("S = 1\n")
    (core / "notes.txt").write_text("not python\n")
    (lambdas / "producer.py").write_text("def handler(e, c): ...\n")
    (lambdas / "sub" / "data.json").write_text("{}\n")
    (lambdas / "tests" / "test_producer.py").write_text("def test(): ...\n")
    (lambdas / "__pycache__" / "producer.cpython-311.pyc").write_bytes(b"\0")
    return core, lambdas


def test_asset_holds_core_python_and_all_lambdas_files_but_tests(
    sources: tuple[Path, Path],
) -> None:
    core, lambdas = sources
    assert sorted(asset_files(core_dir=core, packages={"lambdas": lambdas})) == [
        "beekeeper/core/settings.py",
        "beekeeper/lambdas/producer.py",
        "beekeeper/lambdas/sub/data.json",
    ]


def test_staging_copies_contents_and_the_cdk_hash_is_stable(
    sources: tuple[Path, Path], tmp_path: Path
) -> None:
    from aws_cdk import FileSystem

    core, lambdas = sources
    first = stage_lambda_source(
        _empty(tmp_path / "a"), core_dir=core, packages={"lambdas": lambdas}
    )
    os.utime(core / "settings.py", (1, 1))  # a different checkout time changes nothing
    second = stage_lambda_source(
        _empty(tmp_path / "b"), core_dir=core, packages={"lambdas": lambdas}
    )
    assert (second / "beekeeper/lambdas/producer.py").read_text() == "def handler(e, c): ...\n"
    assert FileSystem.fingerprint(str(first)) == FileSystem.fingerprint(str(second))
    (lambdas / "producer.py").write_text("def handler(e, c): return 1\n")
    third = stage_lambda_source(
        _empty(tmp_path / "c"), core_dir=core, packages={"lambdas": lambdas}
    )
    assert FileSystem.fingerprint(str(third)) != FileSystem.fingerprint(str(first))


def test_staging_refuses_a_folder_that_is_not_empty(
    sources: tuple[Path, Path], tmp_path: Path
) -> None:
    core, lambdas = sources
    target = _empty(tmp_path / "full")
    (target / "stale.py").write_text("")
    with pytest.raises(ValueError, match="must be empty"):
        stage_lambda_source(target, core_dir=core, packages={"lambdas": lambdas})


def _empty(path: Path) -> Path:
    path.mkdir()
    return path
