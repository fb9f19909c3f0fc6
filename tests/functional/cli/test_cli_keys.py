"""`beekeeper keys rotate|retire` against moto: the secret, the published keys, /jwks.json, and
which key signs when, through a whole rotation."""

from __future__ import annotations

import json
from typing import Any

import jwt
import pytest

from beekeeper.apigateway.room import Boto3DynamoDb, HttpRequest, run_integration
from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import Token
from beekeeper.core.routes import JWKS
from beekeeper.room.ticket_keys import KeysChangedError, TicketKeyStore, first_key
from beekeeper.room.tickets import KeyRing, TicketIssuer, secret_reader
from tests.support.cli_testkit import (
    NOW,
    Clock,
    DeployedRoom,
    Invoke,
    aws_client,
    write_deployment,
)

VALIDITY = 3600  # the room's admission validity (the settings' default, 60 minutes)
TOKEN = Token("S3cretVisitorId-abcdef", 7)


def jwks_at(room: DeployedRoom, now: float) -> dict[str, Any]:
    """GET /jwks.json as API Gateway answers it at `now`, from the room's table in moto."""
    answer = run_integration(
        JWKS.name,
        HttpRequest("GET", "/jwks.json", {}, {}),
        dynamodb=Boto3DynamoDb(aws_client("dynamodb")),
        table_name=room.table,
        origin=room.settings.origin,
        request_time_ms=int(now * 1000),
    )
    assert answer.status == 200
    assert answer.headers["Cache-Control"] == f"public, max-age={facts.JWKS_MAX_AGE_SECONDS}"
    keys: dict[str, Any] = json.loads(answer.body)
    return keys


def kids_at(room: DeployedRoom, now: float) -> list[str]:
    return [key["kid"] for key in jwks_at(room, now)["keys"]]


def ring(room: DeployedRoom) -> KeyRing:
    secret = aws_client("secretsmanager").get_secret_value(
        SecretId=room.outputs["TicketKeysSecret"]
    )
    return KeyRing.parse(secret["SecretString"])


def signed_kid(room: DeployedRoom, now: float) -> str:
    """The kid of a ticket a consumer container signs at `now`, checked against the JWKS then."""
    issuer = TicketIssuer(
        read_ring=secret_reader(aws_client("secretsmanager"), room.outputs["TicketKeysSecret"]),
        settings=room.settings,
        clock=lambda: now,
    )
    ticket = issuer.ticket(TOKEN, int(now), int(now) + VALIDITY)
    assert ticket is not None
    kid = str(jwt.get_unverified_header(ticket)["kid"])
    (published,) = (k for k in jwks_at(room, now)["keys"] if k["kid"] == kid)
    claims = jwt.decode(
        ticket,
        jwt.PyJWK(published),
        algorithms=["ES256"],
        audience="https://shop.example",
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims["iss"] == room.outputs["MarketingUrl"].removesuffix("/beekeeper")
    return kid


def test_a_whole_rotation_keeps_every_ticket_verifiable(
    invoke: Invoke, deployed_room: DeployedRoom, clock: Clock
) -> None:
    room = deployed_room
    assert kids_at(room, NOW) == []  # a new room publishes no key until it has one

    first = invoke("keys", "rotate", "sale")
    assert first.exit_code == 0, first.output
    (k1,) = kids_at(room, NOW)
    assert f"key {k1} published and signing" in first.stdout
    assert signed_kid(room, NOW) == k1

    clock.now = NOW + 600
    second = invoke("keys", "rotate", "sale")
    assert second.exit_code == 0, second.output
    k2 = next(k for k in kids_at(room, clock.now) if k != k1)
    starts = NOW + 600 + facts.JWKS_MAX_AGE_SECONDS
    retires = starts + VALIDITY + facts.RETIRE_MARGIN_SECONDS
    assert f"key {k2} published now, signing from" in second.stdout
    # Published at once; signing only once every shop's cached key set has it.
    assert kids_at(room, clock.now) == [k1, k2]
    assert signed_kid(room, starts - 1) == k1
    assert signed_kid(room, starts) == k2
    # The old key stays published until the last ticket it signed has expired, then goes.
    assert kids_at(room, retires - 1) == [k1, k2]
    assert kids_at(room, retires) == [k2]

    again = invoke("keys", "rotate", "sale")
    assert again.exit_code == 1
    assert f"a rotation is under way: key {k2} starts signing at" in again.stderr

    clock.now = starts + 60
    early = invoke("keys", "retire", "sale")
    assert early.exit_code == 1
    assert f"key {k1} at" in early.stderr and "--force" in early.stderr
    assert [str(k["kid"]) for k in ring(room).keys] == [k1, k2]

    clock.now = retires
    retired = invoke("keys", "retire", "sale")
    assert retired.exit_code == 0, retired.output
    assert f"retired key {k1}" in retired.stdout
    assert [str(k["kid"]) for k in ring(room).keys] == [k2]  # the private half is gone too
    assert kids_at(room, NOW) == [k2]


def test_force_retires_a_replaced_key_early_but_never_the_one_that_signs(
    invoke: Invoke, deployed_room: DeployedRoom, clock: Clock
) -> None:
    assert invoke("keys", "rotate", "sale").exit_code == 0
    (k1,) = kids_at(deployed_room, NOW)
    assert invoke("keys", "rotate", "sale").exit_code == 0
    refused = invoke("keys", "retire", "sale", "--force")
    assert refused.exit_code == 1
    assert f"key {k1} still signs until" in refused.stderr

    clock.now = NOW + facts.JWKS_MAX_AGE_SECONDS
    forced = invoke("keys", "retire", "sale", "--force")
    assert forced.exit_code == 0, forced.output
    assert k1 not in kids_at(deployed_room, clock.now)
    assert k1 not in {str(k["kid"]) for k in ring(deployed_room).keys}


def test_retire_with_nothing_replaced_says_so(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    assert invoke("keys", "rotate", "sale").exit_code == 0
    result = invoke("keys", "retire", "sale")
    assert result.exit_code == 1
    assert "only its signing key" in result.stderr


def test_a_room_deployed_before_tickets_is_told_to_redeploy(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Any
) -> None:
    outputs = {k: v for k, v in deployed_room.outputs.items() if k != "TicketKeysSecret"}
    write_deployment(config_dir, "sale", outputs)
    result = invoke("keys", "rotate", "sale")
    assert result.exit_code == 1
    assert "run `beekeeper deploy sale` to give it ticket keys" in result.stderr


def test_two_operators_can_not_interleave_a_change(
    deployed_room: DeployedRoom, invoke: Invoke
) -> None:
    store = TicketKeyStore(
        secretsmanager=aws_client("secretsmanager"),
        secret_id=deployed_room.outputs["TicketKeysSecret"],
        dynamodb=aws_client("dynamodb"),
        table=deployed_room.table,
        clock=lambda: NOW,
    )
    before = store.read()
    assert invoke("keys", "rotate", "sale").exit_code == 0  # someone else, meanwhile
    change = first_key(before, issuer="https://x.example/sale", now=int(NOW))
    assert change is not None
    with pytest.raises(KeysChangedError, match="run it again"):
        store.apply(before, change.keys)
    # The other operator's key is what signs; the refused change wrote nothing.
    (kid,) = kids_at(deployed_room, NOW)
    assert [str(k["kid"]) for k in store.read().ring.keys] == [kid]
