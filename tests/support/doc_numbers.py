"""The numbers a document states, for the tests that hold them to the code; and the AWS list
prices the cost benchmarks use (bench/prices.py), which the documents quote."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
# Numbers a document writes as words.
WORDS = {"a second": 1, "two": 2, "three": 3, "five": 5, "ten": 10, "half": 0.5, "a quarter": 0.25}


def stated(document: str, pattern: str) -> str:
    """What the one group of `pattern` matches in `document` (a path from the repository's root),
    its lines joined, so a phrase may wrap."""
    text = " ".join((REPO / document).read_text(encoding="utf-8").split())
    found = re.search(pattern, text)
    assert found is not None, f"{document} no longer says {pattern!r}"
    return found[1]


def stated_number(document: str, pattern: str) -> float:
    """The number `pattern`'s group matches: digits with thousands separators, or a word."""
    said = stated(document, pattern)
    return WORDS[said] if said in WORDS else float(said.replace(",", ""))


def list_prices() -> ModuleType:
    """bench/prices.py (a script's module, not a package's)."""
    spec = importlib.util.spec_from_file_location("prices", REPO / "bench" / "prices.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
