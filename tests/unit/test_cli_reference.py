"""docs/cli.md's command reference is the click commands' own: every command, argument and
flag, made by beekeeper.cli.reference and held equal here."""

from __future__ import annotations

from pathlib import Path

import click

from beekeeper.cli.main import COMMANDS, cli
from beekeeper.cli.reference import BEGIN, END, command_reference, with_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_docs_cli_md_holds_the_reference_of_the_commands() -> None:
    text = DOC.read_text(encoding="utf-8")
    # On failure: python -m beekeeper.cli.reference --write docs/cli.md
    assert with_reference(text) == text


def test_the_reference_names_every_command_and_every_flag() -> None:
    reference = command_reference()
    context = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None
        commands = (
            [
                (f"{name} {sub}", command.get_command(context, sub))
                for sub in command.list_commands(context)
            ]
            if isinstance(command, click.Group)
            else [(name, command)]
        )
        for words, each in commands:
            assert each is not None
            (row,) = [line for line in reference.splitlines() if f"`beekeeper {words}" in line]
            for option in each.params:
                if isinstance(option, click.Option):
                    assert all(flag in row for flag in option.opts + option.secondary_opts)
    # The settings' flags come from their descriptions: both spellings of one are there.
    assert "`--dynamic-rate-throttling, --drt / --no-dynamic-rate-throttling, --no-drt`" in (
        reference
    )


def test_writing_replaces_only_what_is_between_the_markers() -> None:
    text = f"# Title\n\nbefore\n{BEGIN}\nold table\n{END}\nafter\n"
    assert (
        with_reference(text) == f"# Title\n\nbefore\n{BEGIN}\n{command_reference()}{END}\nafter\n"
    )
