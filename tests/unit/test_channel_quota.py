"""`beekeeper deploy` reads the push channel's quotas from Service Quotas and says what to raise
(cli/channel_quota.py); Service Quotas is a botocore Stubber."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from beekeeper.cli.channel_quota import (
    CONNECTIONS_QUOTA_CODE,
    OUTBOUND_QUOTA_CODE,
    ChannelQuotas,
    Quota,
    channel_advice,
    read_channel_quotas,
)
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks.capacity import arrivals_per_second

API_ARN = "arn:aws:appsync:eu-west-1:123456789012:apis/abcdefghijklmnopqrstuvwxyz"
ROOM = RoomSettings(
    name="sale",
    display_name="Sale",
    region="eu-west-1",
    origin="https://shop.example",
    rate=600,
    arrival_shards=4,
)


def quota(code: str, value: float, level: str = "RESOURCE") -> dict[str, Any]:
    return {
        "Quota": {
            "ServiceCode": "appsync",
            "QuotaCode": code,
            "Value": value,
            "QuotaAppliedAtLevel": level,
        }
    }


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("service-quotas", region_name="eu-west-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_the_apis_own_quotas_are_read_with_its_arn(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    for code, value in ((CONNECTIONS_QUOTA_CODE, 5_000.0), (OUTBOUND_QUOTA_CODE, 2e6)):
        stubber.add_response(
            "get_service_quota",
            quota(code, value),
            {"ServiceCode": "appsync", "QuotaCode": code, "ContextId": API_ARN},
        )
    assert read_channel_quotas(client, API_ARN) == ChannelQuotas(
        Quota(5_000.0, per_api=True), Quota(2e6, per_api=True)
    )


def test_an_account_level_quota_and_then_aws_default_are_read_when_the_api_has_none(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    stubber.add_client_error("get_service_quota", "NoSuchResourceException")
    stubber.add_response(
        "get_service_quota",
        quota(CONNECTIONS_QUOTA_CODE, 3_000.0, level="ACCOUNT"),
        {"ServiceCode": "appsync", "QuotaCode": CONNECTIONS_QUOTA_CODE},
    )
    stubber.add_client_error("get_service_quota", "NoSuchResourceException")
    stubber.add_client_error("get_service_quota", "NoSuchResourceException")
    stubber.add_response(
        "get_aws_default_service_quota",
        quota(OUTBOUND_QUOTA_CODE, 1e6),
        {"ServiceCode": "appsync", "QuotaCode": OUTBOUND_QUOTA_CODE},
    )
    assert read_channel_quotas(client, API_ARN) == ChannelQuotas(
        Quota(3_000.0, per_api=False), Quota(1e6, per_api=True, default=True)
    )


def test_a_quota_that_can_not_be_read_is_said_not_raised(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_client_error(
        "get_service_quota", "AccessDeniedException", "not authorized to GetServiceQuota"
    )
    found = read_channel_quotas(client, API_ARN)
    assert found.connections is None and "not authorized" in found.unreadable
    (advice,) = channel_advice(ROOM, API_ARN, found)
    assert advice.startswith("The push channel's quotas could not be read (")
    assert "list-service-quotas --service-code appsync --region eu-west-1" in advice


def test_a_burst_above_the_connection_rate_says_what_to_ask_for() -> None:
    joins = arrivals_per_second(ROOM)
    assert joins == 4_000  # four arrival shards
    quotas = ChannelQuotas(Quota(2_000.0, per_api=True, default=True), Quota(1e6, per_api=True))
    summary, ask = channel_advice(ROOM, API_ARN, quotas)
    assert summary == (
        "Push channel: 2,000 new connections and 1,000,000 messages out a second (AWS "
        "defaults): one change reaches that many waiting pages a second."
    )
    assert "takes up to 4,000 new visitors a second" in ask
    assert (
        "`aws service-quotas request-service-quota-increase --service-code appsync --quota-code "
        f"L-10498098 --desired-value 4000 --context-id {API_ARN} --region eu-west-1`"
    ) in ask


def test_a_room_within_the_quota_is_told_only_what_it_has() -> None:
    quotas = ChannelQuotas(Quota(10_000.0, per_api=False), Quota(1e6, per_api=False))
    (summary,) = channel_advice(ROOM, API_ARN, quotas)
    assert summary.startswith("Push channel: 10,000 new connections") and "this account" in summary
