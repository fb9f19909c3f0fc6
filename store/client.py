"""The store as a boto3 low-level client: `client.update_item(**kwargs)`, ClientError refusals.

What the simulator hands the room's code: the same method names and arguments as boto3's
client (DynamoDB's and SQS's JSON protocols are those arguments), answers as boto3 parses them
and refusals as the `botocore.exceptions.ClientError` boto3 raises, with the code, message,
HTTP status and any extra fields (a cancelled transaction's `CancellationReasons`, a failed
condition's `Item`) where boto3 puts them. Local mode goes through real boto3 clients instead
(store/wire.py), so botocore's own validation runs there too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from botocore.exceptions import ClientError

from beekeeper.store.errors import ServiceError


class Service(Protocol):
    @property
    def actions(self) -> frozenset[str]: ...

    def handle(self, action: str, request: dict[str, Any]) -> dict[str, Any]: ...


def method_name(action: str) -> str:
    """ "BatchGetItem" -> "batch_get_item", as boto3 names a client's methods."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", action).lower()


def client_error(error: ServiceError, action: str) -> ClientError:
    response: dict[str, Any] = {
        "Error": {"Code": error.query_code or error.code, "Message": error.message},
        "ResponseMetadata": {"HTTPStatusCode": error.status},
        **error.extra,
    }
    return ClientError(response, action)


class StoreClient:
    """One service of the store, called as a boto3 client is."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._methods: dict[str, Callable[..., dict[str, Any]]] = {
            method_name(action): self._method(action) for action in service.actions
        }

    def _method(self, action: str) -> Callable[..., dict[str, Any]]:
        handle = self.service.handle

        def call(**request: Any) -> dict[str, Any]:
            try:
                return handle(action, request)
            except ServiceError as error:
                raise client_error(error, action) from None

        call.__name__ = method_name(action)
        return call

    def __getattr__(self, name: str) -> Callable[..., dict[str, Any]]:
        try:
            return self._methods[name]
        except KeyError:
            raise AttributeError(f"the store's client has no method {name!r}") from None
