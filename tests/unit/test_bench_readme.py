"""bench/README.md has a section for every benchmark in bench/, headed by its file name, that
shows how to run it; every flag a shown command passes is one the script takes."""

from __future__ import annotations

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
README = BENCH / "README.md"
# Modules the benchmarks import, not benchmarks themselves (the README names them as such).
HELPERS = ("local_room.py", "prices.py")


def sections() -> dict[str, str]:
    """Each `## <script>.py` section's text, by script."""
    parts = re.split(r"^## (\S+\.py)\s*$", README.read_text(encoding="utf-8"), flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def shown_commands(text: str) -> list[list[str]]:
    """The indented command lines that run a script of bench/."""
    return [
        line.split() for line in text.splitlines() if line.startswith("    .venv/bin/python bench/")
    ]


def flags_taken(script: Path) -> set[str]:
    return set(re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", script.read_text(encoding="utf-8")))


def test_every_benchmark_has_a_section_and_no_section_names_a_missing_one() -> None:
    scripts = {p.name for p in BENCH.glob("*.py")} - set(HELPERS)
    assert set(sections()) == scripts
    text = README.read_text(encoding="utf-8")
    assert all(f"`{helper}`" in text for helper in HELPERS)


def test_each_section_shows_how_to_run_its_script_with_flags_it_takes() -> None:
    for script, text in sections().items():
        commands = shown_commands(text)
        assert commands, f"{script}: no command shown"
        for words in commands:
            assert words[1] == f"bench/{script}", f"{script}'s section runs {words[1]}"
            shown = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", " ".join(words)))
            unknown = shown - flags_taken(BENCH / script)
            assert not unknown, f"{script}'s section passes flags it does not take: {unknown}"
