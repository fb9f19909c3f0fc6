"""Where a product module spells one of the room's public paths itself instead of taking it from
the route table (core/routes.py), for tests/unit/test_route_table.py.

What counts as spelling a path, in a string literal of Python source (docstrings aside), of
the page's JavaScript (comments aside) or an HTML attribute:

- a literal without whitespace (a value, not a sentence) that holds `/<path>` at a boundary:
  "/polling", "/beekeeper/GET", an f-string's "/client" piece after `{base}`;
- a literal that is a path relative to another (`polling`, `jwks.json`), or one followed by a
  query (`presence?token=`); the paths that are also common words (`room`, `state`, `work`,
  `client`, `enter`, `leave`, `presence`, `beekeeper`), alone or with a fragment (`work#`
  also begins a table key), count only where the literal is given as a URL: assigned to a
  name, a dict key or a keyword argument that says URL, path, route, location or resource, or
  in an HTML href, src or action.

A literal given as a file's name (assigned to a name that says FILE) is not a path.

Prose (a sentence naming /polling) is not a spelling: docs and messages may name paths.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from tests.support.packages import SOURCE_PACKAGES

TABLE_MODULE = "core/routes.py"
# The words a public path can be that are also ordinary words of the code.
COMMON_WORDS = frozenset(
    {"beekeeper", "room", "work", "state", "client", "enter", "leave", "presence"}
)
_URL_NAME = re.compile(r"(url|path|route|location|resource)s?$", re.IGNORECASE)
_FILE_NAME = re.compile(r"files?$", re.IGNORECASE)
_URL_ATTRIBUTES = frozenset({"href", "src", "action"})


@dataclass(frozen=True)
class Spelling:
    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text!r}"


class Paths:
    """The paths to look for (the route table's, given by the caller)."""

    def __init__(self, paths: Iterable[str]) -> None:
        names = sorted({path.removeprefix("/") for path in paths}, key=len, reverse=True)
        alternatives = "|".join(re.escape(name) for name in names)
        self._absolute = re.compile(rf"/(?:{alternatives})(?![\w.-])")
        self._relative = re.compile(rf"^(?P<name>{alternatives})(?P<rest>(?:[#?].*)?)$")

    def spelled(self, text: str, *, as_url: bool = False) -> bool:
        """`text` spells a path (`as_url`: it is given where a URL goes; None: where a file's
        name goes)."""
        if not text or any(ch.isspace() for ch in text):
            return False
        if self._absolute.search(text):
            return True
        match = self._relative.match(text)
        if not match:
            return False
        if as_url or match.group("rest").startswith("?"):
            return True
        return match.group("name") not in COMMON_WORDS


def product_files(root: Path) -> Iterator[Path]:
    for package in SOURCE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            name = path.relative_to(root).as_posix()
            if path.suffix in (".py", ".js", ".html") and path.is_file() and name != TABLE_MODULE:
                yield path


def spellings(root: Path, paths: Paths) -> list[Spelling]:
    """Every spelling of a path in the product's modules outside the table's."""
    found: list[Spelling] = []
    for path in product_files(root):
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            literals = _python_literals(text)
        elif path.suffix == ".js":
            literals = _javascript_literals(text)
        else:
            literals = _html_literals(text)
        found += [
            Spelling(name, line, value)
            for line, value, as_url in literals
            if paths.spelled(value, as_url=as_url)
        ]
    return found


# -- Python ----------------------------------------------------------------------------------


def _python_literals(source: str) -> list[tuple[int, str, bool]]:
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    as_url = _given_under(tree, _URL_NAME)
    file_names = _given_under(tree, _FILE_NAME)
    return [
        (node.lineno, node.value, id(node) in as_url)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings | file_names
    ]


def _given_under(tree: ast.AST, name: re.Pattern[str]) -> set[int]:
    """The string constants given under a name `name` matches: assigned to it, as a keyword
    argument or a dict key of it (the value itself, or a tuple or f-string of values; not
    what a call makes of them)."""
    given: set[int] = set()

    def mark(value: ast.AST | None) -> None:
        if isinstance(value, ast.Constant):
            given.add(id(value))
        elif isinstance(value, ast.Tuple | ast.List | ast.Set | ast.JoinedStr):
            for part in value.elts if not isinstance(value, ast.JoinedStr) else value.values:
                mark(part)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(name.search(_target_name(target)) for target in targets):
                mark(node.value)
        elif isinstance(node, ast.keyword) and node.arg and name.search(node.arg):
            mark(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                said = key.value if isinstance(key, ast.Constant) else None
                if isinstance(said, str) and name.search(said):
                    mark(value)
    return given


def _target_name(target: ast.AST) -> str:
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):
        return target.attr
    return ""


# -- JavaScript ------------------------------------------------------------------------------


def _javascript_literals(source: str) -> list[tuple[int, str, bool]]:
    """Each string literal's text and each template literal's text between its
    substitutions, comments skipped (regular expression literals hold no quotes here)."""
    found: list[tuple[int, str, bool]] = []
    index, line = 0, 1
    while index < len(source):
        char = source[index]
        if source.startswith("//", index):
            end = source.find("\n", index)
            index = len(source) if end < 0 else end
            continue
        if source.startswith("/*", index):
            end = source.index("*/", index) + 2
            line += source.count("\n", index, end)
            index = end
            continue
        if char in "'\"`":
            end, pieces = _javascript_string(source, index)
            found += [(line, piece, False) for piece in pieces]
            line += source.count("\n", index, end)
            index = end
            continue
        if char == "\n":
            line += 1
        index += 1
    return found


def _javascript_string(source: str, start: int) -> tuple[int, list[str]]:
    quote = source[start]
    pieces, current, index = [], [], start + 1
    while index < len(source):
        char = source[index]
        if char == "\\":
            current.append(source[index : index + 2])
            index += 2
            continue
        if char == quote:
            pieces.append("".join(current))
            return index + 1, pieces
        if quote == "`" and source.startswith("${", index):
            pieces.append("".join(current))
            current = []
            depth, index = 1, index + 2
            while depth:
                depth += {"{": 1, "}": -1}.get(source[index], 0)
                index += 1
            continue
        current.append(char)
        index += 1
    raise ValueError(f"an unterminated string at character {start}")


# -- HTML ------------------------------------------------------------------------------------


class _Attributes(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[int, str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        line = self.getpos()[0]
        for name, value in attrs:
            if value is not None:
                self.found.append((line, value, name in _URL_ATTRIBUTES))


def _html_literals(source: str) -> list[tuple[int, str, bool]]:
    parser = _Attributes()
    parser.feed(source)
    return parser.found
