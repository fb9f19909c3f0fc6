"""The room's AWS API for the operator CLI: loopback HTTP, a secret path, nothing for browsers.

`beekeeper status|off|on|rate NAME` and `beekeeper keys rotate|retire NAME` run in another
process and reach a local room's table, queues and ticket keys' secret with boto3, through this
endpoint (recorded as the room's `EndpointUrl`). Only boto3's kind of request is answered: a
POST to `/<secret>/` (the secret is random per start and kept in the room's record, readable by
the operator alone) naming its own loopback address as the host, with an AWS JSON content type
and no `Origin` or `Sec-Fetch-*` header, which every browser sends and boto3 never does. No
CORS header is ever sent, so a web page in the developer's browser can neither read nor change
the room's state, nor rebind a name to it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from beekeeper.core.loopback import loopback_host_headers
from beekeeper.local.http_server import StartResponse
from beekeeper.store.wire import JsonProtocol

log = logging.getLogger("beekeeper.local")

MAX_BODY_BYTES = 1024 * 1024
_AWS_JSON = ("application/x-amz-json-1.0", "application/x-amz-json-1.1")


class OperatorEndpoint:
    def __init__(self, protocol: JsonProtocol, secret: str) -> None:
        self._protocol = protocol
        self._paths = {f"/{secret}", f"/{secret}/"}
        self.port = 0  # set once the server is bound

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        refusal = self._refusal(environ)
        if refusal is not None:
            log.warning("operator endpoint refused a request: %s", refusal)
            body = refusal.encode("utf-8")
            start_response(
                "403 Forbidden",
                [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))],
            )
            return [body]
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(min(length, MAX_BODY_BYTES)) if length > 0 else b""
        status, headers, answer = self._protocol.answer(
            str(environ.get("HTTP_X_AMZ_TARGET", "")), bytes(raw)
        )
        start_response(f"{status} {'OK' if status == 200 else 'Error'}", list(headers.items()))
        return [answer]

    def _refusal(self, environ: dict[str, Any]) -> str | None:
        if environ.get("REQUEST_METHOD") != "POST":
            return "only AWS API calls (POST) are answered here"
        if environ.get("PATH_INFO") not in self._paths:
            return "not this room's endpoint path"
        if environ.get("HTTP_HOST", "") not in loopback_host_headers(self.port):
            return "only requests to the endpoint's own loopback address are answered"
        if any(k == "HTTP_ORIGIN" or k.startswith("HTTP_SEC_FETCH_") for k in environ):
            return "a browser's request (Origin or Sec-Fetch headers) is never answered"
        content_type = str(environ.get("CONTENT_TYPE", "")).split(";")[0].strip().lower()
        if content_type not in _AWS_JSON:
            return "only AWS JSON protocol requests are answered"
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return "a bad Content-Length"
        if length > MAX_BODY_BYTES:
            return "the request is too large"
        return None
