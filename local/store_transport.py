"""boto3 clients whose calls the room's store answers in this process, without a socket.

Local mode gives the room's code real boto3 clients, so botocore builds, validates, signs and
parses every call exactly as in AWS. Each client comes from a session of our own with one
handler on botocore's documented `before-send` event: a request addressed to the room's
endpoint is answered by the store's JSON protocol (store/wire.py) and handed back to botocore
as its HTTP response; anything else goes out as usual. Nothing of boto3 or botocore is
replaced or reached into.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
from botocore import UNSIGNED
from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.config import Config

from beekeeper.core.local_room import LOCAL_REGION, PLACEHOLDER_CREDENTIALS
from beekeeper.store.wire import JsonProtocol

_UNSIGNED = Config(signature_version=UNSIGNED)


class _Body:
    """The raw body botocore reads an AWSResponse's content from."""

    def __init__(self, raw: bytes) -> None:
        self._raw = raw

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._raw


class StoreTransport:
    """The `before-send` handler: the store answers requests to `endpoint_url`."""

    def __init__(self, protocol: JsonProtocol, endpoint_url: str) -> None:
        self._protocol = protocol
        self._prefix = endpoint_url.rstrip("/")
        self.calls = 0

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        url = request.url or ""
        if not url.startswith(self._prefix):
            return None
        target = request.headers.get("X-Amz-Target", b"")
        if isinstance(target, bytes):
            target = target.decode("ascii", "replace")
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, bytes):
            body = body.read()
        status, headers, raw = self._protocol.answer(str(target), body)
        self.calls += 1
        return AWSResponse(url, status, headers, _Body(raw))

    def session(self) -> boto3.session.Session:
        """A boto3 session whose clients of the endpoint reach the store in process."""
        session = boto3.session.Session(region_name=LOCAL_REGION, **PLACEHOLDER_CREDENTIALS)
        session.events.register("before-send.dynamodb", self)
        session.events.register("before-send.sqs", self)
        session.events.register("before-send.secrets-manager", self)
        session.events.register("before-send.cloudwatch", self)
        return session

    def client(self, service: str) -> Any:
        # Unsigned: the store checks no signature, and signing cost a quarter of a call's CPU.
        return self.session().client(service, endpoint_url=self._prefix, config=_UNSIGNED)
