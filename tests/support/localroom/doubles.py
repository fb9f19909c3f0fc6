"""A double of `RoomCode` (our own interface), following docs/data-model.md in a few lines.

It lets the local room's own wiring (gateway, proxy events, scheduler, record, CLI) be tested
without the pipeline's and the templates' modules (the page and the preflights, MOCK
integrations, still go through API Gateway's emulation); the tests that need the real room code
use `load_room_code` instead.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from beekeeper.apigateway.http import HttpRequest, HttpResponse
from beekeeper.apigateway.model import Method, RestApi
from beekeeper.apigateway.runtime import invoke
from beekeeper.core import datamodel
from beekeeper.core.settings import RoomSettings
from beekeeper.local.emulator import RoomResources
from beekeeper.local.room_code import ClientFactory, InvokeConsumer, Payload, RoomCode


def _cookie_token(headers: dict[str, str]) -> str | None:
    raw = next((v for k, v in headers.items() if k.lower() == "cookie"), "")
    for part in raw.split(";"):
        name, _, value = part.strip().partition("=")
        if name == datamodel.COOKIE_NAME:
            return value
    return None


def double_code(
    settings: RoomSettings, resources: RoomResources, client: ClientFactory, minute_seconds: float
) -> RoomCode:
    ddb, sqs, table = client("dynamodb"), client("sqs"), resources.table_name

    def enabled() -> bool:
        item = ddb.get_item(TableName=table, Key={"pk": {"S": datamodel.CONFIG_KEY}}).get("Item")
        return item is None or item["enabled"]["BOOL"]

    def producer(event: dict[str, Any], _context: Any) -> dict[str, Any]:
        if datamodel.Token.parse(_cookie_token(event["headers"])) is not None:
            return {"statusCode": 302, "headers": {"Location": "room"}, "body": ""}
        if not enabled():
            return {"statusCode": 302, "headers": {"Location": settings.origin}, "body": ""}
        n = ddb.update_item(
            TableName=table,
            Key={"pk": {"S": datamodel.arrival_shard_key(0)}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]["n"]["N"]
        token = str(datamodel.Token.issue(int(n), secrets.token_bytes))
        sqs.send_message(QueueUrl=resources.queue_url, MessageBody=token)
        secure = "" if event["headers"].get("X-Forwarded-Proto") == "http" else "; Secure"
        return {
            "statusCode": 302,
            "headers": {"Location": f"room#turn={n}"},
            "multiValueHeaders": {
                "Set-Cookie": [f"{datamodel.COOKIE_NAME}={token}; Path=/; HttpOnly{secure}"]
            },
            "body": "",
        }

    def trigger(invoke_consumer: InvokeConsumer) -> None:
        minute = int(time.time() // minute_seconds)
        try:
            ddb.put_item(
                TableName=table,
                Item={"pk": {"S": datamodel.minute_key(minute)}},
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ddb.exceptions.ConditionalCheckFailedException:
            return
        invoke_consumer({"quota": settings.rate, "deadline": time.time() + minute_seconds * 0.8})

    def consumer(payload: Payload) -> None:
        left = int(payload["quota"])
        while left > 0 and time.time() < float(payload["deadline"]):
            got = sqs.receive_message(
                QueueUrl=resources.queue_url, MaxNumberOfMessages=min(10, left), WaitTimeSeconds=1
            ).get("Messages", [])
            for message in got:
                token = datamodel.Token.parse(message["Body"])
                assert token is not None
                now = int(time.time())
                ddb.put_item(
                    TableName=table,
                    Item={
                        "pk": {"S": datamodel.visitor_key(token.id)},
                        "admitted_at": {"N": str(now)},
                        "expires_at": {"N": str(now + settings.admission_validity_seconds)},
                        "ordinal": {"N": str(token.ordinal)},
                    },
                )
                sqs.delete_message(
                    QueueUrl=resources.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
                ddb.update_item(
                    TableName=table,
                    Key={"pk": {"S": datamodel.ADMITTED_COUNTER_KEY}},
                    UpdateExpression="ADD n :one",
                    ExpressionAttributeValues={":one": {"N": "1"}},
                )
                left -= 1

    def integration(api: RestApi, method: Method, request: HttpRequest, **kw: Any) -> HttpResponse:
        if method.integration.type == "MOCK":
            return invoke(api, method, request, **kw)
        route = method.path.removeprefix("/")
        token = datamodel.Token.parse(
            request.query.get("token") if route == "client" else _cookie_token(request.headers)
        )
        item = None
        if token is not None:
            key = {"pk": {"S": datamodel.visitor_key(token.id)}}
            status, body = kw["dynamodb"]("GetItem", json.dumps({"TableName": table, "Key": key}))
            assert status == 200, body
            item = json.loads(body).get("Item")
        allowed = item is not None and int(item["expires_at"]["N"]) * 1000 > kw["request_time_ms"]
        answer: dict[str, Any] = {"allow": allowed}
        if allowed and route == "polling" and token is not None:
            answer["origin"] = datamodel.origin_url_with_token(settings.origin, str(token))
        elif route == "polling":
            answer.update(state="waiting" if token else "no_token", position=1, eta_seconds=0)
        return HttpResponse(200, {"Content-Type": "application/json"}, json.dumps(answer))

    return RoomCode(
        producer=producer,
        trigger=trigger,
        consumer=consumer,
        governor=lambda: None,
        integration=integration,
        page=lambda s: f"<!doctype html><title>{s.display_name}</title><p>in line</p>",
    )
