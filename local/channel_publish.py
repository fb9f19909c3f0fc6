"""The local push channel's HTTP endpoint: `POST /event`, publishing as AppSync Events takes it.

A publish to a room's Event API is signed with SigV4 by an IAM principal allowed to publish
(docs/stack.md); a local room's is signed the same way by the same code (room/push.py), with
the placeholder credentials every request to a local room is signed with (core/local_room.py),
and refused unless the signature checks out: so local mode runs the very request AWS gets,
never a kinder one. An API key can not publish here either (its namespace publishes by IAM
only, stacks/channel.py). The endpoint listens on 127.0.0.1 only, on a port of its own.

What AWS documents and this answers alike ("Publish events via HTTP", AWS AppSync Events):
a JSON body `{"channel": "/room/<name>", "events": ["<JSON text>", ...]}` of 1 to 5 events,
each a JSON value as text of at most 240 KB, in a body of at most 1.2 MB; the answer
`{"failed": [], "successful": [{"identifier": "...", "index": 0}]}`. How AWS words a refusal
is not documented (docs/pipeline.md, "The push channel"): here one JSON `errors` list with
AWS's error types (UnauthorizedException, BadRequestException), and no 5xx for any request.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from beekeeper.core import push
from beekeeper.core.local_room import LOCAL_REGION, PLACEHOLDER_CREDENTIALS
from beekeeper.local.http_server import StartResponse
from beekeeper.room.push import SIGNING_SERVICE

log = logging.getLogger("beekeeper.local")

# "Event APIs - Publish payload size": 1.2 MB (AWS AppSync Events quotas, docs/stack.md).
MAX_BODY_BYTES = 1_200_000
# "In most cases, a request must reach AWS within five minutes of the time stamp in the
# request. Otherwise, AWS denies the request." (Signing AWS API requests, IAM User Guide)
SIGNATURE_SKEW_SECONDS = 300
_AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<key>[^/,\s]+)/(?P<date>\d{8})/(?P<region>[^/,\s]+)/"
    r"(?P<service>[^/,\s]+)/aws4_request,\s*SignedHeaders=(?P<signed>[a-z0-9;-]+),\s*"
    r"Signature=(?P<signature>[0-9a-f]{64})"
)
# The credentials a local room's requests are signed with.
LOCAL_CREDENTIALS = Credentials(
    PLACEHOLDER_CREDENTIALS["aws_access_key_id"], PLACEHOLDER_CREDENTIALS["aws_secret_access_key"]
)

Publish = Callable[[str, Sequence[str]], list[str]]


def signature_problem(
    *,
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    now: float,
    credentials: Credentials = LOCAL_CREDENTIALS,
    region: str = LOCAL_REGION,
) -> str:
    """Why a request is not signed by `credentials` for this service and region ("" if it is):
    the signature is computed again from the headers it names, as AWS does."""
    found = _AUTHORIZATION.fullmatch(headers.get("authorization", "").strip())
    if found is None:
        return "the request is not signed with SigV4"
    if found["key"] != credentials.access_key:
        return "the request is signed by an identity that may not publish here"
    if (found["region"], found["service"]) != (region, SIGNING_SERVICE):
        return f"the request is not signed for {SIGNING_SERVICE} in {region}"
    stamp = headers.get("x-amz-date", "")
    try:
        signed_at = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return "the request has no X-Amz-Date"
    if abs(now - signed_at) > SIGNATURE_SKEW_SECONDS or not stamp.startswith(found["date"]):
        return "the signature has expired or is not yet valid"
    names = found["signed"].split(";")
    if "host" not in names or any(name not in headers for name in names):
        return "the request does not carry every header it signed"
    request = AWSRequest(
        method=method, url=url, data=body, headers={name: headers[name] for name in names}
    )
    request.context["timestamp"] = stamp
    auth = SigV4Auth(credentials, SIGNING_SERVICE, region)
    expected = auth.signature(
        auth.string_to_sign(request, auth.canonical_request(request)), request
    )
    if not hmac.compare_digest(expected, found["signature"]):
        return "the signature does not match"
    return ""


def publish_problem(body: Any) -> str:
    """Why a publish's body is not one AWS takes ("" if it is)."""
    if not isinstance(body, dict):
        return "the body must be a JSON object with channel and events"
    channel, events = body.get("channel"), body.get("events")
    if not isinstance(channel, str) or not push.CHANNEL_PATTERN.fullmatch(channel):
        return "channel must be a channel path such as /room/sale"
    if channel.strip("/").split("/")[0] != push.NAMESPACE:
        return f"the channel's namespace is not defined (only /{push.NAMESPACE})"
    if not isinstance(events, list) or not 1 <= len(events) <= push.MAX_EVENTS_PER_PUBLISH:
        return f"events must be a list of 1 to {push.MAX_EVENTS_PER_PUBLISH} events"
    for event in events:
        if not isinstance(event, str) or len(event.encode("utf-8")) > push.MAX_EVENT_BYTES:
            return "each event must be a JSON value as text, at most 240 KB"
        try:
            json.loads(event)
        except ValueError:
            return "each event must be a JSON value as text"
    return ""


class PublishEndpoint:
    """The WSGI app of `POST /event` (served by waitress on its own loopback port)."""

    def __init__(self, publish: Publish, clock: Callable[[], float]) -> None:
        self._publish = publish
        self._clock = clock

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            return self._answer(environ, start_response)
        except Exception:
            log.exception("the local channel's publish endpoint failed")
            return _json(start_response, 400, _errors("BadRequestException", "bad request"))

    def _answer(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != push.HTTP_PATH:
            return _json(start_response, 404, _errors("NotFoundException", "no such path"))
        if environ.get("REQUEST_METHOD") != "POST":
            return _json(
                start_response, 405, _errors("BadRequestException", "publishing is POST only")
            )
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY_BYTES:
            return _json(
                start_response, 413, _errors("BadRequestException", "the body is over 1.2 MB")
            )
        body = environ["wsgi.input"].read(length)
        headers = {
            key[5:].replace("_", "-").lower(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = str(environ["CONTENT_TYPE"])
        if environ.get("CONTENT_LENGTH"):
            headers["content-length"] = str(environ["CONTENT_LENGTH"])
        url = f"http://{headers.get('host', '')}{push.HTTP_PATH}"
        problem = signature_problem(
            method="POST", url=url, headers=headers, body=body, now=self._clock()
        )
        if problem:
            log.warning("the local channel refused a publish: %s", problem)
            return _json(start_response, 401, _errors("UnauthorizedException", problem))
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        problem = publish_problem(parsed)
        if problem:
            return _json(start_response, 400, _errors("BadRequestException", problem))
        identifiers = self._publish(parsed["channel"], parsed["events"])
        return _json(
            start_response,
            200,
            {
                "failed": [],
                "successful": [
                    {"identifier": identifier, "index": index}
                    for index, identifier in enumerate(identifiers)
                ],
            },
        )


def _errors(kind: str, message: str) -> dict[str, Any]:
    return {"errors": [{"errorType": kind, "message": message}]}


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            405: "Method Not Allowed", 413: "Content Too Large"}  # fmt: skip


def _json(start_response: StartResponse, code: int, value: Any) -> list[bytes]:
    data = json.dumps(value).encode("utf-8")
    start_response(
        f"{code} {_REASONS[code]}",
        [
            ("Content-Type", "application/json"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-store"),
        ],
    )
    return [data]
