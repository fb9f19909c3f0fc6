"""Where local mode's time went, and the two workarounds (docs/local.md has the figures).

Profiling a local room under load (py-spy) showed two costs, neither in our code:

1. Every AWS call of the room's own code (producer, consumers, trigger, the /polling and
   /client templates' DynamoDB requests) went over loopback HTTP to moto's server: a new TCP
   connection per call (werkzeug's development server), Flask dispatch, and a process-wide
   lock around moto's service lookup. `InProcessTransport` answers the calls that target the
   emulator's own URL inside this process, from the very backends the server serves: boto3
   still builds, signs and parses every request and the handlers run unchanged; only the
   socket is skipped. The server stays up for the operator CLI and anything else outside.
2. moto's SendMessage computes all of the queue's attributes to read one flag, and three of
   those attributes scan every message, so each send costs O(queue length): about 30 sends/s
   with a few thousand visitors queued. `fast_standard_sends` gives standard queues (ours)
   a send that skips that scan and otherwise does what moto's does.
3. moto lists a response class's methods with `inspect.getmembers` on every call to find the
   action; the list never changes, so it is computed once per class.
"""

from __future__ import annotations

import functools
import threading
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.handlers import BUILTIN_HANDLERS
from moto.core import responses as moto_responses
from moto.core.botocore_stubber import BotocoreStubber
from moto.moto_api._internal import mock_random
from moto.sqs import models as sqs_models

# botocore service ids the room's code uses, and their host names in AWS, which moto's
# in-process dispatch recognises.
_AWS_HOSTS = {"dynamodb": "dynamodb.us-east-1.amazonaws.com", "sqs": "sqs.us-east-1.amazonaws.com"}


class InProcessTransport:
    """A botocore `before-send` hook: emulator-bound calls answered without a socket."""

    def __init__(self, endpoint_url: str) -> None:
        self._prefix = endpoint_url.rstrip("/")
        self._stubber = BotocoreStubber()
        self._stubber.enabled = True
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, event_name: str, request: AWSPreparedRequest, **_: Any) -> Any:
        url = request.url or ""
        if not url.startswith(self._prefix):
            return None
        service = event_name.split(".")[1] if event_name.count(".") >= 2 else ""
        host = _AWS_HOSTS.get(service)
        if host is None:
            return None  # a service we do not route: let it go over HTTP as usual
        parts = urlsplit(url)
        request.url = f"https://{host}{parts.path}" + (f"?{parts.query}" if parts.query else "")
        response: AWSResponse | None = self._stubber(event_name, request)
        if response is None:  # moto did not recognise it: the server will say why
            request.url = url
        else:
            with self._lock:
                self.calls += 1
        return response

    def install(self) -> None:
        """For every botocore session created from now on, and for boto3's default one."""
        import boto3

        BUILTIN_HANDLERS.append(("before-send", self))
        if boto3.DEFAULT_SESSION is not None:
            boto3.DEFAULT_SESSION.events.register("before-send", self)

    def uninstall(self) -> None:
        import boto3

        if ("before-send", self) in BUILTIN_HANDLERS:
            BUILTIN_HANDLERS.remove(("before-send", self))
        if boto3.DEFAULT_SESSION is not None:
            boto3.DEFAULT_SESSION.events.unregister("before-send", self)


_original_send_message = sqs_models.SQSBackend.send_message


def _send_message(
    self: Any,
    queue_name: str,
    message_body: str,
    message_attributes: dict[str, Any] | None = None,
    delay_seconds: int | None = None,
    deduplication_id: str | None = None,
    group_id: str | None = None,
    system_attributes: dict[str, Any] | None = None,
    validate_group_id: bool = True,
) -> Any:
    queue = self.get_queue(queue_name)
    delay = int(delay_seconds) if delay_seconds is not None else int(queue.delay_seconds or 0)
    simple = (
        not queue.fifo_queue
        and deduplication_id is None
        and group_id is None
        and 0 <= delay <= sqs_models.MAXIMUM_MESSAGE_DELAY
        and not queue.lambda_event_source_mappings
    )
    if not simple:  # anything unusual: moto's own path, with its checks and errors
        return _original_send_message(
            self,
            queue_name,
            message_body,
            message_attributes,
            delay_seconds,
            deduplication_id,
            group_id,
            system_attributes,
            validate_group_id,
        )
    self._validate_message(queue, message_body=message_body, delay_seconds=delay)
    message = sqs_models.Message(str(mock_random.uuid4()), message_body, system_attributes)
    if message_attributes:
        message.message_attributes = message_attributes
    message.mark_sent(delay_seconds=delay)
    queue.add_message(message)
    return message


_original_method_names = moto_responses.method_names_from_class


@functools.cache
def _method_names(clazz: object) -> frozenset[str]:
    return frozenset(_original_method_names(clazz))


def fast_standard_sends(enabled: bool) -> None:
    """Switch workarounds 2 and 3 on or off (they patch moto, process-wide)."""
    sqs_models.SQSBackend.send_message = (  # type: ignore[method-assign]
        _send_message if enabled else _original_send_message
    )
    moto_responses.method_names_from_class = (  # type: ignore[assignment]
        _method_names if enabled else _original_method_names
    )
