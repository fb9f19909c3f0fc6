"""Publishing the room's state to waiting pages: the publisher, and the decision each writer of
the status copies makes (core/push.py says what is published and when).

Every writer of the room's state writes the status copies (room/room_state.publish_status):
the CLI's operator commands, the governor after a rate change, the trigger every minute and the
consumers while they admit. Each passes a `StatePush`, which reads the state copy it is about to
write as the shared state document (core/shared_state.document) and, when pages must be told
(a change, or a resync due), marks the copy with the publish and sends the document to the
room's channel once the copies are written. A publish that fails is logged and counted
(core/telemetry.py), never raised: an operator's command and an admission never fail for it,
and the mark is taken back, so the next status write sends again.

`Publisher` is what `StatePush` sends with, a side effect passed in (room/assembly.py's
`Effects`): AppSync Events' HTTP endpoint signed with SigV4 in AWS (`AppSyncPublisher`), the
same signed request to the local channel in `beekeeper local` (local/channel.py), nothing in
the simulator unless it counts (NO_PUBLISHER).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from beekeeper.core import push, telemetry
from beekeeper.core.settings import RoomSettings
from beekeeper.core.shared_state import document
from beekeeper.room.emf import DISCARD, MetricSink

if TYPE_CHECKING:  # botocore is loaded when a publish is signed: the producer never does
    from botocore.awsrequest import AWSRequest

log = logging.getLogger("beekeeper.push")

# AppSync signs and authorises a publish as the service "appsync" (Publish events via HTTP;
# "Create a wscat clone ... IAM auth", AWS AppSync Events developer guide).
SIGNING_SERVICE = "appsync"
# A publish is one small HTTP request; a consumer must not stall its admissions on one.
PUBLISH_TIMEOUT_SECONDS = 2.0


class PublishError(Exception):
    """The channel did not take a publish; the message says what it answered."""


class Publisher(Protocol):
    def publish(self, channel: str, events: Sequence[str]) -> None:
        """Publish `events` (each a JSON text) to `channel`; PublishError if refused."""
        ...


class NoPublisher:
    """A room without a channel: nothing is published, and no status copy is marked."""

    def publish(self, channel: str, events: Sequence[str]) -> None:
        raise PublishError("the room has no push channel")


NO_PUBLISHER = NoPublisher()

# One HTTP request, answered: (status, body). Our own interface over the transport, so the
# signing is tested without a network (tests/unit/test_push.py).
Send = Callable[["AWSRequest"], tuple[int, str]]


def send_over_https(
    request: AWSRequest, timeout: float = PUBLISH_TIMEOUT_SECONDS
) -> tuple[int, str]:
    """`request` sent with botocore's own HTTP session (urllib3, the CA bundle boto3 uses)."""
    from botocore.httpsession import URLLib3Session

    response = URLLib3Session(timeout=timeout).send(request.prepare())
    return response.status_code, response.content.decode("utf-8", "replace")


@dataclass(frozen=True)
class AppSyncPublisher:
    """Publishes over an Event API's HTTP endpoint, `url` (https://<Dns.Http>/event), signed
    with SigV4 by `credentials` (a function giving botocore credentials: the function's role in
    Lambda, the operator's for the CLI, the placeholder ones for a local room)."""

    url: str
    region: str
    credentials: Callable[[], Any]
    send: Send = send_over_https

    def publish(self, channel: str, events: Sequence[str]) -> None:
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if not 1 <= len(events) <= push.MAX_EVENTS_PER_PUBLISH:
            raise ValueError(f"a publish carries 1 to {push.MAX_EVENTS_PER_PUBLISH} events")
        body = json.dumps({"channel": channel, "events": list(events)}).encode("utf-8")
        request = AWSRequest(
            method="POST", url=self.url, data=body, headers={"content-type": "application/json"}
        )
        credentials = self.credentials()
        if credentials is None:
            raise PublishError("no AWS credentials to sign the publish with")
        frozen = getattr(credentials, "get_frozen_credentials", lambda: credentials)()
        SigV4Auth(frozen, SIGNING_SERVICE, self.region).add_auth(request)
        try:
            status, text = self.send(request)
        except Exception as error:
            raise PublishError(f"{self.url} could not be reached ({error})") from error
        if not 200 <= status < 300:
            raise PublishError(f"{self.url} answered {status}: {text[:300]}")
        try:
            failed = json.loads(text).get("failed") or []
        except (ValueError, AttributeError):
            failed = []
        if failed:
            raise PublishError(f"{self.url} refused the event: {json.dumps(failed)[:300]}")


@dataclass(frozen=True)
class Sending:
    """A publish a writer owes the room's pages: the mark its status copy carries, and the
    message."""

    mark: push.Mark
    reason: str
    event: str


@dataclass
class StatePush:
    """One writer's publishing: decides from the state copy it writes, sends, counts.

    `sleep`: a writer that may wait (the CLI, the governor) waits out the second since the
    last publish and publishes; a writer that may not (the trigger, a consumer) leaves the
    publish to the next status write, which finds the change unpublished."""

    settings: RoomSettings
    publisher: Publisher
    metrics: MetricSink = DISCARD
    sleep: Callable[[float], None] | None = None
    warn: Callable[[str], None] = field(default=log.warning)

    @property
    def channel(self) -> str:
        return push.channel_of(self.settings.name)

    def prepare(self, last: push.Mark, state_item: dict[str, Any], now: float) -> Sending | None:
        """The publish writing `state_item` (the state copy) at `now` owes pages, if any, with
        the state item marked; pages were last told `last`."""
        now_ms = _ms(now)
        owed = push.due(last, self._told(state_item, now_ms), now_ms)
        if owed is None:
            return None
        if owed.not_before_ms > now_ms:
            wait = (owed.not_before_ms - now_ms) / 1000
            if self.sleep is None or wait > push.COALESCE_SECONDS:
                return None  # the next status write publishes it
            self.sleep(wait)
            now_ms = owed.not_before_ms
        seq = push.next_seq(last, now_ms)
        state_item["push_seq"] = {"N": str(seq)}
        told = self._told(state_item, now_ms)
        state_item["push_told"] = {"S": told}
        doc = document(state_item, now_ms=now_ms, origin=self.settings.origin)
        return Sending(push.Mark(seq, told), owed.reason, push.message(seq, owed.reason, doc))

    def send(self, sending: Sending) -> bool:
        """Publish; a failure is logged, counted and said (`warn`), never raised."""
        try:
            self.publisher.publish(self.channel, [sending.event])
        except Exception as error:
            self.metrics.count(telemetry.PUSH_FAILURES)
            self.warn(
                f"Waiting pages were not told of the room's {sending.reason} at once ({error}); "
                "they learn it from the shared state, and the room publishes it again with its "
                "next status."
            )
            return False
        self.metrics.count(telemetry.PUSHES)
        log.info("published %s (seq %s) to %s", sending.reason, sending.mark.seq, self.channel)
        return True

    def _told(self, state_item: dict[str, Any], now_ms: int) -> str:
        return push.signal(document(state_item, now_ms=now_ms, origin=self.settings.origin))


def state_push(
    settings: RoomSettings,
    publisher: Publisher,
    *,
    metrics: MetricSink = DISCARD,
    sleep: Callable[[float], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> StatePush | None:
    """A writer's StatePush, or None for a room without a channel (its copies stay unmarked)."""
    if isinstance(publisher, NoPublisher):
        return None
    return StatePush(settings, publisher, metrics=metrics, sleep=sleep, warn=warn or log.warning)


def _ms(now: float) -> int:
    return math.floor(now * 1000)
