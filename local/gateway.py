"""The local gateway: the deployed stage's routes at the same paths, as a WSGI app.

| route | answered by (as in AWS) |
|---|---|
| /beekeeper | the producer Lambda's handler, with a REST proxy event |
| /polling, /client, /jwks.json | the VTL templates through `run_integration`, on the store |
| /enter, /leave | the same, in a capacity-mode room (max_inside > 0) |
| /room | the waiting room page of the room's settings, with the stack's headers |

Served by waitress (a real, multi-threaded WSGI server) in `beekeeper.local.room`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from beekeeper.core.datamodel import COOKIE_NAME
from beekeeper.core.gateway_answers import (
    MISSING_ROUTE_MESSAGE,
    MISSING_ROUTE_STATUS,
    PREFLIGHT_STATUS,
    gateway_error,
    preflight_headers,
    route_method,
    route_methods,
)
from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.core.settings import RoomSettings
from beekeeper.local.http_server import StartResponse
from beekeeper.local.integration import DynamoDbTarget
from beekeeper.local.proxy_event import (
    proxy_result_headers,
    query_pairs,
    request_headers,
    rest_proxy_event,
)
from beekeeper.local.room_code import RoomCode
from beekeeper.vtl import routes

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
        self._page = code.page(settings).encode("utf-8")
        capacity = settings.max_inside > 0
        self._routes = routes(capacity=capacity)
        self._route_methods = route_methods(self._routes)
        self._session_seconds = settings.session_seconds if capacity else 0

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", "/"))
        method = str(environ.get("REQUEST_METHOD", "GET"))
        try:
            if method not in self._route_methods.get(path, ()):
                # API Gateway has no such method: its own answer, as the stack configures it.
                status, headers, body = self._gateway_error(
                    MISSING_ROUTE_STATUS, MISSING_ROUTE_MESSAGE
                )
            elif method == "OPTIONS":
                preflight = preflight_headers(self._settings.origin, route_method(path[1:]))
                status, headers, body = PREFLIGHT_STATUS, list(preflight.items()), b""
            elif path == "/beekeeper":
                status, headers, body = self._producer(environ)
            elif path[1:] in self._routes:
                status, headers, body = self._integration(path[1:], environ)
            else:
                status, headers, body = 200, list(PAGE_HEADERS.items()), self._page
        except Exception:
            # A failing Lambda is API Gateway's 502 in AWS; say why in the log, not to the
            # visitor.
            log.exception("%s %s failed", method, path)
            status, headers, body = self._gateway_error(502, "Internal server error")
        headers.append(("Content-Length", str(len(body))))
        start_response(status_line(status), headers)
        return [body]

    # -- routes ---------------------------------------------------------------------------

    def _producer(self, environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        body = _read_body(environ)
        event = rest_proxy_event(
            environ,
            resource="/beekeeper",
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
        self, route: str, environ: dict[str, Any]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        _read_body(environ)  # never read by the templates (a beacon's body), only consumed
        request = self._code.http_request(
            method=str(environ.get("REQUEST_METHOD", "GET")),
            path=f"/{route}",
            query=dict(query_pairs(environ)),
            headers=dict(request_headers(environ)),
        )
        now_ms = int(self._clock() * 1000)
        response = self._code.integration(
            route,
            request,
            dynamodb=self._dynamodb,
            table_name=self._table_name,
            origin=self._settings.origin,
            request_time_ms=now_ms,
            request_id=f"local-{now_ms}",
            session_seconds=self._session_seconds,
        )
        headers = [(str(k), str(v)) for k, v in dict(response.headers).items()]
        body = response.body
        raw = body if isinstance(body, bytes) else str(body).encode("utf-8")
        return int(response.status), headers, raw

    def _gateway_error(self, status: int, message: str) -> tuple[int, list[tuple[str, str]], bytes]:
        code, headers, body = gateway_error(status, message, self._settings.origin)
        return code, list(headers.items()), body.encode("utf-8")


def _read_body(environ: dict[str, Any]) -> str | None:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length <= 0:
        return None
    raw = environ["wsgi.input"].read(min(length, MAX_BODY_BYTES))
    return bytes(raw).decode("utf-8", errors="replace")
