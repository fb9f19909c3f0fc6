"""In-memory DynamoDB: the room's table and the calls the room makes, answered as DynamoDB does.

Requests and answers are DynamoDB's JSON (the wire format, which is also boto3's low-level
client's arguments), so one `DynamoDb.handle(action, request)` serves the simulator's direct
calls, local mode's boto3 clients and the /polling and /client templates' rendered requests
alike. Refusals are `ServiceError`s with DynamoDB's error codes; tests/functional/store
compares every answer with moto's and with DynamoDB Local's on the same requests.

Supported: GetItem, BatchGetItem, PutItem, UpdateItem, DeleteItem, BatchWriteItem,
TransactWriteItems (Put, Update, Delete, ConditionCheck), Scan, and Query of a global
secondary index that projects the keys, on tables with a partition key only; condition,
update, filter, key condition and projection expressions (store/expressions.py);
ReturnValues and ReturnValuesOnConditionCheckFailure.

A write is checked as DynamoDB checks it, in DynamoDB's order: the request and its
expressions first (store/dynamodb_validation.py), then the condition on the stored item,
then the update, then the new item (400 KB, the indexes' key types). Scan and Query answer a
page of at most 1 MB of data read (store/sizes.py), with the LastEvaluatedKey to go on from,
as DynamoDB pages them, so a caller's paging runs here as it does on AWS. Scan reads in key
order (DynamoDB promises no order). Not modelled: sort keys of the table itself, indexes
that project more than the keys, TTL expiry (DynamoDB's own is lazy too), capacity; a
request outside this fails loudly.

A table's items are held compactly (store/stored_items.py): an item read from `Table.items`
is decoded afresh, so it is already a copy no caller can change the stored item through.
"""

from __future__ import annotations

import base64
import bisect
import json
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

from beekeeper.store.api import Action, Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.dynamodb_validation import (
    WRITE_OPTIONS,
    Expressions,
    Index,
    Table,
    checked_item,
    expressions,
    item_refusal,
    key_attribute,
    key_value,
    only,
    return_values,
)
from beekeeper.store.errors import ServiceError, validation
from beekeeper.store.expression_syntax import Between, Call, Comparison, Group, Logical, Node
from beekeeper.store.expression_syntax import Not as NotNode
from beekeeper.store.expression_syntax import Path as PathNode
from beekeeper.store.expression_syntax import Value as ValueNode
from beekeeper.store.expressions import (
    SET_TYPES,
    ExpressionInvalid,
    Item,
    apply_update,
    holds,
)
from beekeeper.store.sizes import MAX_ITEM_BYTES, PAGE_BYTES, item_size
from beekeeper.store.stored_items import has_names
from beekeeper.store.timing import Timing

