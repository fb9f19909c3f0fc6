"""`beekeeper init`: create a room file from six questions or flags."""

from __future__ import annotations

from typing import Any

import click

from beekeeper.cli.commands.schedule import starts_at_epoch
from beekeeper.cli.factory import factory_of
from beekeeper.cli.init_wizard import RoomWizard
from beekeeper.cli.options import SettingType


@click.command(short_help="Create a room (six questions, or flags).")
@click.option("--name", type=SettingType("name"), help="Room name, e.g. spring-sale.")
@click.option("--display-name", type=SettingType("display_name"), help="Name visitors see.")
@click.option("--region", type=SettingType("region"), help="AWS region, e.g. eu-west-1.")
@click.option("--origin", type=SettingType("origin"), help="The URL to protect (https).")
@click.option("--rate", type=SettingType("rate"), help="Visitors let through per minute.")
@click.option(
    "--drt/--no-drt", "dynamic_rate_throttling", default=None, help="Dynamic rate throttling."
)
@click.option(
    "--slow-ms",
    type=SettingType("slow_ms"),
    help="Governor: a check whose 90th percentile takes longer than this many ms is slow "
    "(not asked; 0 or left out: judge against the shop's own baseline only).",
)
@click.option(
    "--alert-email",
    type=SettingType("alert_email"),
    help="Email address every alarm notifies (AWS asks it to confirm once).",
)
@click.option(
    "--max-inside",
    type=SettingType("max_inside"),
    help="Capacity mode: at most this many visitors inside the shop at once (not asked; "
    "0 or left out: no cap, the rate alone).",
)
@click.option(
    "--session-minutes",
    type=SettingType("session_minutes"),
    help="Capacity mode: a visitor's session ends after this many minutes without a /client "
    "check (default 10).",
)
@click.option(
    "--claim-minutes",
    type=SettingType("claim_minutes"),
    help="Capacity mode: an admitted visitor who has not arrived within this many minutes is "
    "a no-show and their place frees (default 2).",
)
@click.option(
    "--starts-at",
    type=SettingType("starts_at"),
    help="A scheduled event's start, UTC ISO 8601 (e.g. 2030-06-01T09:00:00Z; not asked): "
    "visitors who come earlier join a pre-queue, drawn into a random order at the start.",
)
@click.option(
    "--domain",
    type=SettingType("domain"),
    help="The room's public address on your own domain, e.g. queue.shop.example (not asked; "
    "left out: the distribution's cloudfront.net address).",
)
@click.option(
    "--certificate-arn",
    type=SettingType("certificate_arn"),
    help="ACM certificate in us-east-1 for --domain (left out: `beekeeper deploy` finds an "
    "issued one that covers the domain).",
)
@click.option("--yes", "-y", is_flag=True, help="Ask nothing; take flags and defaults.")
@click.option("--force", is_flag=True, help="Overwrite an existing room of the same name.")
@click.pass_context
def init(ctx: click.Context, yes: bool, force: bool, **flags: Any) -> None:
    """Create a room: answer six questions (or give them as flags with --yes).

    Writes the room file under the config directory; `beekeeper deploy NAME` deploys it.
    --alert-email is not asked: without it the room's alarms notify nobody. Nor are the
    capacity settings: without --max-inside the room admits by rate alone.
    """
    factory = factory_of(ctx)
    given = {name: value for name, value in flags.items() if value is not None}
    if given.get("starts_at"):
        starts_at_epoch(given["starts_at"], factory.clock())  # at most 13 days ahead
    wizard = RoomWizard(factory.store(), default_region=_region_or_none(factory))
    path = wizard.create(given, interactive=not yes, force=force)
    name = path.name.removesuffix(".toml")
    click.echo(f"Saved room {name!r} to {path}.")
    click.echo(f"Next: `beekeeper deploy {name}` (or rehearse it first: `beekeeper local {name}`).")


def _region_or_none(factory: Any) -> str | None:
    try:
        return factory.default_region()
    except Exception:  # a broken AWS profile only costs the suggestion
        return None
