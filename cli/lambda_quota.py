"""Whether the account's Lambda concurrency leaves room for the room's reservations.

The room reserves concurrency for its trigger, consumers and governor (stacks/capacity.py), and
Lambda keeps at least 100 of an account's concurrency unreserved ("You can reserve up to the
Unreserved account concurrency value ... minus 100", Lambda Developer Guide). A new account
often has a quota of 10: its first deploy would fail minutes in, with CloudFormation rolling
back. `beekeeper deploy` asks first (GetAccountSettings; GetFunctionConcurrency for a room that
is already deployed, whose own reservations come back) and says what to request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import botocore.exceptions

from beekeeper.cli.errors import UserError
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks.capacity import reserved_concurrency

# Lambda's floor of unreserved concurrency per account and region.
UNRESERVED_FLOOR = 100
# Service Quotas: Lambda "Concurrent executions".
CONCURRENCY_QUOTA_CODE = "L-B99A9384"


@dataclass(frozen=True)
class AccountConcurrency:
    quota: int  # AccountLimit.ConcurrentExecutions
    unreserved: int  # AccountLimit.UnreservedConcurrentExecutions
    reserved_by_room: int  # what the room's deployed functions reserve now (0 when new)


class ConcurrencyProbe(Protocol):
    def __call__(self, settings: RoomSettings, *, deployed: bool) -> AccountConcurrency: ...


def read_concurrency(
    lambda_client: Any, settings: RoomSettings, *, deployed: bool
) -> AccountConcurrency:
    limit = lambda_client.get_account_settings()["AccountLimit"]
    reserved_now = 0
    if deployed:
        for role in reserved_concurrency(settings):
            try:
                answer = lambda_client.get_function_concurrency(
                    FunctionName=f"{settings.stack_name}-{role}"
                )
            except botocore.exceptions.ClientError as error:
                if error.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
                    continue
                raise
            reserved_now += int(answer.get("ReservedConcurrentExecutions") or 0)
    return AccountConcurrency(
        quota=int(limit["ConcurrentExecutions"]),
        unreserved=int(limit["UnreservedConcurrentExecutions"]),
        reserved_by_room=reserved_now,
    )


def check_room_fits(settings: RoomSettings, account: AccountConcurrency) -> None:
    """A UserError saying what to request when the reservations do not fit."""
    wanted = reserved_concurrency(settings)
    needed = sum(wanted.values())
    available = account.unreserved + account.reserved_by_room
    if available - needed >= UNRESERVED_FLOOR:
        return
    quota = account.quota + (needed + UNRESERVED_FLOOR - available)
    raise UserError(
        f"Room {settings.name!r} reserves {needed} concurrent Lambda executions ("
        + ", ".join(f"{count} {role}" for role, count in wanted.items())
        + f") and Lambda keeps {UNRESERVED_FLOOR} unreserved, but this account has "
        f"{account.unreserved} unreserved of a quota of {account.quota} in {settings.region}. "
        f"Ask for a quota of at least {quota}: `aws service-quotas "
        f"request-service-quota-increase --service-code lambda --quota-code "
        f"{CONCURRENCY_QUOTA_CODE} --desired-value {quota} --region {settings.region}` (new "
        "accounts start low; AWS usually answers within a day), or lower the rate or raise "
        "consumer_capacity in the room file. Nothing was deployed."
    )
