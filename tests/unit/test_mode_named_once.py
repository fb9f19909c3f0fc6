"""The room's mode is decided in one place: `RoomSettings.mode` (core/settings.py).

Whether a room is in capacity mode, and whether a live cap holds just now, are two facts that
both read `max_inside` against 0; each has its definition in core/settings.py (`Mode`,
`capped`). No other product module compares a `max_inside` (or a session length, which only a
capacity room has) with 0 or takes it as a truth value: they read `settings.mode` or call
`capped`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from beekeeper.core.settings import Mode, RoomSettings, capped

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
# Where the mode and the live cap are defined.
DEFINITIONS = {Path("core/settings.py")}
MODE_NAMES = {"max_inside", "session_seconds"}


def _named(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in MODE_NAMES
    return isinstance(node, ast.Attribute) and node.attr in MODE_NAMES


def _small_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
        and node.value in (0, 1)
    )


def _truth_tested(test: ast.AST) -> list[ast.AST]:
    """What a condition takes as truth values: itself, or the parts of an and/or, a not."""
    if isinstance(test, ast.BoolOp):
        return [part for value in test.values for part in _truth_tested(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _truth_tested(test.operand)
    return [test]


def mode_decisions(source: str) -> list[int]:
    """The lines of `source` that decide the mode (or the cap) from a `max_inside` or a
    session length themselves."""
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        tested: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_named(o) for o in operands) and any(_small_number(o) for o in operands):
                found.append(node.lineno)
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            tested = _truth_tested(node.test)
        elif isinstance(node, ast.comprehension):
            tested = [part for test in node.ifs for part in _truth_tested(test)]
        elif isinstance(node, ast.BoolOp):
            # `a or b` as a value: every part but the last is a truth value.
            tested = node.values[:-1]
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            tested = [node.operand]
        found.extend(t.lineno for t in tested if _named(t))
    return sorted(set(found))


def test_the_checker_finds_every_way_of_deciding_the_mode() -> None:
    source = "\n".join(
        [
            "a = settings.max_inside > 0",
            "b = 0 < max_inside",
            "if settings.max_inside: pass",
            "c = x if session_seconds else y",
            "d = not config.max_inside",
            "e = settings.max_inside or other",
            "f = config.max_inside == 0",
            "g = settings.max_inside < 1",
            "h = settings.mode is Mode.CAPACITY",  # the way to ask: not a finding
            "i = max(0, max_inside - inside)",  # arithmetic with the cap: not a finding
            "j = grace or session_seconds",  # a fallback value, not a truth value
            "if ready and not settings.max_inside: pass",
            "k = [n for n in rooms if n.max_inside]",
        ]
    )
    assert mode_decisions(source) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 13]


def test_no_product_module_decides_the_mode_outside_its_definition() -> None:
    offenders = []
    for folder in PRODUCT:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative in DEFINITIONS:
                continue
            for line in mode_decisions(path.read_text(encoding="utf-8")):
                offenders.append(f"{relative}:{line}")
    assert offenders == [], (
        "decide the mode with RoomSettings.mode, and whether the live cap holds with "
        f"core.settings.capped: {offenders}"
    )


def room(**changes: object) -> RoomSettings:
    return RoomSettings(
        name="sale",
        display_name="Sale",
        region="us-east-1",
        origin="https://shop.example",
        rate=60,
    ).replace(**changes)


@pytest.mark.parametrize(("max_inside", "mode"), [(0, Mode.RATE), (1, Mode.CAPACITY)])
def test_the_mode_is_the_deployed_cap(max_inside: int, mode: Mode) -> None:
    assert room(max_inside=max_inside).mode is mode


def test_the_live_cap_is_its_own_fact() -> None:
    # A capacity room whose cap an operator lifted (`beekeeper capacity NAME 0`) is still in
    # capacity mode: its places, sessions and routes stay; only the cap is off.
    assert room(max_inside=50).mode is Mode.CAPACITY
    assert not capped(0) and capped(50)
