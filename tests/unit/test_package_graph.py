"""The top-level packages import each other without a cycle, and API Gateway's emulation
(beekeeper.apigateway) depends on nothing that uses it.

Every import counts, a function's own too (a lazy import still ties the packages together):
the graph is read from the source, not from what a test run happened to import.
"""

from __future__ import annotations

import ast
from pathlib import Path

from beekeeper.core.paths import PACKAGE_ROOT
from tests.support.packages import SOURCE_PACKAGES

PACKAGES = SOURCE_PACKAGES


def imported(path: Path) -> set[str]:
    """The beekeeper.<package> names a module imports, wherever in the module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "beekeeper" and len(parts) > 1 and parts[1] in PACKAGES:
                found.add(parts[1])
    return found


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        edges: set[str] = set()
        for path in (PACKAGE_ROOT / package).glob("**/*.py"):
            edges |= imported(path)
        graph[package] = edges - {package}
    return graph


def a_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of the graph as the packages along it, or []."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = "open"
        trail.append(node)
        for following in sorted(graph[node]):
            if state.get(following) == "open":
                return [*trail[trail.index(following) :], following]
            if following not in state:
                found = visit(following)
                if found:
                    return found
        state[node] = "done"
        trail.pop()
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_graph_is_read_from_every_import() -> None:
    graph = package_graph()
    # A lazy import inside a function is an edge too (simulator/capacity.py's).
    assert "apigateway" in graph["simulator"]
    # The reports draw what the simulator and the functions' records hold, in core's words,
    # nothing of the CLI.
    assert graph["charts"] == {"core", "room", "simulator"}
    assert a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_two_packages_import_each_other_even_through_others() -> None:
    assert a_cycle(package_graph()) == []


def test_only_the_stack_names_the_handlers() -> None:
    """The room's logic is its own package: the handlers (lambdas/) bind it to a Lambda
    container, and nothing else imports them; the stack names them as strings."""
    graph = package_graph()
    importers = sorted(package for package, edges in graph.items() if "lambdas" in edges)
    assert importers == []
    assert graph["lambdas"] <= {"core", "room"}


def test_the_emulation_depends_only_on_what_describes_the_room() -> None:
    graph = package_graph()
    assert graph["apigateway"] <= {"core", "vtl"}
    # core/ ships in the Lambda asset: it imports no other package of ours.
    assert graph["core"] == set()
