"""`beekeeper deploy NAME`: deploy (or update) the room's stack with the AWS CDK CLI."""

from __future__ import annotations

from pathlib import Path

import click

from beekeeper.cli.factory import factory_of
from beekeeper.cli.options import room_argument
from beekeeper.core.settings import RoomSettings


@click.command()
@room_argument
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Do not ask before a redeploy that would replace resources (for scripts).",
)
@click.option(
    "--check/--no-check",
    "check",
    default=None,
    help="Run `beekeeper check` on the deployed room, or not; left out, deploy asks at a "
    "terminal and otherwise says how to run it (--yes alone does not run it).",
)
@click.pass_context
def deploy(ctx: click.Context, name: str, yes: bool, check: bool | None) -> None:
    """Deploy the room NAME to AWS (again after a failure: it picks up where it left off).

    Redeploying a running room shows what changes (cdk diff) and asks before anything would be
    replaced: replacing the table or a queue would lose the line.
    """
    factory = factory_of(ctx)
    settings = factory.store().load(name)
    deployment = factory.deployer(assume_yes=yes).deploy(settings)
    click.echo(f"Room {name!r} is deployed.")
    click.echo(f"Marketing URL (link visitors here): {deployment.marketing_url}")
    click.echo(f"Client check URL (your shop asks it): {deployment.client_check_url}")
    click.echo(f"JWKS URL (your shop verifies tickets with it): {deployment.jwks_url}")
    click.echo(alerts_notice(settings, factory.store().room_path(name)), err=True)
    if settings.domain:
        click.echo(domain_notice(settings, deployment.edge_domain), err=True)
    from beekeeper.cli.commands.check import offer_check  # the check's code, when it runs

    offer_check(ctx, factory, settings, deployment, check, ask=not yes)


def domain_notice(settings: RoomSettings, edge_domain: str | None) -> str:
    """Where the room's own domain must point: the distribution (DNS is the shop's)."""
    target = edge_domain or "the distribution's domain (EdgeDomain)"
    return (
        f"Point {settings.domain} at {target} (a CNAME record, or an alias record in Route 53); "
        f"until it resolves there, the room answers at https://{target}."
    )


def alerts_notice(settings: RoomSettings, room_file: Path) -> str:
    """Who hears about the room's alarms: an operator must know when nobody does."""
    if settings.alert_email:
        return (
            f"Alarms notify {settings.alert_email}. AWS sends that address a confirmation email "
            "on the first deploy; nothing reaches it until the link in it is followed."
        )
    return (
        "Nobody will be told when an alarm fires: the room has no alert_email. Add "
        f'alert_email = "you@example.com" to {room_file} and run `beekeeper deploy '
        f"{settings.name}` again."
    )
