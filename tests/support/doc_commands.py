"""The shell commands README.md and docs/*.md show, as a reader would copy them.

A command is a line of a fenced code block (```sh or untagged) that starts with one of
PROGRAMS (or with environment assignments before one), with its `\\`-continued lines joined and
its shell comment dropped; the block's other lines are output. An inline code span is a
command when it starts with `beekeeper` or `.venv/bin/beekeeper`, goes on past the command's
name (`beekeeper status local`, `beekeeper --help`), and none of its words is a placeholder
(NAME, N, TIME, `...`, `<...>`, `[...]`, `a|b`): a span such as `beekeeper deploy NAME` or a
bare `beekeeper status` names a command, it does not run one.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")))
PROGRAMS = frozenset(
    {
        "beekeeper",
        ".venv/bin/beekeeper",
        ".venv/bin/python",
        "scripts/local-demo",
        "scripts/check",
        "bash",
        "pip",
        "curl",
        "npx",
    }
)
SHELL_BLOCKS = frozenset({"sh", "bash", "shell", ""})
_FENCE = re.compile(r"^```(\w*)\s*$")
_SPAN = re.compile(r"`([^`\n]+)`")
_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_.]*$|[<>\[\]|]|\.\.\.|^FILE\.")


@dataclass(frozen=True)
class Command:
    document: str
    line: int
    words: tuple[str, ...]
    inline: bool = False

    @property
    def text(self) -> str:
        return shlex.join(self.words)

    @property
    def program(self) -> str:
        return next(w for w in self.words if not _ASSIGNMENT.fullmatch(w))


def _words(line: str) -> tuple[str, ...]:
    try:
        return tuple(shlex.split(line, comments=True))
    except ValueError:
        return ()


def _is_command(words: tuple[str, ...]) -> bool:
    rest = [w for w in words if not _ASSIGNMENT.fullmatch(w)]
    return bool(rest) and rest[0] in PROGRAMS


def block_commands(document: str, text: str) -> list[Command]:
    found: list[Command] = []
    language: str | None = None
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        fence = _FENCE.match(line)
        if line.startswith("```"):
            language = (fence.group(1) if fence else "?") if language is None else None
            continue
        if language is None or language not in SHELL_BLOCKS:
            continue
        start, joined = pending if pending else (number, "")
        joined += line.rstrip("\\") + " " if line.endswith("\\") else line
        if line.endswith("\\"):
            pending = (start, joined)
            continue
        pending = None
        words = _words(joined)
        if _is_command(words):
            found.append(Command(document, start, words))
    return found


def inline_commands(document: str, text: str) -> list[Command]:
    found: list[Command] = []
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            continue
        for span in _SPAN.findall(line):
            words = _words(span)
            if (
                (len(words) > 2 or (len(words) == 2 and words[1].startswith("-")))
                and words[0] in {"beekeeper", ".venv/bin/beekeeper"}
                and not any(_PLACEHOLDER.search(w) for w in words[1:])
            ):
                found.append(Command(document, number, words, inline=True))
    return found


def shown_commands() -> list[Command]:
    """Every command of the documents, in document order (README first)."""
    commands: list[Command] = []
    for document in DOCUMENTS:
        text = (REPO / document).read_text(encoding="utf-8")
        commands += block_commands(document, text) + inline_commands(document, text)
    return commands


def is_simulation(command: Command) -> bool:
    """A `beekeeper simulate` run: tests/unit/pipeline/test_pages_simulation.py runs each as
    written (in a directory of its own, with --json added) and holds its figures to the
    bounds, so tests/integration/test_doc_commands.py does not run it a second time."""
    return command.words[:2] == ("beekeeper", "simulate") and not command.inline


def documented_simulations() -> list[tuple[str, ...]]:
    """Every `beekeeper simulate` command the documents show, once each, as its arguments."""
    found: list[tuple[str, ...]] = []
    for command in shown_commands():
        if is_simulation(command) and command.words[2:] not in found:
            found.append(command.words[2:])
    return found
