"""Whether the account's AppSync Events quotas carry the room's burst, and what to raise.

Every joining visitor's page opens one connection to the room's push channel, and every change
the room publishes is one outbound message to each subscribed page (core/push.py). AppSync
Events limits both per Event API, as Service Quotas names them: "Event APIs - Rate of
connections per API" and "Event APIs - Rate of outbound messages per API" (service code
`appsync`; defaults of 2,000 connections and 1,000,000 outbound messages a second, adjustable;
docs/stack.md, "The push channel"). A page that can not connect follows the shared state
instead, so nothing breaks: but at a burst above the connection rate, pages are told of a
change in up to 30 s instead of 2 s.

After a deploy, `beekeeper deploy` reads both (GetServiceQuota with the API's ARN as the
context, then without, then AWS's default; "ContextId: Specifies the resource with an Amazon
Resource Name (ARN)", GetServiceQuota, Service Quotas API reference) and says what to ask for
when the connection rate is below the joins a second the room is built for (its arrival shards,
stacks/capacity.py). A quota it can not read is said, never an error: the room is deployed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import botocore.exceptions

from beekeeper.core.settings import RoomSettings
from beekeeper.core.words import count
from beekeeper.stacks.capacity import arrivals_per_second

SERVICE_CODE = "appsync"
CONNECTIONS_QUOTA_CODE = "L-10498098"  # Event APIs - Rate of connections per API
OUTBOUND_QUOTA_CODE = "L-F643C244"  # Event APIs - Rate of outbound messages per API
# Answers that mean "not at this level": the quota is asked for again at the next.
_NOT_HERE = ("NoSuchResourceException", "IllegalArgumentException", "ResourceNotFoundException")


@dataclass(frozen=True)
class Quota:
    value: float
    # Where it applies: the API itself (a request for it names the API's ARN), the account,
    # or AWS's default for an account that never asked.
    per_api: bool
    default: bool = False


@dataclass(frozen=True)
class ChannelQuotas:
    connections: Quota | None  # None: could not be read
    outbound: Quota | None
    unreadable: str = ""  # why a quota could not be read


class ChannelQuotaProbe(Protocol):
    def __call__(self, settings: RoomSettings, api_arn: str) -> ChannelQuotas: ...


def read_channel_quotas(service_quotas: Any, api_arn: str) -> ChannelQuotas:
    """Both quotas as they apply to the Event API `api_arn`."""
    try:
        return ChannelQuotas(
            connections=_quota(service_quotas, CONNECTIONS_QUOTA_CODE, api_arn),
            outbound=_quota(service_quotas, OUTBOUND_QUOTA_CODE, api_arn),
        )
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
        return ChannelQuotas(None, None, unreadable=str(error))


def _quota(client: Any, code: str, api_arn: str) -> Quota | None:
    for context in ({"ContextId": api_arn}, {}):
        try:
            found = client.get_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=code, **context)
        except botocore.exceptions.ClientError as error:
            if error.response.get("Error", {}).get("Code") in _NOT_HERE:
                continue
            raise
        quota = found["Quota"]
        level = str(quota.get("QuotaAppliedAtLevel", ""))
        per_api = bool(context) or level in ("RESOURCE", "ALL")
        return Quota(float(quota["Value"]), per_api=per_api)
    try:
        default = client.get_aws_default_service_quota(ServiceCode=SERVICE_CODE, QuotaCode=code)
    except botocore.exceptions.ClientError as error:
        if error.response.get("Error", {}).get("Code") in _NOT_HERE:
            return None
        raise
    return Quota(float(default["Quota"]["Value"]), per_api=True, default=True)


def channel_advice(settings: RoomSettings, api_arn: str, quotas: ChannelQuotas) -> list[str]:
    """What the operator should know of the channel's quotas for this room, in sentences."""
    if quotas.connections is None or quotas.outbound is None:
        reason = f" ({quotas.unreadable})" if quotas.unreadable else ""
        return [
            f"The push channel's quotas could not be read{reason}. At a burst above its rate "
            f"of new connections (2,000 a second by default) waiting pages follow the shared "
            f"state instead; check `aws service-quotas list-service-quotas --service-code "
            f"{SERVICE_CODE} --region {settings.region}`."
        ]
    joins = arrivals_per_second(settings)
    connections, outbound = quotas.connections, quotas.outbound
    lines = [
        f"Push channel: {connections.value:,.0f} new connections and {outbound.value:,.0f} "
        f"messages out a second ({'AWS defaults' if connections.default else 'this account'}"
        "): one change reaches that many waiting pages a second."
    ]
    if connections.value < joins:
        lines.append(
            f"The room takes up to {count(joins, 'new visitor')} a second and each one's page "
            f"connects to the push channel, which accepts {connections.value:,.0f} a second: "
            "beyond that pages follow the shared state (a change reaches them in up to 30 s, not "
            f"2 s). Ask for at least {joins:,}: "
            + request_command(settings, CONNECTIONS_QUOTA_CODE, joins, api_arn, connections)
            + " (AWS usually answers within a day)."
        )
    return lines


def request_command(
    settings: RoomSettings, code: str, wanted: int, api_arn: str, quota: Quota
) -> str:
    context = f" --context-id {api_arn}" if quota.per_api else ""
    return (
        f"`aws service-quotas request-service-quota-increase --service-code {SERVICE_CODE} "
        f"--quota-code {code} --desired-value {wanted}{context} --region {settings.region}`"
    )


def probe(client: Callable[[RoomSettings], Any]) -> ChannelQuotaProbe:
    """The probe `beekeeper deploy` uses: Service Quotas in the room's region."""

    def read(settings: RoomSettings, api_arn: str) -> ChannelQuotas:
        return read_channel_quotas(client(settings), api_arn)

    return read
