"""The documents describe the product as it is: none names a commit of the project (a figure a
benchmark compares says what the other side is, not which commit it was)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Seven or more hex digits with at least one letter and one digit, as a word: an abbreviated
# commit. Plain numbers (ports, quota codes, epoch times) have no letter a-f, so they pass.
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def documents() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "bench" / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
    ]


def commits_named(text: str) -> list[str]:
    return COMMIT.findall(text)


def test_the_pattern_finds_an_abbreviated_commit_and_passes_numbers() -> None:
    assert commits_named("runs of 6441a3c and 0fb9ab1 in a row") == ["6441a3c", "0fb9ab1"]
    assert commits_named("port 8080, quota L-10498098, at 1795892653339, cafe") == []


def test_no_document_names_a_commit() -> None:
    named = {
        f"{path.relative_to(ROOT)}:{number}": found
        for path in documents()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if (found := commits_named(line))
    }
    assert not named, f"documents name commits: {named}"
