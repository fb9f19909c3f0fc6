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
   action; the list never changes, so it is computed once per class. And while a consumer
   long-polls, moto re-checks "is anything receivable?" by listing every visible message under
   the queue's lock at each send: the check now stops at the first receivable message.
4. Reads dominate a room (every poll, every /client check): moto's generic dispatch and
   response serializer cost more than the read itself. Plain GetItem and BatchGetItem
   requests by partition key (what the templates and the pipeline send) are answered straight
   from moto's table; anything else (projections, bad keys, unknown tables, duplicates) takes
   moto's own path and gets moto's own answer or error. The templates' requests skip boto3
   too (`EmulatorDynamoDb`): API Gateway sends the rendered JSON as it is, and so does local
   mode.
5. The producer's two calls per new visitor: the arrival counter (`UpdateItem ... ADD n :one`)
   went through moto's expression parser, validator and serializer, and `SendMessage` through
   its dispatch. Exactly these shapes (an atomic ADD of a whole number to one attribute of an
   item keyed by partition key; a plain message body) are applied to moto's table and queue
   directly, under one lock so no concurrent increment is lost; any other shape takes moto's
   own path.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.handlers import BUILTIN_HANDLERS
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core import responses as moto_responses
from moto.core.botocore_stubber import BotocoreStubber, MockRawResponse
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.moto_api._internal import mock_random
from moto.sqs import models as sqs_models

from beekeeper.core.local_room import LOCAL_REGION
from beekeeper.local.integration import DynamoDbTarget

# botocore service ids the room's code uses, and their host names in AWS, which moto's
# in-process dispatch recognises.
_AWS_HOSTS = {
    "dynamodb": f"dynamodb.{LOCAL_REGION}.amazonaws.com",
    "sqs": f"sqs.{LOCAL_REGION}.amazonaws.com",
}


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
        response: AWSResponse | None = None
        action = event_name.rsplit(".", 1)[1]
        fast = _FAST_ACTIONS.get(f"{service}.{action}")
        if fast is not None:
            response = fast(action, request)
        if response is None:
            response = self._stubber(event_name, request)
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


def _json_body(request: AWSPreparedRequest) -> dict[str, Any] | None:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


_READ_OPTIONS = frozenset({"TableName", "Key", "ConsistentRead"})
_BATCH_OPTIONS = frozenset({"Keys", "ConsistentRead"})


def _fast_read(action: str, request: AWSPreparedRequest) -> AWSResponse | None:
    """A plain read answered from moto's table, or None for moto's own path to answer."""
    body = _json_body(request)
    if body is None:
        return None
    try:
        answer = _read_answer(action, body)
    except _MotoDecides:
        return None
    return _json_response(request, answer)


def _read_answer(action: str, body: dict[str, Any]) -> dict[str, Any]:
    backend: Any = dynamodb_backends[DEFAULT_ACCOUNT_ID][LOCAL_REGION]
    if action == "GetItem":
        if not set(body) <= _READ_OPTIONS or not _optional_bool(body, "ConsistentRead"):
            raise _MotoDecides
        item = _read(backend, body.get("TableName"), body.get("Key"))
        return {"Item": item} if item else {}
    else:
        requested = body.get("RequestItems")
        if set(body) != {"RequestItems"} or not isinstance(requested, dict):
            raise _MotoDecides
        responses: dict[str, list[Any]] = {}
        total = 0
        for table_name, table_request in requested.items():
            if not isinstance(table_request, dict) or not set(table_request) <= _BATCH_OPTIONS:
                raise _MotoDecides
            keys = table_request.get("Keys")
            if not isinstance(keys, list) or not _optional_bool(table_request, "ConsistentRead"):
                raise _MotoDecides
            total += len(keys)
            if total > 100 or len({json.dumps(k, sort_keys=True) for k in keys}) != len(keys):
                raise _MotoDecides
            found = responses.setdefault(table_name, [])
            for key in keys:
                item = _read(backend, table_name, key)
                if item:
                    found.append(item)
        return {"Responses": responses, "UnprocessedKeys": {}}


