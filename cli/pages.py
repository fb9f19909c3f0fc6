"""Writing a page of charts an operator asked for (`simulate --report`, `report --out`)."""

from __future__ import annotations

from pathlib import Path

import click

from beekeeper.cli.errors import UserError


def write_page(path: Path, page: str) -> None:
    """Write the page and say where, on stderr (stdout may be carrying --json)."""
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise UserError(f"could not write the report to {path}: {error.strerror}") from error
    size = len(page.encode("utf-8"))
    click.echo(f"Wrote the report to {path.resolve()} ({size / 1024:,.0f} KB).", err=True)
