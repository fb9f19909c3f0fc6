"""The command reference of docs/cli.md, made from the click commands themselves.

`python -m beekeeper.cli.reference` prints it; `--write docs/cli.md` puts it between the
file's `<!-- commands -->` and `<!-- /commands -->` markers. tests/unit/test_cli_reference.py
holds the file equal to it, so a new command or flag can not be left out of the docs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from beekeeper.cli.main import COMMANDS, cli

BEGIN, END = "<!-- commands -->", "<!-- /commands -->"


def _rows(context: click.Context, words: list[str], command: click.Command, what: str) -> list[str]:
    """The table rows of one command (a group: one per subcommand)."""
    if isinstance(command, click.Group):
        rows = []
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None
            rows += _rows(context, [*words, name], sub, sub.get_short_help_str(limit=200))
        return rows
    here = click.Context(command, info_name=words[-1], parent=context)
    arguments = [p.make_metavar(here) for p in command.params if isinstance(p, click.Argument)]
    flags = []
    skipped = command.get_help_option(here)  # every command takes -h/--help
    for param in command.get_params(here):
        record = param.get_help_record(here)
        if isinstance(param, click.Option) and record is not None and param is not skipped:
            flags.append(f"`{record[0]}`")
    usage = " ".join(["beekeeper", *words, *arguments])
    return [f"| `{usage}` | {what} | {', '.join(flags) or 'none'} |"]


def command_reference() -> str:
    """Every command with its arguments, what it does (its line in `beekeeper --help`) and
    every flag it takes, as a Markdown table."""
    context = click.Context(cli, info_name="beekeeper")
    lines = ["| command | what it does | flags |", "|---|---|---|"]
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None
        lines += _rows(context, [name], command, COMMANDS[name].short_help)
    return "\n".join(lines) + "\n"


def with_reference(text: str) -> str:
    """`text` (docs/cli.md) with its command reference replaced by today's."""
    before, rest = text.split(BEGIN + "\n", 1)
    _, after = rest.split(END, 1)
    return f"{before}{BEGIN}\n{command_reference()}{END}{after}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write"] and len(argv) == 2:
        path = Path(argv[1])
        path.write_text(with_reference(path.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    if argv:
        print("usage: python -m beekeeper.cli.reference [--write docs/cli.md]", file=sys.stderr)
        return 2
    print(command_reference(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
