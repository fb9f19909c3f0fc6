"""No product function is longer than 150 lines: a reader holds one in view (issue 34).

The simulator's run is a class with named phases (simulator/run.py `Simulation`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = (
    "apigateway",
    "charts",
    "cli",
    "core",
    "lambdas",
    "local",
    "room",
    "simulator",
    "stacks",
    "store",
    "vtl",
    "waiting_room_site",
)
MAX_LINES = 150


def long_functions(source: str, where: str) -> dict[str, int]:
    """Every function or method of `source` longer than MAX_LINES, by `where` and its name."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                assert child.end_lineno is not None
                lines = child.end_lineno - child.lineno + 1
                if lines > MAX_LINES:
                    found[f"{where} {prefix}{child.name}"] = lines
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(source), "")
    return found


def test_the_check_counts_a_method_whole_and_names_it_by_its_class() -> None:
    body = "\n".join("    x = 1" for _ in range(MAX_LINES))
    source = f"class Run:\n  def long(self):\n{body}\n  def short(self):\n    pass\n"
    assert long_functions(source, "m.py") == {"m.py Run.long": MAX_LINES + 1}


def test_no_product_function_is_longer_than_150_lines() -> None:
    found: dict[str, int] = {}
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            found |= long_functions(path.read_text(encoding="utf-8"), where)
    assert found == {}
