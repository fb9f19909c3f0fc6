"""`beekeeper list [--json]`: every room, its region, whether it is deployed, its URLs."""

from __future__ import annotations

import json
from typing import Any

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.rooms import RoomStore


def room_rows(store: RoomStore) -> list[dict[str, Any]]:
    rows = []
    for name in store.names():
        row: dict[str, Any] = {"name": name, "region": None, "deployed": False, "local": False}
        try:
            row["region"] = store.load(name).region
            deployment = store.deployment(name)
        except UserError as error:
            row["error"] = error.message
            rows.append(row)
            continue
        if deployment is not None:
            row.update(
                deployed=True,
                local=deployment.is_local,
                public_url=deployment.public_url,
                marketing_url=deployment.marketing_url,
                client_check_url=deployment.client_check_url,
                page_url=deployment.page_url,
            )
        rows.append(row)
    return rows


@click.command("list", short_help="List rooms, regions and URLs.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def list_rooms(ctx: click.Context, as_json: bool) -> None:
    """List the rooms in the config directory."""
    store = factory_of(ctx).store()
    rows = room_rows(store)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"No rooms yet in {store.directory}; create one with `beekeeper init`.")
        return
    for row in rows:
        if "error" in row:
            click.echo(f"{row['name']}: {row['error']}")
            continue
        state = "local" if row["local"] else ("deployed" if row["deployed"] else "not deployed")
        click.echo(f"{row['name']} ({row['region']}): {state}")
        if row["deployed"]:
            if row.get("public_url"):
                click.echo(f"  public address:   {row['public_url']}")
            click.echo(f"  marketing URL:    {row['marketing_url']}")
            click.echo(f"  client check URL: {row['client_check_url']}")