class _MotoDecides(Exception):
    """Not a shape the fast path answers: moto's own path answers (or refuses) it."""


def _optional_bool(request: dict[str, Any], name: str) -> bool:
    return isinstance(request.get(name, False), bool)


class EmulatorDynamoDb:
    """The /polling and /client integration's DynamoDB in local mode.

    API Gateway hands DynamoDB the rendered JSON as it is; a plain read is answered from moto's
    table with no boto3 round trip (serialising, signing and parsing cost more than the read),
    anything else goes to `moto` (the room code's boto3 target), which answers or refuses it.
    """

    def __init__(self, moto: DynamoDbTarget) -> None:
        self._moto = moto

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        if action in ("GetItem", "BatchGetItem"):
            try:
                request = json.loads(body)
            except ValueError:
                request = None
            if isinstance(request, dict):
                try:
                    return 200, json.dumps(_read_answer(action, request))
                except _MotoDecides:
                    pass
        return self._moto(action, body)


def _read(backend: Any, table_name: object, key: object) -> dict[str, Any] | None:
    """The item's attributes, or None when there is no such item."""
    table = backend.tables.get(table_name) if isinstance(table_name, str) else None
    if table is None or table.range_key_attr is not None or not isinstance(key, dict):
        raise _MotoDecides
    value = key.get(table.hash_key_attr)
    if len(key) != 1 or not isinstance(value, dict) or len(value) != 1:
        raise _MotoDecides
    ((kind, text),) = value.items()
    if kind not in ("S", "N", "B") or not isinstance(text, str) or not text:
        raise _MotoDecides
    item = backend.get_item(table_name, key)
    if item is None:
        return None
    attributes: dict[str, Any] = item.to_json("Item")["Item"]
    return attributes


# One lock for every fast write: an increment is a read and a write, and threads interleave.
_WRITE_LOCK = threading.Lock()
_COUNTER_EXPRESSION = re.compile(r"ADD ([A-Za-z_][A-Za-z0-9_]*) (:[A-Za-z0-9_]+)")
_COUNTER_OPTIONS = frozenset(
    {"TableName", "Key", "UpdateExpression", "ExpressionAttributeValues", "ReturnValues"}
)


def _fast_counter(_action: str, request: AWSPreparedRequest) -> AWSResponse | None:
    """`UpdateItem` of exactly `ADD <attribute> :<whole number>`, else None (moto's path)."""
    body = _json_body(request)
    if body is None:
        return None
    if not set(body) <= _COUNTER_OPTIONS:
        return None
    match = _COUNTER_EXPRESSION.fullmatch(str(body.get("UpdateExpression", "")))
    values = body.get("ExpressionAttributeValues")
    returns = body.get("ReturnValues", "NONE")
    if match is None or not isinstance(values, dict) or set(values) != {match.group(2)}:
        return None
    increment = values[match.group(2)]
    if returns not in ("NONE", "UPDATED_NEW", "ALL_NEW") or not isinstance(increment, dict):
        return None
    text = increment.get("N")
    if (
        set(increment) != {"N"}
        or not isinstance(text, str)
        or not re.fullmatch(r"-?\d{1,30}", text)
    ):
        return None
    backend: Any = dynamodb_backends[DEFAULT_ACCOUNT_ID][LOCAL_REGION]
    table_name, key, attribute = body.get("TableName"), body.get("Key"), match.group(1)
    if not isinstance(key, dict) or attribute in key:
        return None  # a key attribute can not be updated: moto says so
    with _WRITE_LOCK:
        try:
            current = _read(backend, table_name, key)
        except _MotoDecides:
            return None
        if current is None:
            item = backend.put_item(table_name, {**key, attribute: {"N": text}})
        else:
            old = current.get(attribute)
            if old is not None and (set(old) != {"N"} or not re.fullmatch(r"-?\d+", old["N"])):
                return None  # not a whole number: moto decides (and explains)
            total = int(text) + (int(old["N"]) if old is not None else 0)
            item = backend.get_item(table_name, key)
            item.attrs[attribute] = DynamoType({"N": str(total)})
        new = item.to_json("Item")["Item"]
    answer: dict[str, Any] = {}
    if returns == "UPDATED_NEW":
        answer = {"Attributes": {attribute: new[attribute]}}
    elif returns == "ALL_NEW":
        answer = {"Attributes": new}
    return _json_response(request, answer)


