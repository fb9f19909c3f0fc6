"""`beekeeper list [--json]`: every room, its region, whether it is deployed, its URLs.

Every room file's room, and every room running under `beekeeper local` (the demo's too, which
has no room file). A room running locally is shown as such, with its local URLs; a room both
deployed in AWS and running locally shows the deployed room's URLs and says it runs locally too.
"""

from __future__ import annotations

import json
from typing import Any

import click

from beekeeper.cli.errors import UserError
from beekeeper.cli.factory import factory_of
from beekeeper.cli.rooms import Deployment, LocalRoom, RoomStore


def _urls(deployment: Deployment) -> dict[str, Any]:
    return {
        "public_url": deployment.public_url,
        "marketing_url": deployment.marketing_url,
        "client_check_url": deployment.client_check_url,
        "page_url": deployment.page_url,
    }


def room_rows(store: RoomStore) -> list[dict[str, Any]]:
    rows = []
    files = set(store.names())
    for name in sorted(files | set(store.local_names())):
        row: dict[str, Any] = {"name": name, "region": None, "deployed": False, "local": False}
        try:
            running: LocalRoom | None = store.local_room(name)
            if running is not None and not running.running:
                running = None
            if name in files:
                row["region"] = store.load(name).region
            elif running is not None:
                row["region"] = running.settings.region
            else:
                continue  # a killed local room's record, and no room file: nothing to show
            deployment = store.deployment(name)
        except UserError as error:
            row["error"] = error.message
            rows.append(row)
            continue
        if deployment is not None:
            row.update(deployed=True, local=deployment.is_local, **_urls(deployment))
        if running is not None:
            row["local_pid"] = running.pid
            row["local_marketing_url"] = running.deployment.marketing_url
            if deployment is None:
                row.update(deployed=True, local=True, **_urls(running.deployment))
        rows.append(row)
    return rows


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@click.pass_context
def list_rooms(ctx: click.Context, as_json: bool) -> None:
    """List the rooms in the config directory and the rooms running under `beekeeper local`."""
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
        click.echo(f"{row['name']} ({row['region']}): {_state(row)}")
        if row["deployed"]:
            if row.get("public_url"):
                click.echo(f"  public address:   {row['public_url']}")
            click.echo(f"  marketing URL:    {row['marketing_url']}")
            click.echo(f"  client check URL: {row['client_check_url']}")
        if "local_pid" in row and not row["local"]:
            click.echo(f"  local marketing URL: {row['local_marketing_url']}")


def _state(row: dict[str, Any]) -> str:
    if "local_pid" in row:
        running = f"running under `beekeeper local` (process {row['local_pid']})"
        return running if row["local"] else f"deployed; also {running}"
    if row["local"]:
        return "local"
    return "deployed" if row["deployed"] else "not deployed"
