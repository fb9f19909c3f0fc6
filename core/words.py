"""Counts said in words, for every sentence an operator reads (the CLI, local mode, reports).

Standard library only: the CLI's deploy path and the Lambda asset may import it.
"""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`count(1, "visitor")` -> "1 visitor"; `count(20000, "visitor")` -> "20,000 visitors";
    `count(2, "status copy", "status copies")` -> "2 status copies"."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"
