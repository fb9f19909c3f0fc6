"""In-memory DynamoDB: the room's table and the calls the room makes, answered as DynamoDB does.

Requests and answers are DynamoDB's JSON (the wire format, which is also boto3's low-level
client's arguments), so one `DynamoDb.handle(action, request)` serves the simulator's direct
calls, local mode's boto3 clients and the /polling and /client templates' rendered requests
alike. Refusals are `ServiceError`s with DynamoDB's error codes; tests/functional/store
compares every answer with moto's on the same requests.

Supported: GetItem, BatchGetItem, PutItem, UpdateItem, DeleteItem, BatchWriteItem and
TransactWriteItems (Put, Update, Delete, ConditionCheck) on tables with a partition key only;
condition and update expressions (store/expressions.py); ReturnValues and
ReturnValuesOnConditionCheckFailure. Not modelled: sort keys, indexes, queries and scans,
TTL expiry (DynamoDB's own is lazy too), capacity; a request outside this fails loudly.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from beekeeper.store.api import Action, Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.errors import ServiceError, validation
from beekeeper.store.expressions import (
    SET_TYPES,
    ConditionFailed,
    ExpressionInvalid,
    Item,
    apply_update,
    check_condition,
    normal_number,
    placeholders,
)
from beekeeper.store.timing import Timing

# (table name, partition key value, the item after the write or None when it was deleted,
# whether the item was written whole: a put, not an update)
WriteObserver = Callable[[str, str, Item | None, bool], None]
# Told when a request has applied all its writes: the writes told to the WriteObservers since
# the last call are one request's (a transaction, a batch), to be kept whole or not at all.
RequestObserver = Callable[[], None]

MAX_BATCH_GET_KEYS = 100
MAX_BATCH_WRITE_REQUESTS = 25
MAX_TRANSACT_ITEMS = 100
_CONDITION_FAILED = "The conditional request failed"
_RETURN_VALUES = {
    "PutItem": ("NONE", "ALL_OLD"),
    "DeleteItem": ("NONE", "ALL_OLD"),
    "UpdateItem": ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"),
}


@dataclass(frozen=True)
class Index:
    """A global secondary index: sparse (only items with its key attributes are in it),
    projecting the keys only (the only projection the room's indexes use)."""

    name: str
    hash_name: str
    range_name: str | None = None


@dataclass
class Table:
    name: str
    key_name: str = "pk"
    key_type: str = "S"
    items: dict[str, Item] = field(default_factory=dict)
    indexes: dict[str, Index] = field(default_factory=dict)


def copy_item(item: Item) -> Item:
    """A copy no caller can change the stored item through."""
    out: Item = {}
    for name, value in item.items():
        ((kind, content),) = value.items()
        out[name] = (
            {kind: json.loads(json.dumps(content))}
            if kind in ("L", "M")
            else ({kind: list(content)} if kind in SET_TYPES else dict(value))
        )
    return out


class DynamoDb(Api):
    def __init__(self, timing: Timing, disturbance: Disturbance = CALM) -> None:
        super().__init__(disturbance, "UnknownOperationException")
        self._guard = timing.guard()
        self.tables: dict[str, Table] = {}
        self.observers: list[WriteObserver] = []
        self.request_observers: list[RequestObserver] = []
        self._actions = {
            "GetItem": self._get_item,
            "BatchGetItem": self._batch_get_item,
            "PutItem": self._put_item,
            "UpdateItem": self._update_item,
            "DeleteItem": self._delete_item,
            "BatchWriteItem": self._batch_write_item,
            "TransactWriteItems": self._transact_write_items,
            "Scan": self._scan,
            "Query": self._query,
        }

    # -- tables (what the stack creates; not a call the room makes) --------------------------

    def create_table(
        self,
        name: str,
        key_name: str = "pk",
        key_type: str = "S",
        indexes: Iterable[Index] = (),
    ) -> Table:
        with self._guard:
            table = self.tables[name] = Table(
                name, key_name, key_type, indexes={index.name: index for index in indexes}
            )
            return table

    def create_table_as_defined(self, definition: dict[str, Any]) -> Table:
        """A table from CreateTable's parameters (core.datamodel.table_definition): its key and
        its global secondary indexes, which must project the keys only."""
        ((key_name, key_type),) = [
            (part["AttributeName"], _attribute_type(definition, part["AttributeName"]))
            for part in definition["KeySchema"]
        ]
        indexes = []
        for index in definition.get("GlobalSecondaryIndexes", []):
            if index.get("Projection", {}).get("ProjectionType") != "KEYS_ONLY":
                raise NotImplementedError("an index that projects more than the keys")
            roles = {part["KeyType"]: part["AttributeName"] for part in index["KeySchema"]}
            indexes.append(Index(index["IndexName"], roles["HASH"], roles.get("RANGE")))
        return self.create_table(definition["TableName"], key_name, key_type, indexes)

    def delete_table(self, name: str) -> None:
        with self._guard:
            self.tables.pop(name, None)

    def _run(self, answer: Action, request: dict[str, Any]) -> dict[str, Any]:
        with self._guard:  # one call at a time: a transaction spans items
            try:
                return answer(request)
            finally:
                for observer in self.request_observers:
                    observer()

    # -- reads ----------------------------------------------------------------------------

    def _get_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(
            request,
            {
                "TableName",
                "Key",
                "ConsistentRead",
                "ProjectionExpression",
                "ExpressionAttributeNames",
                "ReturnConsumedCapacity",
            },
        )
        table = self._table(request.get("TableName"))
        pk = self._key(table, request.get("Key"))
        projection = _projection(request)
        item = table.items.get(pk)
        return {"Item": _project(item, projection)} if item is not None else {}

    def _batch_get_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(request, {"RequestItems", "ReturnConsumedCapacity"})
        wanted = request.get("RequestItems")
        if not isinstance(wanted, dict) or not wanted:
            raise validation("The requestItems parameter is required for BatchGetItem")
        total = sum(len(r.get("Keys") or []) for r in wanted.values() if isinstance(r, dict))
        if total > MAX_BATCH_GET_KEYS:
            raise validation("Too many items requested for the BatchGetItem call")
        responses: dict[str, list[Item]] = {}
        for table_name, table_request in wanted.items():
            table = self._table(table_name)
            if not isinstance(table_request, dict):
                raise validation("The request of each table must be an object")
            _only(
                table_request,
                {"Keys", "ConsistentRead", "ProjectionExpression", "ExpressionAttributeNames"},
            )
            keys = table_request.get("Keys")
            if not isinstance(keys, list) or not keys:
                raise validation(
                    "1 validation error detected: Value at 'requestItems."
                    f"{table_name}.member.keys' failed to satisfy constraint: Member must have "
                    "length greater than or equal to 1"
                )
            pks = [self._key(table, key) for key in keys]
            if len(set(pks)) != len(pks):
                raise validation("Provided list of item keys contains duplicates")
            projection = _projection(table_request)
            responses[table_name] = [
                _project(table.items[pk], projection) for pk in pks if pk in table.items
            ]
        return {"Responses": responses, "UnprocessedKeys": {}}

    def _scan(self, request: dict[str, Any]) -> dict[str, Any]:
        """The whole table in key order, a page at a time, filtered after reading."""
        _only(
            request,
            {
                "TableName",
                "FilterExpression",
                "ProjectionExpression",
                "Limit",
                "ExclusiveStartKey",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "ConsistentRead",
                "Select",
                "ReturnConsumedCapacity",
            },
        )
        table = self._table(request.get("TableName"))
        _expression_placeholders(
            request, [request.get("FilterExpression"), request.get("ProjectionExpression")]
        )
        limit = request.get("Limit")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise validation("Limit must be a whole number of at least 1")
        start = request.get("ExclusiveStartKey")
        after = self._key(table, start) if start is not None else None
        names = request.get("ExpressionAttributeNames")
        values = _checked_values(request.get("ExpressionAttributeValues"))
        projection = _projection(request, standalone=False)
        keys = sorted(pk for pk in table.items if after is None or pk > after)
        page = keys[:limit] if limit is not None else keys
        found = []
        for pk in page:
            item = table.items[pk]
            condition = request.get("FilterExpression")
            try:
                if condition is not None:
                    check_condition(str(condition), item, names, values)
            except ConditionFailed:
                continue
            except ExpressionInvalid as error:
                raise validation(str(error)) from None
            found.append(_project(item, projection))
        answer: dict[str, Any] = {"Count": len(found), "ScannedCount": len(page)}
        if request.get("Select") != "COUNT":
            answer["Items"] = found
        if limit is not None and len(keys) > limit:
            answer["LastEvaluatedKey"] = {table.key_name: {table.key_type: page[-1]}}
        return answer

    def _query(self, request: dict[str, Any]) -> dict[str, Any]:
        """A global secondary index's items with one hash key value, in range key order.

        The room queries its sparse indexes only (core.datamodel.table_definition): an item is
        in an index when it has the index's key attributes; the answer holds the keys only.
        """
        _only(
            request,
            {
                "TableName",
                "IndexName",
                "KeyConditionExpression",
                "ExpressionAttributeNames",
                "ExpressionAttributeValues",
                "Limit",
                "ExclusiveStartKey",
                "ScanIndexForward",
                "Select",
                "ReturnConsumedCapacity",
            },
        )
        table = self._table(request.get("TableName"))
        index = table.indexes.get(str(request.get("IndexName")))
        if index is None:
            raise validation(
                "The table does not have the specified index: " + str(request.get("IndexName"))
            )
        condition = request.get("KeyConditionExpression")
        if not isinstance(condition, str):
            raise validation(
                "Either the KeyConditions or KeyConditionExpression parameter must be specified "
                "in the request."
            )
        _expression_placeholders(request, [condition])
        limit = request.get("Limit")
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise validation("Limit must be a whole number of at least 1")
        if request.get("ExclusiveStartKey") is not None:
            raise NotImplementedError("Query with ExclusiveStartKey")
        names = request.get("ExpressionAttributeNames")
        values = _checked_values(request.get("ExpressionAttributeValues"))
        keys = [table.key_name, index.hash_name, *([index.range_name] if index.range_name else [])]
        matching: list[Item] = []
        for item in table.items.values():
            if any(name not in item for name in keys):
                continue  # not in the sparse index
            try:
                check_condition(condition, item, names, values)
            except ConditionFailed:
                continue
            except ExpressionInvalid as error:
                raise validation(str(error)) from None
            matching.append(item)
        if index.range_name is not None:
            matching.sort(
                key=lambda item: _range_order(item[index.range_name]),  # type: ignore[index]
                reverse=request.get("ScanIndexForward") is False,
            )
        page = matching[:limit] if limit is not None else matching
        answer: dict[str, Any] = {"Count": len(page), "ScannedCount": len(page)}
        if request.get("Select") != "COUNT":
            answer["Items"] = [_project(item, keys) for item in page]
        if limit is not None and len(matching) > limit:
            answer["LastEvaluatedKey"] = _project(page[-1], keys)
        return answer

    # -- writes ---------------------------------------------------------------------------

    def _put_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(request, _WRITE_OPTIONS | {"Item"})
        returns = _return_values("PutItem", request)
        table = self._table(request.get("TableName"))
        item = _checked_item(request.get("Item"))
        pk = self._key(table, {table.key_name: item.get(table.key_name)}, what="Item")
        old = table.items.get(pk)
        _expression_placeholders(request, [request.get("ConditionExpression")])
        self._check(request, old)
        self._write(table, pk, item, whole=True)
        return {"Attributes": copy_item(old)} if returns == "ALL_OLD" and old else {}

    def _update_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(request, _WRITE_OPTIONS | {"Key", "UpdateExpression"})
        returns = _return_values("UpdateItem", request)
        table = self._table(request.get("TableName"))
        pk = self._key(table, request.get("Key"))
        old = table.items.get(pk)
        new, touched = self._updated(table, request, pk, old)
        self._write(table, pk, new)
        if returns == "ALL_NEW":
            return {"Attributes": copy_item(new)}
        if returns == "ALL_OLD":
            return {"Attributes": copy_item(old)} if old else {}
        source = new if returns == "UPDATED_NEW" else (old or {})
        chosen = {name: source[name] for name in touched if name in source}
        return {"Attributes": copy_item(chosen)} if returns != "NONE" and chosen else {}

    def _updated(
        self, table: Table, request: dict[str, Any], pk: str, old: Item | None
    ) -> tuple[Item, list[str]]:
        expression = request.get("UpdateExpression")
        if not isinstance(expression, str):
            raise NotImplementedError("UpdateItem without an UpdateExpression (AttributeUpdates)")
        _expression_placeholders(request, [expression, request.get("ConditionExpression")])
        values = _checked_values(request.get("ExpressionAttributeValues"))
        base = old or {table.key_name: {table.key_type: pk}}
        try:
            new, touched = apply_update(
                expression,
                base,
                request.get("ExpressionAttributeNames"),
                values,
                key_names=(table.key_name,),
            )
        except ExpressionInvalid as error:
            raise validation(str(error)) from None
        self._check(request, old)
        return new, touched

    def _delete_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(request, _WRITE_OPTIONS | {"Key"})
        returns = _return_values("DeleteItem", request)
        table = self._table(request.get("TableName"))
        pk = self._key(table, request.get("Key"))
        old = table.items.get(pk)
        _expression_placeholders(request, [request.get("ConditionExpression")])
        self._check(request, old)
        if old is not None:
            self._write(table, pk, None)
        return {"Attributes": copy_item(old)} if returns == "ALL_OLD" and old else {}

    def _batch_write_item(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(request, {"RequestItems", "ReturnConsumedCapacity", "ReturnItemCollectionMetrics"})
        wanted = request.get("RequestItems")
        if not isinstance(wanted, dict) or not wanted:
            raise validation("The requestItems parameter is required for BatchWriteItem")
        planned: list[tuple[Table, str, dict[str, Any], Item | None]] = []
        for table_name, requests in wanted.items():
            table = self._table(table_name)
            if not isinstance(requests, list) or not requests:
                raise validation(
                    "1 validation error detected: Value at 'requestItems' failed to satisfy "
                    "constraint: Map value must satisfy constraint: [Member must have length "
                    "greater than or equal to 1]"
                )
            seen: set[str] = set()
            for write in requests:
                pk, item = self._batch_write_request(table, write)
                if pk in seen:
                    raise validation("Provided list of item keys contains duplicates")
                seen.add(pk)
                planned.append((table, pk, write, item))
        if len(planned) > MAX_BATCH_WRITE_REQUESTS:
            raise validation("Too many items requested for the BatchWriteItem call")
        left = self._disturbance.unprocessed([write for _, _, write, _ in planned])
        unprocessed: dict[str, list[dict[str, Any]]] = {}
        for (table, pk, write, item), stays in zip(planned, left, strict=True):
            if stays:
                unprocessed.setdefault(table.name, []).append(write)
            elif item is not None or pk in table.items:
                self._write(table, pk, item, whole=item is not None)
        return {"UnprocessedItems": unprocessed}

    def _batch_write_request(self, table: Table, write: object) -> tuple[str, Item | None]:
        if not isinstance(write, dict) or len(write) != 1:
            raise validation("Each write request must be exactly one PutRequest or DeleteRequest")
        ((kind, body),) = write.items()
        if kind == "PutRequest" and isinstance(body, dict) and set(body) == {"Item"}:
            item = _checked_item(body["Item"])
            return self._key(table, {table.key_name: item.get(table.key_name)}, "Item"), item
        if kind == "DeleteRequest" and isinstance(body, dict) and set(body) == {"Key"}:
            return self._key(table, body["Key"]), None
        raise validation("Each write request must be exactly one PutRequest or DeleteRequest")

    def _transact_write_items(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(
            request,
            {
                "TransactItems",
                "ClientRequestToken",
                "ReturnConsumedCapacity",
                "ReturnItemCollectionMetrics",
            },
        )
        operations = request.get("TransactItems")
        if not isinstance(operations, list) or not operations:
            raise validation(
                "1 validation error detected at 'transactItems' failed to satisfy constraint: "
                "Member must have length greater than or equal to 1"
            )
        if len(operations) > MAX_TRANSACT_ITEMS:
            raise validation(
                "1 validation error detected at 'transactItems' failed to satisfy constraint: "
                f"Member must have length less than or equal to {MAX_TRANSACT_ITEMS}"
            )
        # new item, whether it writes, whether it is written whole (a put)
        plans: list[tuple[Table, str, Item | None, bool, bool]] = []
        reasons: list[dict[str, Any]] = []
        seen: set[tuple[str, str]] = set()
        for operation in operations:
            table, pk, new, writes, reason = self._transact_plan(operation)
            if (table.name, pk) in seen:
                raise validation(
                    "Transaction request cannot include multiple operations on one item"
                )
            seen.add((table.name, pk))
            plans.append((table, pk, new, writes, "Put" in operation))
            reasons.append(reason)
        if any(reason["Code"] != "None" for reason in reasons):
            codes = ", ".join(reason["Code"] for reason in reasons)
            raise ServiceError(
                "TransactionCanceledException",
                "Transaction cancelled, please refer cancellation reasons for specific "
                f"reasons [{codes}]",
                extra={"CancellationReasons": reasons},
            )
        if self._disturbance.transaction_throttled(operations):
            raise ServiceError(
                "TransactionCanceledException",
                "Transaction cancelled, please refer cancellation reasons for specific "
                "reasons [" + ", ".join("ThrottlingError" for _ in operations) + "]",
                extra={"CancellationReasons": [{"Code": "ThrottlingError"} for _ in operations]},
            )
        for table, pk, new, writes, whole in plans:
            if writes and (new is not None or pk in table.items):
                self._write(table, pk, new, whole=whole)
        return {}

    def _transact_plan(
        self, operation: object
    ) -> tuple[Table, str, Item | None, bool, dict[str, Any]]:
        if not isinstance(operation, dict) or len(operation) != 1:
            raise validation("TransactItems can only contain one of Check, Put, Update or Delete")
        ((kind, body),) = operation.items()
        if kind not in ("Put", "Update", "Delete", "ConditionCheck") or not isinstance(body, dict):
            raise validation("TransactItems can only contain one of Check, Put, Update or Delete")
        table = self._table(body.get("TableName"))
        expressions = [body.get("ConditionExpression")]
        if kind == "Put":
            new = _checked_item(body.get("Item"))
            pk = self._key(table, {table.key_name: new.get(table.key_name)}, what="Item")
        else:
            pk = self._key(table, body.get("Key"))
            new = None
        old = table.items.get(pk)
        if kind == "ConditionCheck" and not isinstance(body.get("ConditionExpression"), str):
            raise validation("The ConditionExpression of a ConditionCheck is required")
        if kind == "Update":
            expressions.append(body.get("UpdateExpression"))
        _expression_placeholders(body, expressions)
        reason: dict[str, Any] = {"Code": "None"}
        try:
            if kind == "Update":
                new = self._updated(table, body, pk, old)[0]
            else:
                self._check(body, old)
        except ServiceError as error:
            if error.code != "ConditionalCheckFailedException":
                raise
            reason = {"Code": "ConditionalCheckFailed", "Message": _CONDITION_FAILED}
            if "Item" in error.extra:
                reason["Item"] = error.extra["Item"]
        return table, pk, new, kind != "ConditionCheck", reason

    # -- shared steps ---------------------------------------------------------------------

    def _table(self, name: object) -> Table:
        if not isinstance(name, str) or not name:
            raise validation("The parameter 'TableName' is required but was not present")
        table = self.tables.get(name)
        if table is None:
            raise ServiceError("ResourceNotFoundException", "Requested resource not found")
        return table

    def _key(self, table: Table, key: object, what: str = "Key") -> str:
        if not isinstance(key, dict):
            raise validation("The provided key element does not match the schema")
        value = key.get(table.key_name)
        if what == "Item" and value is None:
            raise validation(
                "One or more parameter values were invalid: Missing the key "
                f"{table.key_name} in the item"
            )
        if (
            set(key) != {table.key_name}
            or not isinstance(value, dict)
            or set(value) != {table.key_type}
        ):
            if what == "Item":
                raise validation(
                    "One or more parameter values were invalid: Type mismatch for key "
                    f"{table.key_name} expected: {table.key_type} actual: "
                    f"{next(iter(value), '?') if isinstance(value, dict) else '?'}"
                )
            raise validation("The provided key element does not match the schema")
        text = value[table.key_type]
        if not isinstance(text, str):
            raise validation("The provided key element does not match the schema")
        if text == "":
            raise validation(
                "One or more parameter values are not valid. The AttributeValue for a key "
                f"attribute cannot contain an empty string value. Key: {table.key_name}"
            )
        return text if table.key_type != "N" else normal_number(text)

    def _check(self, request: dict[str, Any], old: Item | None) -> None:
        condition = request.get("ConditionExpression")
        if condition is None:
            return
        if not isinstance(condition, str):
            raise validation("ConditionExpression must be a string")
        try:
            check_condition(
                condition,
                old,
                request.get("ExpressionAttributeNames"),
                _checked_values(request.get("ExpressionAttributeValues")),
            )
        except ExpressionInvalid as error:
            raise validation(str(error)) from None
        except ConditionFailed:
            extra: dict[str, Any] = {}
            wants_old = request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD"
            if wants_old and old is not None:
                extra["Item"] = copy_item(old)
            raise ServiceError(
                "ConditionalCheckFailedException", _CONDITION_FAILED, extra=extra
            ) from None

    def _write(self, table: Table, pk: str, item: Item | None, *, whole: bool = False) -> None:
        if item is None:
            table.items.pop(pk, None)
        else:
            table.items[pk] = item
        for observer in self.observers:
            observer(table.name, pk, item, whole)

    def snapshot(self) -> dict[str, dict[str, Item]]:
        """Every table's items (copies), for saving the store."""
        with self._guard:
            return {
                name: {pk: copy_item(i) for pk, i in t.items.items()}
                for name, t in self.tables.items()
            }

    def load(self, table_name: str, items: Iterable[tuple[str, Item | None]]) -> None:
        """Replay saved writes into a table (no observers: they are already saved)."""
        with self._guard:
            table = self.tables[table_name]
            for pk, item in items:
                if item is None:
                    table.items.pop(pk, None)
                else:
                    table.items[pk] = item


# -- request checks ---------------------------------------------------------------------------


_WRITE_OPTIONS = frozenset(
    {
        "TableName",
        "ConditionExpression",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
        "ReturnValues",
        "ReturnConsumedCapacity",
        "ReturnItemCollectionMetrics",
        "ReturnValuesOnConditionCheckFailure",
    }
)


def _only(request: dict[str, Any], allowed: set[str] | frozenset[str]) -> None:
    unknown = sorted(set(request) - allowed)
    if unknown:
        # botocore refuses unknown parameters before sending; a raw request (a template's)
        # gets DynamoDB's answer to a field it does not know.
        raise ServiceError(
            "SerializationException", f"Unexpected field {unknown[0]!r} in the request"
        )


def _return_values(action: str, request: dict[str, Any]) -> str:
    returns = request.get("ReturnValues", "NONE")
    if returns not in _RETURN_VALUES[action]:
        raise validation(f"Return values set to invalid value: {returns}")
    failure = request.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if failure not in ("NONE", "ALL_OLD"):
        raise validation(f"ReturnValuesOnConditionCheckFailure set to invalid value: {failure}")
    return str(returns)


def _expression_placeholders(request: dict[str, Any], expressions: list[object]) -> None:
    used: set[str] = set()
    written = [e for e in expressions if e is not None]
    for expression in written:
        if not isinstance(expression, str):
            raise validation("An expression must be a string")
        used |= placeholders(expression)
    names = request.get("ExpressionAttributeNames")
    values = request.get("ExpressionAttributeValues")
    if not written and (names is not None or values is not None):
        which = "ExpressionAttributeNames" if names is not None else "ExpressionAttributeValues"
        raise validation(f"{which} can only be specified when using expressions")
    for given, marker, what in (
        (names, "#", "ExpressionAttributeNames"),
        (values, ":", "ExpressionAttributeValues"),
    ):
        if given is None:
            continue
        if not isinstance(given, dict) or not given:
            raise validation(f"{what} must not be empty")
        unused = sorted(k for k in given if k not in used)
        if unused:
            raise validation(
                f"Value provided in {what} unused in expressions: keys: "
                "{" + ", ".join(unused) + "}"
            )
        del marker


def _checked_values(values: object) -> dict[str, Any] | None:
    if values is None:
        return None
    if not isinstance(values, dict):
        raise validation("ExpressionAttributeValues must be a map")
    return {name: _checked_value(value, name) for name, value in values.items()}


def _checked_item(item: object) -> Item:
    if not isinstance(item, dict):
        raise validation("One or more parameter values were invalid: the item must be a map")
    return {str(name): _checked_value(value, str(name)) for name, value in item.items()}


def _checked_value(value: object, name: str) -> dict[str, Any]:
    """An attribute value as DynamoDB keeps it (numbers normalised), or ValidationException."""
    if not isinstance(value, dict) or len(value) != 1:
        raise validation(
            "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
        )
    ((kind, content),) = value.items()
    try:
        if kind == "S" and isinstance(content, str):
            return {"S": content}
        if kind == "N":
            return {"N": normal_number(content)}
        if kind == "B" and isinstance(content, str):
            base64.b64decode(content, validate=True)
            return {"B": content}
        if kind == "BOOL" and isinstance(content, bool):
            return {"BOOL": content}
        if kind == "NULL" and content is True:
            return {"NULL": True}
        if kind == "L" and isinstance(content, list):
            return {"L": [_checked_value(v, name) for v in content]}
        if kind == "M" and isinstance(content, dict):
            return {"M": {str(k): _checked_value(v, name) for k, v in content.items()}}
        if kind in SET_TYPES and isinstance(content, list):
            return _checked_set(kind, content)
    except (ExpressionInvalid, binascii.Error) as error:
        raise validation(f"One or more parameter values were invalid: {error}") from None
    raise validation(
        f"Supplied AttributeValue has a value that does not match its type: {kind} for {name}"
    )


def _checked_set(kind: str, members: list[Any]) -> dict[str, Any]:
    if not members:
        raise validation(
            "One or more parameter values were invalid: An "
            f"{'string' if kind == 'SS' else 'number' if kind == 'NS' else 'binary'} set  may "
            "not be empty"
        )
    if not all(isinstance(m, str) for m in members):
        raise validation(
            f"Supplied AttributeValue has a value that does not match its type: {kind}"
        )
    normal = [normal_number(m) for m in members] if kind == "NS" else list(members)
    if len(set(normal)) != len(normal):
        raise validation("Input collection contains duplicates")
    return {kind: normal}


def _projection(request: dict[str, Any], *, standalone: bool = True) -> list[str] | None:
    """The projected attribute names; `standalone`: the projection is the request's only
    expression, so its placeholders are checked here."""
    projection = request.get("ProjectionExpression")
    if projection is None:
        if standalone and request.get("ExpressionAttributeNames") is not None:
            raise validation(
                "ExpressionAttributeNames can only be specified when using expressions"
            )
        return None
    names = request.get("ExpressionAttributeNames") or {}
    out = []
    for part in str(projection).split(","):
        token = part.strip()
        if token.startswith("#"):
            if token not in names:
                raise validation(
                    "An expression attribute name used in the document path is not defined; "
                    f"attribute name: {token}"
                )
            token = names[token]
        elif "." in token or "[" in token:
            raise NotImplementedError(f"projection of a document path {token!r}")
        out.append(token)
    unused = sorted(set(names) - placeholders(str(projection)))
    if standalone and unused:
        raise validation(
            "Value provided in ExpressionAttributeNames unused in expressions: keys: "
            "{" + ", ".join(unused) + "}"
        )
    return out


def _attribute_type(definition: dict[str, Any], name: str) -> str:
    types = {d["AttributeName"]: d["AttributeType"] for d in definition["AttributeDefinitions"]}
    return str(types[name])


def _range_order(value: dict[str, Any]) -> tuple[Any, ...]:
    """How DynamoDB orders a range key: numbers by value, strings and binaries by bytes."""
    ((kind, content),) = value.items()
    if kind == "N":
        return (Decimal(content),)
    return (str(content).encode("utf-8") if kind == "S" else base64.b64decode(content),)


def _project(item: Item, projection: list[str] | None) -> Item:
    if projection is None:
        return copy_item(item)
    return copy_item({name: item[name] for name in projection if name in item})
