"""The local gateway's translation between WSGI and API Gateway's REST proxy format."""

from __future__ import annotations

import io

import pytest

from beekeeper.local.proxy_event import proxy_result_headers, rest_proxy_event
from beekeeper.local.schedule import MinuteSchedule


def environ(**extra: object) -> dict[str, object]:
    base: dict[str, object] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/beekeeper",
        "QUERY_STRING": "utm_source=mail&tag=a&tag=b&empty=",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_COOKIE": "a=1; beekeeper_token=x",
        "HTTP_USER_AGENT": "test-agent",
        "HTTP_X_FORWARDED_PROTO": "https",  # a client may not claim https here
        "HTTP_HOST": "evil.example",
        "wsgi.input": io.BytesIO(b""),
    }
    base.update(extra)
    return base


def test_the_event_has_the_rest_proxy_shape_with_loopback_host_and_http() -> None:
    event = rest_proxy_event(
        environ(), resource="/beekeeper", host="127.0.0.1:8080", request_time_ms=1_700_000_000_123
    )
    assert event["httpMethod"] == "GET"
    assert event["resource"] == event["path"] == "/beekeeper"
    assert event["headers"]["Host"] == "127.0.0.1:8080"
    assert event["headers"]["X-Forwarded-Proto"] == "http"
    assert event["multiValueHeaders"]["X-Forwarded-Proto"] == ["http"]
    assert event["headers"]["Cookie"] == "a=1; beekeeper_token=x"
    assert event["multiValueHeaders"]["Cookie"] == ["a=1; beekeeper_token=x"]
    assert event["queryStringParameters"] == {"utm_source": "mail", "tag": "b", "empty": ""}
    assert event["multiValueQueryStringParameters"]["tag"] == ["a", "b"]
    context = event["requestContext"]
    assert context["requestTimeEpoch"] == 1_700_000_000_123
    assert context["path"] == "/beekeeper"
    assert context["resourcePath"] == "/beekeeper"
    assert context["identity"]["sourceIp"] == "127.0.0.1"
    assert context["identity"]["userAgent"] == "test-agent"
    assert event["body"] is None
    assert event["isBase64Encoded"] is False


def test_no_query_is_none_as_in_api_gateway() -> None:
    event = rest_proxy_event(
        environ(QUERY_STRING=""), resource="/beekeeper", host="127.0.0.1:1", request_time_ms=0
    )
    assert event["queryStringParameters"] is None
    assert event["multiValueQueryStringParameters"] is None


def test_every_set_cookie_of_a_result_is_passed_through() -> None:
    headers = proxy_result_headers(
        {
            "statusCode": 302,
            "headers": {"Location": "room", "Set-Cookie": "only=one"},
            "multiValueHeaders": {"Set-Cookie": ["a=1; HttpOnly", "b=2; HttpOnly"]},
        }
    )
    assert ("Location", "room") in headers
    assert [v for k, v in headers if k == "Set-Cookie"] == ["a=1; HttpOnly", "b=2; HttpOnly"]


def test_deliveries_follow_epoch_aligned_minutes() -> None:
    # The code is never called by next_delivery: None stands in for it.
    short = MinuteSchedule(None, minute_seconds=2.0, with_governor=False)  # type: ignore[arg-type]
    # A quarter of the span's leading margin (1/60 of the minute) after the minute starts.
    assert short.next_delivery(10.3) == pytest.approx(12 + 2 / 240)
    assert short.next_delivery(11.999) == pytest.approx(12 + 2 / 240)
    assert short.next_delivery(12.0) == pytest.approx(14 + 2 / 240)
    real = MinuteSchedule(None, minute_seconds=60.0, with_governor=False)  # type: ignore[arg-type]
    assert real.next_delivery(125.0) == 180.25
