"""WSGI requests as API Gateway REST proxy events, and proxy results back as HTTP answers.

The producer Lambda is called with the very event shape API Gateway's REST proxy integration
hands it in AWS (format 1.0), so local mode runs the real handler, not a local variant of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

LOCAL_STAGE = "local"


def request_headers(environ: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The request's headers as (Name, value) pairs, in the spelling clients send."""
    headers: list[tuple[str, str]] = []
    for key, value in environ.items():
        if key == "HTTP_COOKIE":
            # The WSGI server joined repeated Cookie headers with ", ", which no cookie can
            # hold (RFC 6265): split them again, as API Gateway keeps them apart.
            headers += [("Cookie", part) for part in str(value).split(", ")]
        elif key.startswith("HTTP_"):
            name = "-".join(part.capitalize() for part in key[5:].split("_"))
            headers.append((name, str(value)))
    for key, name in (("CONTENT_TYPE", "Content-Type"), ("CONTENT_LENGTH", "Content-Length")):
        if environ.get(key):
            headers.append((name, str(environ[key])))
    return headers


def query_pairs(environ: Mapping[str, Any]) -> list[tuple[str, str]]:
    return parse_qsl(str(environ.get("QUERY_STRING", "")), keep_blank_values=True)


def rest_proxy_event(
    environ: Mapping[str, Any],
    *,
    resource: str,
    host: str,
    request_time_ms: int,
    body: str | None = None,
) -> dict[str, Any]:
    """The REST API proxy event for this request.

    `host` is the gateway's own 127.0.0.1:port: the Host and X-Forwarded-Proto (http) the
    producer sees are what tell it this is plain-http loopback, where the cookie may omit
    Secure; API Gateway always says https.
    """
    headers: dict[str, str] = {}
    multi_headers: dict[str, list[str]] = {}
    for name, value in request_headers(environ):
        headers[name] = value
        multi_headers.setdefault(name, []).append(value)
    for name, value in (
        ("Host", host),
        ("X-Forwarded-Proto", "http"),
        ("X-Forwarded-Port", host.rsplit(":", 1)[-1]),
        ("X-Forwarded-For", str(environ.get("REMOTE_ADDR", "127.0.0.1"))),
    ):
        headers[name] = value
        multi_headers[name] = [value]
    query: dict[str, str] = {}
    multi_query: dict[str, list[str]] = {}
    for name, value in query_pairs(environ):
        query[name] = value
        multi_query.setdefault(name, []).append(value)
    method = str(environ.get("REQUEST_METHOD", "GET"))
    path = str(environ.get("PATH_INFO", "/"))
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "accountId": "123456789012",
            "apiId": "local",
            "domainName": host,
            "domainPrefix": host.split(":", 1)[0],
            "httpMethod": method,
            "path": path,
            "protocol": str(environ.get("SERVER_PROTOCOL", "HTTP/1.1")),
            "requestId": str(uuid.uuid4()),
            "requestTime": "",
            "requestTimeEpoch": request_time_ms,
            "resourceId": "local",
            "resourcePath": resource,
            "stage": LOCAL_STAGE,
            "identity": {
                "sourceIp": str(environ.get("REMOTE_ADDR", "127.0.0.1")),
                "userAgent": headers.get("User-Agent", ""),
            },
        },
        "body": body,
        "isBase64Encoded": False,
    }


def proxy_result_headers(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A proxy result's headers as API Gateway sends them: multi-value ones all kept."""
    headers: list[tuple[str, str]] = []
    multi = result.get("multiValueHeaders") or {}
    for name, value in (result.get("headers") or {}).items():
        if name not in multi:
            headers.append((str(name), str(value)))
    for name, values in multi.items():
        for value in values:
            headers.append((str(name), str(value)))
    return headers
