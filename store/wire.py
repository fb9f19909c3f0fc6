"""The store over AWS's JSON protocols: what boto3 sends and parses, and what API Gateway sends.

`JsonProtocol.answer(target, body)` takes a request as it travels (the `X-Amz-Target` header,
`DynamoDB_20120810.GetItem`, `AmazonSQS.ReceiveMessage` or `secretsmanager.GetSecretValue`
(JSON 1.1), and the JSON body) and returns the HTTP status, headers and body AWS would: the
answer's JSON, or an error object botocore turns into the same ClientError (code, message,
modeled fields such as `CancellationReasons`; SQS's query-compatible code in
`x-amzn-query-error`). Local mode's boto3 clients reach it without a socket
(local/store_transport.py) and the operator CLI over loopback HTTP
(local/operator_endpoint.py). `TemplateTarget` is the /polling, /client and /jwks.json
integration's DynamoDB: the rendered request as API Gateway hands it over.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from beekeeper.store.client import Service
from beekeeper.store.errors import ServiceError

log = logging.getLogger("beekeeper.store")

DYNAMODB_TARGET_PREFIX = "DynamoDB_20120810."
SQS_TARGET_PREFIX = "AmazonSQS."
SECRETS_MANAGER_TARGET_PREFIX = "secretsmanager."
# CloudWatch's JSON protocol (botocore prefers it to CBOR and query where a model offers it).
CLOUDWATCH_TARGET_PREFIX = "GraniteServiceVersion20100801."
_ERROR_NAMESPACES = {
    DYNAMODB_TARGET_PREFIX: "com.amazonaws.dynamodb.v20120810#",
    SQS_TARGET_PREFIX: "com.amazonaws.sqs#",
    SECRETS_MANAGER_TARGET_PREFIX: "",  # Secrets Manager names its errors bare
    CLOUDWATCH_TARGET_PREFIX: "com.amazonaws.cloudwatch#",
}
_CONTENT_TYPES = {
    DYNAMODB_TARGET_PREFIX: "application/x-amz-json-1.0",
    SQS_TARGET_PREFIX: "application/x-amz-json-1.0",
    SECRETS_MANAGER_TARGET_PREFIX: "application/x-amz-json-1.1",
    CLOUDWATCH_TARGET_PREFIX: "application/x-amz-json-1.0",
}
# Services whose JSON errors also carry their query protocol's code (awsQueryCompatible).
_QUERY_COMPATIBLE = (SQS_TARGET_PREFIX, CLOUDWATCH_TARGET_PREFIX)

Answer = tuple[int, dict[str, str], bytes]


class JsonProtocol:
    def __init__(
        self,
        dynamodb: Service,
        sqs: Service,
        secretsmanager: Service | None = None,
        cloudwatch: Service | None = None,
    ) -> None:
        self._services = {DYNAMODB_TARGET_PREFIX: dynamodb, SQS_TARGET_PREFIX: sqs}
        if secretsmanager is not None:
            self._services[SECRETS_MANAGER_TARGET_PREFIX] = secretsmanager
        if cloudwatch is not None:
            self._services[CLOUDWATCH_TARGET_PREFIX] = cloudwatch

    def answer(self, target: str, body: bytes) -> Answer:
        prefix = next((p for p in self._services if target.startswith(p)), None)
        if prefix is None:
            return _error_answer(
                DYNAMODB_TARGET_PREFIX,
                ServiceError("UnknownOperationException", f"unknown target {target[:80]!r}"),
            )
        action = target[len(prefix) :]
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return _error_answer(
                prefix, ServiceError("SerializationException", "the body is not JSON")
            )
        try:
            result = self._services[prefix].handle(action, request)
        except ServiceError as error:
            return _error_answer(prefix, error)
        except NotImplementedError as error:
            # A request this store does not answer as AWS would: say so, never guess.
            log.error("the local store does not support %s: %s", action, error)
            return _error_answer(
                prefix,
                ServiceError(
                    "InternalServerError", f"not supported by the local store: {error}", status=500
                ),
            )
        raw = json.dumps(result).encode("utf-8")
        return 200, _headers(prefix, raw), raw


def _headers(prefix: str, raw: bytes) -> dict[str, str]:
    return {
        "Content-Type": _CONTENT_TYPES[prefix],
        "Content-Length": str(len(raw)),
        "x-amzn-RequestId": str(uuid.uuid4()),
    }


def _error_answer(prefix: str, error: ServiceError) -> Answer:
    document: dict[str, Any] = {
        "__type": _ERROR_NAMESPACES[prefix] + error.code,
        "message": error.message,
        **error.extra,
    }
    raw = json.dumps(document).encode("utf-8")
    headers = _headers(prefix, raw)
    if error.query_code and prefix in _QUERY_COMPATIBLE:
        fault = "Receiver" if error.status >= 500 else "Sender"
        headers["x-amzn-query-error"] = f"{error.query_code};{fault}"
    return error.status, headers, raw


class TemplateTarget:
    """The templates' DynamoDB: the rendered JSON in, DynamoDB's status and JSON out."""

    def __init__(self, dynamodb: Service) -> None:
        self._protocol = JsonProtocol(dynamodb, dynamodb)

    def __call__(self, action: str, body: str) -> tuple[int, str]:
        status, _headers, raw = self._protocol.answer(
            DYNAMODB_TARGET_PREFIX + action, body.encode("utf-8")
        )
        return status, raw.decode("utf-8")
