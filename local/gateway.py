"""The local gateway: the deployed stage's API at the same paths, as a WSGI app.

It is built from the very definition the stack deploys (stacks/rest_api.py), loaded as API
Gateway stores it and checked by the same rules (beekeeper.apigateway.model); what it answers
is what that definition makes API Gateway answer:

| method: integration | answered by (as in AWS) |
|---|---|
| /beekeeper, /leave (capacity): AWS_PROXY | the producer Lambda's handler, a REST proxy event |
| the registry's routes: AWS | their templates run as API Gateway runs them, on the store |
| /room, the preflights: MOCK | the same runtime (beekeeper.apigateway.runtime) |
| no such method | the MISSING_AUTHENTICATION_TOKEN gateway response (403) |

Served by waitress (a real, multi-threaded WSGI server) in `beekeeper.local.room`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from beekeeper.apigateway.dynamodb import DynamoDbTarget
from beekeeper.apigateway.http import HttpRequest
from beekeeper.apigateway.model import Method, load
from beekeeper.apigateway.runtime import INTERNAL_ERROR, MISSING_ROUTE, gateway_response
from beekeeper.core.datamodel import COOKIE_NAME
from beekeeper.core.settings import RoomSettings
from beekeeper.local.http_server import StartResponse
from beekeeper.local.proxy_event import (
    proxy_result_headers,
    query_pairs,
    request_headers,
    rest_proxy_event,
)
from beekeeper.local.room_code import RoomCode
from beekeeper.stacks.rest_api import definition, local_references

log = logging.getLogger("beekeeper.local")

MAX_BODY_BYTES = 64 * 1024

_REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    301: "Moved Permanently",
    302: "Found",
    303: "See Other",
    304: "Not Modified",
    307: "Temporary Redirect",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def status_line(code: int) -> str:
    return f"{code} {_REASONS.get(code, 'Status')}"


class ArrivalCounter:
    """New visitors the producer gave a cookie to, for the room's log."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = 0

    def add(self) -> None:
        with self._lock:
            self.total += 1


class Gateway:
    def __init__(
        self,
        *,
        code: RoomCode,
        settings: RoomSettings,
        dynamodb: DynamoDbTarget,
        table_name: str,
        host: str,
        clock: Callable[[], float] = time.time,
        arrivals: ArrivalCounter | None = None,
    ) -> None:
        self._code = code
        self._settings = settings
        self._dynamodb = dynamodb
        self._table_name = table_name
        self._host = host
        self._clock = clock
        self.arrivals = arrivals or ArrivalCounter()
        api = definition(settings, local_references(table_name), page_html=code.page(settings))
        # Loaded as API Gateway stores it, refused on the rules the stack's synth holds.
        self.api = load(api.methods, api.gateway_responses)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", "/"))
        method = str(environ.get("REQUEST_METHOD", "GET"))
        try:
            found = self.api.method(path, method)
            if found is None:
                # API Gateway has no such method: its own answer, as the stack configures it.
                response = gateway_response(self.api, *MISSING_ROUTE)
                status, headers = response.status, list(response.headers.items())
                body = response.body.encode("utf-8")
            elif found.integration.type == "AWS_PROXY":
                status, headers, body = self._producer(environ, found.path)
            else:
                status, headers, body = self._integration(found, environ)
        except Exception:
            # A failing Lambda is API Gateway's 502 in AWS; say why in the log, not to the
            # visitor.
            log.exception("%s %s failed", method, path)
            response = gateway_response(self.api, "DEFAULT_5XX", INTERNAL_ERROR[1], status=502)
            status, headers = response.status, list(response.headers.items())
            body = response.body.encode("utf-8")
        headers.append(("Content-Length", str(len(body))))
        start_response(status_line(status), headers)
        return [body]

    # -- routes ---------------------------------------------------------------------------

    def _producer(
        self, environ: dict[str, Any], resource: str
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """The producer's routes: the marketing link, and capacity mode's /leave."""
        body = _read_body(environ)
        event = rest_proxy_event(
            environ,
            resource=resource,
            host=self._host,
            request_time_ms=int(self._clock() * 1000),
            body=body,
        )
        result = self._code.producer(event, None)
        headers = proxy_result_headers(result)
        if any(
            name.lower() == "set-cookie" and value.startswith(f"{COOKIE_NAME}=")
            for name, value in headers
        ):
            self.arrivals.add()
            log.debug("arrival: a new visitor joined the line")
        text = result.get("body") or ""
        return int(result.get("statusCode", 200)), headers, str(text).encode("utf-8")

    def _integration(
        self, method: Method, environ: dict[str, Any]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        request = HttpRequest(
            method=method.http_method,
            path=method.path,
            query=dict(query_pairs(environ)),
            headers=single_valued(request_headers(environ)),
            body=_read_body(environ) or "",
        )
        now_ms = int(self._clock() * 1000)
        response = self._code.integration(
            self.api,
            method,
            request,
            dynamodb=self._dynamodb,
            request_time_ms=now_ms,
            request_id=f"local-{now_ms}",
        )
        headers = [(str(k), str(v)) for k, v in dict(response.headers).items()]
        return int(response.status), headers, str(response.body).encode("utf-8")


def single_valued(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """The request's headers as a mapping template's `$input.params()` holds them: one value
    per name. AWS does not document which of several same-named headers a mapping template
    sees; the last is kept, as the proxy integration's `headers` keeps it for the same
    request (its `multiValueHeaders` holds them all). docs/vtl.md: several Cookie headers."""
    return dict(pairs)


def _read_body(environ: dict[str, Any]) -> str | None:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length <= 0:
        return None
    raw = environ["wsgi.input"].read(min(length, MAX_BODY_BYTES))
    return bytes(raw).decode("utf-8", errors="replace")