_SEND_OPTIONS = frozenset({"QueueUrl", "MessageBody"})


def _fast_send(_action: str, request: AWSPreparedRequest) -> AWSResponse | None:
    """A plain `SendMessage` (body only) to a standard queue, else None (moto's path)."""
    body = _json_body(request)
    if body is None:
        return None
    queue_url, message_body = body.get("QueueUrl"), body.get("MessageBody")
    if set(body) != _SEND_OPTIONS or not isinstance(queue_url, str) or not message_body:
        return None
    backend: Any = sqs_models.sqs_backends[DEFAULT_ACCOUNT_ID][LOCAL_REGION]
    queue = backend.queues.get(queue_url.rstrip("/").rsplit("/", 1)[-1])
    if queue is None or queue.fifo_queue or not isinstance(message_body, str):
        return None
    # moto's queue has its own lock; the counters' lock is not needed here.
    message = _send_message(backend, queue.name, message_body)
    return _json_response(request, {"MD5OfMessageBody": message.body_md5, "MessageId": message.id})


def _json_response(request: AWSPreparedRequest, answer: dict[str, Any]) -> AWSResponse:
    raw = json.dumps(answer).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0", "Content-Length": str(len(raw))}
    return AWSResponse(request.url, 200, headers, MockRawResponse(raw))


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


_original_wait_for_messages = sqs_models.Queue.wait_for_messages


def _wait_for_messages(self: Any, timeout: int) -> None:
    """moto's long-poll wait, with a predicate that stops at the first receivable message.

    moto's own predicate builds the list of every visible message, under the queue's lock, each
    time a message is sent while a consumer waits: O(queue length) per send.
    """
    with self._messages_lock:
        self._messages_lock.wait_for(
            lambda: any(m.visible and not m.delayed for m in self._messages), timeout=timeout
        )


_original_method_names = moto_responses.method_names_from_class


@functools.cache
def _method_names(clazz: object) -> frozenset[str]:
    return frozenset(_original_method_names(clazz))


_patch_users = 0
_patch_lock = threading.Lock()


def fast_standard_sends() -> Callable[[], None]:
    """Switch the moto patches (2, 3 and the long-poll wait) on, process-wide, until the
    returned function is called; they stay on while any room of the process still uses them."""
    global _patch_users
    with _patch_lock:
        _patch_users += 1
        _apply_patches(True)
    released = threading.Event()

    def release() -> None:
        global _patch_users
        with _patch_lock:
            if released.is_set():
                return
            released.set()
            _patch_users -= 1
            if _patch_users == 0:
                _apply_patches(False)

    return release


def _apply_patches(enabled: bool) -> None:
    backend_class: Any = sqs_models.SQSBackend
    backend_class.send_message = _send_message if enabled else _original_send_message
    queue_class: Any = sqs_models.Queue
    queue_class.wait_for_messages = _wait_for_messages if enabled else _original_wait_for_messages
    responses_module: Any = moto_responses
    responses_module.method_names_from_class = _method_names if enabled else _original_method_names


_FAST_ACTIONS = {
    "dynamodb.GetItem": _fast_read,
    "dynamodb.BatchGetItem": _fast_read,
    "dynamodb.UpdateItem": _fast_counter,
    "sqs.SendMessage": _fast_send,
}
