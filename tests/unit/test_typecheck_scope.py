"""mypy reads only the AWS CDK modules the project imports (pyproject.toml's overrides): a module
the stacks start to import and the list leaves out would be skipped, its constructs' arguments
unchecked, without a word from mypy."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What mypy checks is the installed package: the repository's folders but these.
NOT_CHECKED = {"tests", "bench", "scripts", "build", "node_modules", "docs", "examples"}


def checked_sources() -> list[Path]:
    return [
        path
        for path in ROOT.rglob("*.py")
        if not (set(path.relative_to(ROOT).parts[:-1]) & NOT_CHECKED)
        and not any(part.startswith(".") for part in path.relative_to(ROOT).parts)
    ]


def cdk_modules_imported(source: str) -> set[str]:
    """The aws_cdk modules a source imports (`from aws_cdk import aws_sqs` imports
    aws_cdk.aws_sqs; `from aws_cdk import Duration`, the package itself)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "aws_cdk"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "aws_cdk":
                continue
            found.add(node.module)
            if node.module == "aws_cdk":
                found |= {f"aws_cdk.{a.name}" for a in node.names if a.name.startswith("aws_")}
    return found


def followed_cdk_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    followed: set[str] = set()
    for override in config["tool"]["mypy"]["overrides"]:
        modules = override["module"]
        if override.get("follow_imports") == "normal":
            followed |= set([modules] if isinstance(modules, str) else modules)
    return followed


def test_the_scan_finds_each_form_of_import() -> None:
    source = (
        "import aws_cdk as cdk\nfrom aws_cdk import Duration, aws_sqs as sqs\n"
        "from aws_cdk.aws_dynamodb import ITable\nimport json\n"
    )
    assert cdk_modules_imported(source) == {"aws_cdk", "aws_cdk.aws_sqs", "aws_cdk.aws_dynamodb"}


def test_mypy_follows_exactly_the_cdk_modules_the_project_imports() -> None:
    imported: set[str] = set()
    for path in checked_sources():
        imported |= cdk_modules_imported(path.read_text(encoding="utf-8"))
    assert "aws_cdk.aws_lambda" in imported  # the scan reads the stacks
    assert followed_cdk_modules() == imported
