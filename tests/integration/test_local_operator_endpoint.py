"""Nothing a web page can send reaches a local room's state; the operator's boto3 does.

A page in the developer's browser can send a cross-origin request without asking first only
in the "simple" form (GET, HEAD or POST with a form or text/plain body, no custom header, the
browser's own Origin and Sec-Fetch-* headers); anything else is preceded by an OPTIONS
preflight that must be answered with CORS headers. A page whose host name it rebinds to
127.0.0.1 sends its own Host. Each is tried against the room's real endpoint, and the state
is checked unchanged.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import urlsplit

import boto3
import pytest

from beekeeper.core.names import ResourceNames
from beekeeper.local.emulator import Emulator

pytestmark = pytest.mark.slow

COUNTER = {"pk": {"S": "arrivals#0"}}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    emulator = Emulator()
    emulator.start()
    emulator.create_room_resources("endpoint")
    try:
        yield emulator
    finally:
        emulator.stop()


def increment(table: str) -> bytes:
    return json.dumps(
        {
            "TableName": table,
            "Key": COUNTER,
            "UpdateExpression": "ADD n :one",
            "ExpressionAttributeValues": {":one": {"N": "1"}},
        }
    ).encode()


def send(
    emulator: Emulator, method: str, headers: dict[str, str], body: bytes = b"", path: str = ""
) -> http.client.HTTPResponse:
    parts = urlsplit(emulator.endpoint_url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request(method, path or parts.path + "/", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def counter(emulator: Emulator) -> int:
    table = emulator.dynamodb.tables[ResourceNames("endpoint").table]
    item = table.items.get("arrivals#0")
    return int(item["n"]["N"]) if item else 0


def test_the_operators_boto3_reaches_the_room(emulator: Emulator) -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url=emulator.endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="operator",
        aws_secret_access_key="operator",
    )
    before = counter(emulator)
    client.update_item(
        TableName=ResourceNames("endpoint").table,
        Key=COUNTER,
        UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    assert counter(emulator) == before + 1


def _aws_headers(host: str) -> dict[str, str]:
    return {
        "Host": host,
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.UpdateItem",
    }


def test_nothing_a_browser_can_send_changes_the_room(emulator: Emulator) -> None:
    parts = urlsplit(emulator.endpoint_url)
    own_host = f"127.0.0.1:{parts.port}"
    body = increment(ResourceNames("endpoint").table)
    page = "http://localhost:8081"
    attempts = {
        # The simple requests a page may send anywhere without asking.
        "form POST": ("POST", {"Host": own_host, "Origin": page,
                               "Content-Type": "application/x-www-form-urlencoded",
                               "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}),
        "text POST": ("POST", {"Host": own_host, "Origin": page, "Content-Type": "text/plain",
                               "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}),
        "GET": ("GET", {"Host": own_host, "Sec-Fetch-Site": "cross-site"}),
        # The preflight a page must pass before it may send the AWS headers.
        "preflight": ("OPTIONS", {"Host": own_host, "Origin": page,
                                  "Access-Control-Request-Method": "POST",
                                  "Access-Control-Request-Headers": "content-type,x-amz-target"}),
        # What the request would look like had a preflight passed.
        "cross-origin fetch": ("POST", {**_aws_headers(own_host), "Origin": page,
                                        "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}),
        # A same-origin page: only a page served by the endpoint itself, which serves none.
        "same-origin fetch": ("POST", {**_aws_headers(own_host),
                                       "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}),
        # DNS rebinding: the page's own name now resolves to 127.0.0.1.
        "rebound name": ("POST", _aws_headers(f"attacker.example:{parts.port}")),
    }  # fmt: skip
    before = counter(emulator)
    for what, (method, headers) in attempts.items():
        response = send(emulator, method, headers, body)
        assert response.status == 403, what
        assert not [h for h in response.getheaders() if h[0].lower().startswith("access-control")]
    # Without the secret path nothing is answered, whatever the request looks like.
    for path in ("/", "/moto-api/data.json", "/moto-api/reset", parts.path + "x/"):
        assert send(emulator, "POST", _aws_headers(own_host), body, path).status == 403, path
    assert counter(emulator) == before
    # The very same request, as boto3 sends it, is answered.
    assert send(emulator, "POST", _aws_headers(own_host), body).status == 200
    assert counter(emulator) == before + 1
