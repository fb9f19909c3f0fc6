"""Yes-or-no questions: a typo gets a sentence and the question again.

click.confirm answers a typo with "Error: invalid input", which reads like a failure of the
command; every question of this CLI goes through `yes_or_no` instead.
"""

from __future__ import annotations

from collections.abc import Callable

import click

YES = frozenset({"y", "yes"})
NO = frozenset({"n", "no"})

# Read(prompt) -> the typed line; Say(text) -> None. click's by default (tests pass their own).
Read = Callable[[str], str]
Say = Callable[[str], None]


def retry_sentence(default: bool) -> str:
    """What a typo is told: the answers there are, and what Enter means."""
    return f"Please answer y (yes) or n (no); Enter means {'yes' if default else 'no'}."


def yes_or_no(
    question: str,
    *,
    default: bool,
    err: bool = False,
    abort: bool = False,
    read: Read | None = None,
    say: Say | None = None,
) -> bool:
    """Ask until the answer is y, yes, n, no or empty (the default); `abort`: a no raises
    click.Abort (the command stops with "Aborted: nothing was changed.", exit 1)."""
    prompt = f"{question} [{'Y/n' if default else 'y/N'}]"
    ask = read or (
        lambda text: click.prompt(text, default="", show_default=False, err=err, type=str)
    )
    tell = say or (lambda text: click.echo(text, err=err))
    while True:
        answer = ask(prompt).strip().lower()
        if answer in YES or answer in NO or not answer:
            agreed = answer in YES or (not answer and default)
            if abort and not agreed:
                raise click.Abort
            return agreed
        tell(retry_sentence(default))
