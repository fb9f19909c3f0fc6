"""Reading the account's Lambda concurrency (botocore Stubber) and judging whether a room fits."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from beekeeper.cli.errors import UserError
from beekeeper.cli.lambda_quota import AccountConcurrency, check_room_fits, read_concurrency
from beekeeper.core.settings import RoomSettings

ROOM = RoomSettings(
    name="sale",
    display_name="Sale",
    region="eu-west-1",
    origin="https://shop.example",
    rate=30_000,  # 5 consumers a minute: 10 reserved, plus trigger and governor
)


def account(unreserved: int, quota: int = 1000) -> dict:
    return {
        "AccountLimit": {
            "TotalCodeSize": 1,
            "CodeSizeUnzipped": 1,
            "CodeSizeZipped": 1,
            "ConcurrentExecutions": quota,
            "UnreservedConcurrentExecutions": unreserved,
        },
        "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": 0},
    }


def test_a_deployed_room_counts_what_its_functions_reserve_now() -> None:
    client = boto3.client("lambda", region_name="eu-west-1")
    with Stubber(client) as stubber:
        stubber.add_response("get_account_settings", account(500))
        for role, reserved in (("trigger", 1), ("consumer", 4), ("governor", None)):
            answer = {} if reserved is None else {"ReservedConcurrentExecutions": reserved}
            stubber.add_response(
                "get_function_concurrency", answer, {"FunctionName": f"beekeeper-sale-{role}"}
            )
        assert read_concurrency(client, ROOM, deployed=True) == AccountConcurrency(1000, 500, 5)
        stubber.assert_no_pending_responses()


def test_a_new_room_asks_only_for_the_account() -> None:
    client = boto3.client("lambda", region_name="eu-west-1")
    with Stubber(client) as stubber:
        stubber.add_response("get_account_settings", account(10, quota=10))
        assert read_concurrency(client, ROOM, deployed=False) == AccountConcurrency(10, 10, 0)


@pytest.mark.parametrize(
    ("unreserved", "by_room", "fits"),
    [(112, 0, True), (111, 0, False), (100, 12, True), (99, 12, False)],
)
def test_the_room_fits_when_100_stay_unreserved(unreserved: int, by_room: int, fits: bool) -> None:
    concurrency = AccountConcurrency(quota=1000, unreserved=unreserved, reserved_by_room=by_room)
    if fits:
        check_room_fits(ROOM, concurrency)
    else:
        with pytest.raises(UserError, match=r"reserves 12 concurrent Lambda executions"):
            check_room_fits(ROOM, concurrency)