__all__ = ["DynamoDb", "Index", "Table", "copy_item"]

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
_PUT_FIELDS = WRITE_OPTIONS | {"Item"}
_UPDATE_FIELDS = WRITE_OPTIONS | {"Key", "UpdateExpression"}
_DELETE_FIELDS = WRITE_OPTIONS | {"Key"}


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
        types = {d["AttributeName"]: d["AttributeType"] for d in definition["AttributeDefinitions"]}
        ((key_name, key_type),) = [
            (part["AttributeName"], types[part["AttributeName"]])
            for part in definition["KeySchema"]
        ]
        indexes = []
        for index in definition.get("GlobalSecondaryIndexes", []):
            if index.get("Projection", {}).get("ProjectionType") != "KEYS_ONLY":
                raise NotImplementedError("an index that projects more than the keys")
            keys = {
                part["KeyType"]: key_attribute(
                    part["KeyType"], part["AttributeName"], types[part["AttributeName"]]
                )
                for part in index["KeySchema"]
            }
            indexes.append(Index(index["IndexName"], keys["HASH"], keys.get("RANGE")))
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
        only(
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
        pk = key_value(table, request.get("Key"))
        projection = expressions(request, ("ProjectionExpression",)).projection
        item = table.items.get(pk)  # a copy: decoded from the stored form
        return {"Item": _projected(item, projection)} if item is not None else {}

    def _batch_get_item(self, request: dict[str, Any]) -> dict[str, Any]:
        only(request, {"RequestItems", "ReturnConsumedCapacity"})
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
            only(
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
            pks = [key_value(table, key) for key in keys]
            if len(set(pks)) != len(pks):
                raise validation("Provided list of item keys contains duplicates")
            projection = expressions(table_request, ("ProjectionExpression",)).projection
            responses[table_name] = [
                _projected(table.items[pk], projection) for pk in pks if pk in table.items
            ]
        return {"Responses": responses, "UnprocessedKeys": {}}

    def _scan(self, request: dict[str, Any]) -> dict[str, Any]:
        """A page of the table in key order: items read until 1 MB or `Limit`, then filtered."""
        only(
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
        bound = expressions(request, ("FilterExpression", "ProjectionExpression"))
        limit = _limit(request)
        start = request.get("ExclusiveStartKey")
        if start is not None and (not isinstance(start, dict) or set(start) != {table.key_name}):
            raise validation("Exclusive Start Key must have same size as table's key schema")
        keys = table.items.sorted_keys()
        first = bisect.bisect_right(keys, key_value(table, start)) if start is not None else 0
        page, more = _page(
            (table.items[pk] for pk in keys[first:]), len(keys) - first, limit, item_size
        )
        found = [
            _projected(item, bound.projection)
            for item in page
            if bound.condition is None or self._holds(bound, item)
        ]
        answer: dict[str, Any] = {"Count": len(found), "ScannedCount": len(page)}
        if request.get("Select") != "COUNT":
            answer["Items"] = found
        if more:
            answer["LastEvaluatedKey"] = _projected(page[-1], [table.key_name])
        return answer

    def _query(self, request: dict[str, Any]) -> dict[str, Any]:
        """A page of a global secondary index's items with one hash key value, in range key
        order: index entries (the keys: the index projects nothing else) read until 1 MB or
        `Limit`. A query of an index is measured by its index entries, not by the table's
        items (the Developer Guide's "Using Global Secondary Indexes in DynamoDB", GSI.html,
        on read capacity and the 1 MB result); DynamoDB Local measures the table's items.

        The room queries its sparse indexes only (core.datamodel.table_definition): an item is
        in an index when it has the index's key attributes.
        """
        only(
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
                "ConsistentRead",
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
        if request.get("ConsistentRead") is True:
            raise validation("Consistent reads are not supported on global secondary indexes")
        if not isinstance(request.get("KeyConditionExpression"), str):
            raise validation(
                "Either the KeyConditions or KeyConditionExpression parameter must be specified "
                "in the request."
            )
        bound = expressions(request, ("KeyConditionExpression",))
        assert bound.condition is not None
        _check_key_condition(bound, index)
        limit = _limit(request)
        keys = [table.key_name, *(key.name for key in index.keys)]
        forward = request.get("ScanIndexForward") is not False
        entries = sorted(
            self._index_entries(table, keys, bound),
            key=lambda entry: _index_order(entry, index, table.key_name),
            reverse=not forward,
        )
        start = request.get("ExclusiveStartKey")
        if start is not None:
            if not isinstance(start, dict) or set(start) != set(keys):
                raise validation("The provided starting key is invalid")
            after = _index_order(start, index, table.key_name)
            entries = [
                entry
                for entry in entries
                if (order := _index_order(entry, index, table.key_name)) != after
                and (order > after) == forward
            ]
        page, more = _page(iter(entries), len(entries), limit, item_size)
        answer: dict[str, Any] = {"Count": len(page), "ScannedCount": len(page)}
        if request.get("Select") != "COUNT":
            answer["Items"] = page
        if more:
            answer["LastEvaluatedKey"] = copy_item(page[-1])
        return answer

    def _index_entries(self, table: Table, keys: list[str], bound: Expressions) -> Iterator[Item]:
        """The index entries (the keys) of the items in a sparse index that the key condition
        holds for; only the items with the index's keys are decoded. A table's items come in
        a handful of shapes (stored_items.py): each shape is looked at once per query."""
        indexed: dict[tuple[str, ...], bool] = {}
        for pk, record in table.items.records():
            shape = record[0]
            has_keys = indexed.get(shape)
            if has_keys is None:
                has_keys = indexed[shape] = has_names(record, keys)
            if has_keys:
                item = table.items[pk]
                if self._holds(bound, item):
                    yield _projected(item, keys)

    # -- writes ---------------------------------------------------------------------------

    def _put_item(self, request: dict[str, Any]) -> dict[str, Any]:
        only(request, _PUT_FIELDS)
        returns = return_values("PutItem", request)
        table = self._table(request.get("TableName"))
        item, pk = self._put_request(table, request.get("Item"))
        bound = expressions(request, ("ConditionExpression",))
        refusal = item_refusal(table, item, update=False)
        if refusal is not None:
            raise validation(refusal)
        old = table.items.get(pk)
        self._check(request, bound, old)
        self._write(table, pk, item, whole=True)
        return {"Attributes": old} if returns == "ALL_OLD" and old else {}

    def _update_item(self, request: dict[str, Any]) -> dict[str, Any]:
        only(request, _UPDATE_FIELDS)
        returns = return_values("UpdateItem", request)
        table = self._table(request.get("TableName"))
        pk = key_value(table, request.get("Key"))
        bound = self._update_expressions(table, request)
        old = table.items.get(pk)
        self._check(request, bound, old)
        new, touched = self._updated(table, bound, pk, old)
        refusal = item_refusal(table, new, update=True)
        if refusal is not None:
            raise validation(refusal)
        self._write(table, pk, new)
        if returns == "ALL_NEW":
            return {"Attributes": copy_item(new)}
        if returns == "ALL_OLD":
            return {"Attributes": old} if old else {}  # a copy: decoded from the stored form
        source = new if returns == "UPDATED_NEW" else (old or {})
        chosen = {name: source[name] for name in touched if name in source}
        return {"Attributes": copy_item(chosen)} if returns != "NONE" and chosen else {}

    def _update_expressions(self, table: Table, request: dict[str, Any]) -> Expressions:
        if not isinstance(request.get("UpdateExpression"), str):
            raise NotImplementedError("UpdateItem without an UpdateExpression (AttributeUpdates)")
        return expressions(
            request, ("UpdateExpression", "ConditionExpression"), key_names=(table.key_name,)
        )

    def _updated(
        self, table: Table, bound: Expressions, pk: str, old: Item | None
    ) -> tuple[Item, list[str]]:
        base = old or {table.key_name: {table.key_type: pk}}
        try:
            return apply_update(bound.update, base, bound.names, bound.values)
        except ExpressionInvalid as error:
            raise validation(str(error)) from None

    def _delete_item(self, request: dict[str, Any]) -> dict[str, Any]:
        only(request, _DELETE_FIELDS)
        returns = return_values("DeleteItem", request)
        table = self._table(request.get("TableName"))
        pk = key_value(table, request.get("Key"))
        bound = expressions(request, ("ConditionExpression",))
        old = table.items.get(pk)
        self._check(request, bound, old)
        if old is not None:
            self._write(table, pk, None)
        return {"Attributes": old} if returns == "ALL_OLD" and old else {}

    def _batch_write_item(self, request: dict[str, Any]) -> dict[str, Any]:
        only(request, {"RequestItems", "ReturnConsumedCapacity", "ReturnItemCollectionMetrics"})
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
            item, pk = self._put_request(table, body["Item"])
            refusal = item_refusal(table, item, update=False)
            if refusal is not None:
                raise validation(refusal)
            return pk, item
        if kind == "DeleteRequest" and isinstance(body, dict) and set(body) == {"Key"}:
            return key_value(table, body["Key"]), None
        raise validation("Each write request must be exactly one PutRequest or DeleteRequest")

    def _transact_write_items(self, request: dict[str, Any]) -> dict[str, Any]:
        only(
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
        # First what DynamoDB refuses of the request as a whole, then each item's outcome.
        checked = [self._transact_request(operation) for operation in operations]
        seen: set[tuple[str, str]] = set()
        for _kind, table, pk, _body, _bound, _item in checked:
            if (table.name, pk) in seen:
                raise validation(
                    "Transaction request cannot include multiple operations on one item"
                )
            seen.add((table.name, pk))
        plans: list[tuple[Table, str, Item | None, bool, bool]] = []
        reasons: list[dict[str, Any]] = []
        for kind, table, pk, body, bound, item in checked:
            new, reason = self._transact_outcome(kind, table, pk, body, bound, item)
            plans.append((table, pk, new, kind != "ConditionCheck", kind == "Put"))
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

    def _transact_request(
        self, operation: object
    ) -> tuple[str, Table, str, dict[str, Any], Expressions, Item | None]:
        """One operation as DynamoDB checks it before reading: (kind, table, key, body,
        expressions, the item a Put writes)."""
        if not isinstance(operation, dict) or len(operation) != 1:
            raise validation("TransactItems can only contain one of Check, Put, Update or Delete")
        ((kind, body),) = operation.items()
        if kind not in ("Put", "Update", "Delete", "ConditionCheck") or not isinstance(body, dict):
            raise validation("TransactItems can only contain one of Check, Put, Update or Delete")
        table = self._table(body.get("TableName"))
        item: Item | None = None
        if kind == "Put":
            item, pk = self._put_request(table, body.get("Item"))
            if item_size(item) > MAX_ITEM_BYTES:  # the request's own item: refused whole
                raise validation("Item size has exceeded the maximum allowed size")
        else:
            pk = key_value(table, body.get("Key"))
        if kind == "ConditionCheck" and not isinstance(body.get("ConditionExpression"), str):
            raise validation("The ConditionExpression of a ConditionCheck is required")
        if kind == "Update":
            bound = self._update_expressions(table, body)
        else:
            bound = expressions(body, ("ConditionExpression",))
        return kind, table, pk, body, bound, item

    def _transact_outcome(
        self,
        kind: str,
        table: Table,
        pk: str,
        body: dict[str, Any],
        bound: Expressions,
        item: Item | None,
    ) -> tuple[Item | None, dict[str, Any]]:
        """The operation's new item (None: deleted or unchanged) and its cancellation reason:
        "None", ConditionalCheckFailed (with the item when asked), or ValidationError when the
        item it would write is one DynamoDB does not store."""
        old = table.items.get(pk)
        try:
            self._check(body, bound, old)
        except ServiceError as error:
            reason: dict[str, Any] = {"Code": "ConditionalCheckFailed", "Message": error.message}
            if "Item" in error.extra:
                reason["Item"] = error.extra["Item"]
            return None, reason
        new = item
        if kind == "Update":
            new = self._updated(table, bound, pk, old)[0]
        if new is not None:
            refusal = item_refusal(table, new, update=kind == "Update", measured=kind == "Put")
            if refusal is not None:
                return None, {"Code": "ValidationError", "Message": refusal}
        return new, {"Code": "None"}

    # -- shared steps ---------------------------------------------------------------------

    def _table(self, name: object) -> Table:
        if not isinstance(name, str) or not name:
            raise validation("The parameter 'TableName' is required but was not present")
        table = self.tables.get(name)
        if table is None:
            raise ServiceError("ResourceNotFoundException", "Requested resource not found")
        return table

    def _put_request(self, table: Table, item: object) -> tuple[Item, str]:
        """A Put's item, checked, and its partition key value."""
        checked = checked_item(item)
        return checked, key_value(table, {table.key_name: checked.get(table.key_name)}, "Item")

    def _holds(self, bound: Expressions, item: Item | None) -> bool:
        assert bound.condition is not None
        try:
            return holds(bound.condition, item, bound.names, bound.values)
        except ExpressionInvalid as error:
            raise validation(str(error)) from None

    def _check(self, request: dict[str, Any], bound: Expressions, old: Item | None) -> None:
        """ConditionalCheckFailedException (with the item, when asked) unless the request's
        condition holds for the stored item."""
        if bound.condition is None or self._holds(bound, old):
            return
        extra: dict[str, Any] = {}
        if request.get("ReturnValuesOnConditionCheckFailure") == "ALL_OLD" and old is not None:
            extra["Item"] = copy_item(old)
        raise ServiceError("ConditionalCheckFailedException", _CONDITION_FAILED, extra=extra)

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
            return {name: dict(t.items.items()) for name, t in self.tables.items()}

    def load(self, table_name: str, items: Iterable[tuple[str, Item | None]]) -> None:
        """Replay saved writes into a table (no observers: they are already saved)."""
        with self._guard:
            table = self.tables[table_name]
            for pk, item in items:
                if item is None:
                    table.items.pop(pk, None)
                else:
                    table.items[pk] = item


def _limit(request: dict[str, Any]) -> int | None:
    limit = request.get("Limit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 1):
        raise validation("Limit must be a whole number of at least 1")
    return limit


def _page(
    items: Iterator[Item], count: int, limit: int | None, size: Callable[[Item], int]
) -> tuple[list[Item], bool]:
    """The items one Query or Scan page reads of the `count` items left, and whether it
    ends with a LastEvaluatedKey (the items are taken one by one: a page of a large table
    decodes only its own).

    A page ends after `limit` items (with a LastEvaluatedKey even when none is left), or with
    the item that brings the data read to 1 MB (with one only when more items are left), as
    DynamoDB Local pages (tests/functional/store)."""
    page: list[Item] = []
    read = 0
    for item in items:
        page.append(item)
        read += size(item)
        if limit is not None and len(page) == limit:
            return page, True
        if read >= PAGE_BYTES:
            return page, len(page) < count
    return page, False


def _check_key_condition(bound: Expressions, index: Index) -> None:
    """A key condition DynamoDB takes for the index: `hash = :v`, and at most one condition
    on its range key, joined by AND."""
    conditions = _conjuncts(bound.condition)
    on: dict[str, Node] = {}
    for condition in conditions:
        subject = _key_condition_subject(condition)
        name = bound.names.get(subject, subject) if subject is not None else None
        if name is None or name not in {key.name for key in index.keys}:
            raise validation("Query key condition not supported")
        if name in on:
            raise validation("KeyConditionExpressions must only contain one condition per key")
        on[name] = condition
    hash_condition = on.get(index.hash_key.name)
    if hash_condition is None:
        raise validation(f"Query condition missed key schema element: {index.hash_key.name}")
    if not (
        isinstance(hash_condition, Comparison)
        and hash_condition.op == "="
        and isinstance(_unwrapped(hash_condition.right), ValueNode)
    ):
        raise validation("Query key condition not supported")
    for key in index.keys:
        on_key = on.get(key.name)
        for operand in _operands(on_key) if on_key is not None else ():
            node = _unwrapped(operand)
            if isinstance(node, ValueNode) and set(bound.values[node.placeholder]) != {key.kind}:
                raise validation(
                    "One or more parameter values were invalid: Condition parameter type does "
                    "not match schema type"
                )


def _conjuncts(tree: Node | None) -> list[Node]:
    if tree is None:
        return []
    node = _unwrapped(tree)
    if isinstance(node, Logical):
        if node.op != "AND":
            raise validation(f"Invalid operator used in KeyConditionExpression: {node.op}")
        return _conjuncts(node.left) + _conjuncts(node.right)
    if isinstance(node, NotNode):
        raise validation("Invalid operator used in KeyConditionExpression: NOT")
    return [node]


def _key_condition_subject(condition: Node) -> str | None:
    """The one attribute a key condition is on (a name or its `#placeholder`), if any."""
    if isinstance(condition, Comparison | Between):
        subject = _unwrapped(
            condition.left if isinstance(condition, Comparison) else condition.subject
        )
    elif isinstance(condition, Call) and condition.function == "begins_with":
        subject = _unwrapped(condition.arguments[0])
    else:
        return None
    if isinstance(subject, PathNode) and len(subject.parts) == 1:
        return str(subject.parts[0])
    return None


def _operands(condition: Node) -> tuple[Node, ...]:
    if isinstance(condition, Comparison):
        return (condition.right,)
    if isinstance(condition, Between):
        return (condition.low, condition.high)
    if isinstance(condition, Call):
        return condition.arguments[1:]
    return ()


def _unwrapped(node: Node) -> Node:
    while isinstance(node, Group):
        node = node.inner
    return node


def _index_order(entry: Item, index: Index, key_name: str) -> tuple[Any, ...]:
    """Where an index entry stands: by its range key (numbers by value, strings and
    binaries by bytes), then by the table's key, so that a page can be resumed."""
    order: list[Any] = []
    for key in index.keys[1:]:
        order.append(_scalar_order(entry[key.name]))
    order.append(_scalar_order(entry[key_name]))
    return tuple(order)


def _scalar_order(value: dict[str, Any]) -> Any:
    ((kind, content),) = value.items()
    if kind == "N":
        return Decimal(content)
    return str(content).encode("utf-8") if kind == "S" else base64.b64decode(content)


def _projected(item: Item, projection: list[str] | None) -> Item:
    """An item read from the table (already a copy) with only the projection's names."""
    if projection is None:
        return item
    return {name: item[name] for name in projection if name in item}
