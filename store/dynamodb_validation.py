"""What DynamoDB checks in a request before it reads or writes anything, and in an item it
is about to write: the store's DynamoDB (store/dynamodb.py) refuses the same requests with the
same error codes.

- the request's fields (an unknown one is the SerializationException DynamoDB gives a raw
  request; botocore refuses it before sending), ReturnValues, attribute values (numbers as
  DynamoDB reads them, sets without duplicates and never empty, base64 binaries);
- its expressions with their placeholders (store/expressions.py): every placeholder defined
  and used, ExpressionAttributeNames/-Values given only with an expression and never empty;
- a key: the table's schema, no empty string, a partition key value of at most 2,048 bytes;
- an item about to be written: at most 400 KB, and every attribute that is a secondary
  index's key of the index's type, not empty, and within the key size limits
  (store/sizes.py, from the Developer Guide's "Quotas in Amazon DynamoDB").
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from beekeeper.store.errors import ServiceError, validation
from beekeeper.store.expression_syntax import (
    CONDITION,
    FILTER,
    KEY_CONDITION,
    PROJECTION,
    UPDATE,
    Action,
    ExpressionInvalid,
    Node,
)
from beekeeper.store.expressions import (
    SET_TYPES,
    Item,
    bound_condition,
    bound_update,
    normal_number,
    placeholders,
    projected_names,
)
from beekeeper.store.sizes import (
    MAX_ITEM_BYTES,
    MAX_PARTITION_KEY_BYTES,
    MAX_SORT_KEY_BYTES,
    item_size,
    text_size,
    value_size,
)
from beekeeper.store.stored_items import StoredItems

RETURN_VALUES = {
    "PutItem": ("NONE", "ALL_OLD"),
    "DeleteItem": ("NONE", "ALL_OLD"),
    "UpdateItem": ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"),
}
WRITE_OPTIONS = frozenset(
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
_KINDS = {
    "UpdateExpression": UPDATE,
    "ConditionExpression": CONDITION,
    "FilterExpression": FILTER,
    "KeyConditionExpression": KEY_CONDITION,
    "ProjectionExpression": PROJECTION,
}
KEY_TOO_LARGE = (
    "Hash primary key values must be under 2048 bytes, and range primary key values must be "
    "under 1024 bytes"
)


@dataclass(frozen=True)
class KeyAttribute:
    name: str
    kind: str  # S, N or B
    max_bytes: int


@dataclass(frozen=True)
class Index:
    """A global secondary index: sparse (only items with its key attributes are in it),
    projecting the keys only (the only projection the room's indexes use)."""

    name: str
    hash_key: KeyAttribute
    range_key: KeyAttribute | None = None

    @property
    def keys(self) -> tuple[KeyAttribute, ...]:
        return (self.hash_key,) if self.range_key is None else (self.hash_key, self.range_key)


@dataclass
class Table:
    name: str
    key_name: str = "pk"
    key_type: str = "S"
    items: StoredItems = field(default_factory=StoredItems)
    indexes: dict[str, Index] = field(default_factory=dict)


@dataclass
class Expressions:
    """A request's expressions, parsed and bound to its placeholders."""

    names: Mapping[str, str]
    values: Mapping[str, dict[str, Any]]
    condition: Node | None = None  # the condition, filter or key condition
    update: tuple[Action, ...] = ()
    projection: list[str] | None = None


def only(request: dict[str, Any], allowed: set[str] | frozenset[str]) -> None:
    if allowed.issuperset(request):
        return
    unknown = sorted(set(request) - allowed)
    if unknown:
        # botocore refuses unknown parameters before sending; a raw request (a template's)
        # gets DynamoDB's answer to a field it does not know.
        raise ServiceError(
            "SerializationException", f"Unexpected field {unknown[0]!r} in the request"
        )


def return_values(action: str, request: dict[str, Any]) -> str:
    returns = request.get("ReturnValues", "NONE")
    if returns not in RETURN_VALUES[action]:
        raise validation(f"Return values set to invalid value: {returns}")
    failure = request.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if failure not in ("NONE", "ALL_OLD"):
        raise validation(f"ReturnValuesOnConditionCheckFailure set to invalid value: {failure}")
    return str(returns)


def expressions(
    request: dict[str, Any], fields: tuple[str, ...], key_names: tuple[str, ...] = ()
) -> Expressions:
    """The request's expressions among `fields` (in the order DynamoDB checks them), each
    parsed and bound; every refusal a ValidationException."""
    texts: dict[str, str] = {}
    for name in fields:
        text = request.get(name)
        if text is None:
            continue
        if not isinstance(text, str):
            raise validation(f"{name} must be a string")
        texts[name] = text
    names = request.get("ExpressionAttributeNames")
    values = request.get("ExpressionAttributeValues")
    if not texts and names is None and values is None:
        return Expressions({}, {})
    if not texts:
        which = "ExpressionAttributeNames" if names is not None else "ExpressionAttributeValues"
        raise validation(f"{which} can only be specified when using expressions")
    if names is not None and (not isinstance(names, dict) or not names):
        raise validation("ExpressionAttributeNames must not be empty")
    if values is not None and (not isinstance(values, dict) or not values):
        raise validation("ExpressionAttributeValues must not be empty")
    checked = checked_values(values) or {}
    key = _binding_key(texts, names or {}, checked, key_names)
    known = _BOUND.get(key) if key is not None else None
    if known is not None:
        return Expressions(names or {}, checked, *known)
    bound = Expressions(names or {}, checked)
    try:
        for name, text in texts.items():
            if name == "UpdateExpression":
                bound.update = bound_update(text, bound.names, bound.values, key_names)
            elif name == "ProjectionExpression":
                bound.projection = projected_names(text, bound.names)
            else:
                bound.condition = bound_condition(text, _KINDS[name], bound.names, bound.values)
    except ExpressionInvalid as error:
        raise validation(str(error)) from None
    used = _used(tuple(texts.values()))
    for given, what in ((names, "ExpressionAttributeNames"), (values, "ExpressionAttributeValues")):
        if given is None or used.issuperset(given):
            continue
        unused = sorted(k for k in given if k not in used)
        if unused:
            raise validation(
                f"Value provided in {what} unused in expressions: keys: "
                "{" + ", ".join(unused) + "}"
            )
    if key is not None and not _reads_values(texts):
        if len(_BOUND) >= _BOUND_MOST:
            _BOUND.clear()
        _BOUND[key] = (bound.condition, bound.update, bound.projection)
    return bound


# Requests that passed the binding's checks, by what those checks read: the expressions, the
# names, each value's type, the key. The room sends a few shapes of request again and again,
# each checked in full the first time; a request that fails is checked again every time, and
# so is one whose checks read its values themselves (_reads_values).
_BindingKey = tuple[Any, ...]
_BOUND: dict[_BindingKey, tuple[Node | None, tuple[Action, ...], list[str] | None]] = {}
_BOUND_MOST = 4096


def _binding_key(
    texts: dict[str, str],
    names: Mapping[str, str],
    values: Mapping[str, dict[str, Any]],
    key_names: tuple[str, ...],
) -> _BindingKey | None:
    """What the binding's checks read, as a key (None: a name that is not a string)."""
    try:
        key = (
            tuple(texts.items()),
            tuple(names.items()),
            tuple([(placeholder, *value) for placeholder, value in values.items()]),
            key_names,
        )
        hash(key)
    except TypeError:  # a name that is not a string: the binding refuses it
        return None
    return key


def _reads_values(texts: dict[str, str]) -> bool:
    """Whether the binding's checks read values, not only their types: BETWEEN compares its
    two bounds (store/expressions.py)."""
    return any("between" in text.lower() for text in texts.values())


@functools.lru_cache(maxsize=4096)
def _used(texts: tuple[str, ...]) -> frozenset[str]:
    """The placeholders the expressions use."""
    return frozenset().union(*(placeholders(text) for text in texts))


def key_value(table: Table, key: object, what: str = "Key") -> str:
    """The partition key's value (numbers normalised), checked against the table's schema."""
    if not isinstance(key, dict):
        raise validation("The provided key element does not match the schema")
    value = key.get(table.key_name)
    if what == "Item" and value is None:
        raise validation(
            "One or more parameter values were invalid: Missing the key "
            f"{table.key_name} in the item"
        )
    if (
        len(key) != 1  # with `value` a dict: the key's one attribute is the table's key
        or not isinstance(value, dict)
        or len(value) != 1
        or table.key_type not in value
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
    if table.key_type == "S":
        size = text_size(text)
    else:
        value = checked_value(value, table.key_name)
        text = value[table.key_type]
        size = value_size(value)
    if size > MAX_PARTITION_KEY_BYTES:
        raise validation(KEY_TOO_LARGE)
    return str(text)


def item_refusal(table: Table, item: Item, *, update: bool, measured: bool = False) -> str | None:
    """Why DynamoDB would not write `item` (its size, a secondary index's key), or None;
    `measured`: its size was checked already (a transaction's Put, refused whole when too
    large)."""
    if not measured and item_size(item) > MAX_ITEM_BYTES:
        return (
            "Item size to update has exceeded the maximum allowed size"
            if update
            else "Item size has exceeded the maximum allowed size"
        )
    for index in table.indexes.values():
        for key in index.keys:
            value = item.get(key.name)
            if value is None:
                continue  # not in this sparse index
            ((kind, content),) = value.items()
            if kind != key.kind:
                return (
                    "One or more parameter values were invalid: Type mismatch for Index Key "
                    f"{key.name} Expected: {key.kind} Actual: {kind} IndexName: {index.name}"
                )
            if kind in ("S", "B") and content == "":
                if update:
                    return (
                        "One or more parameter values are not valid. The update expression "
                        "attempted to update a secondary index key to a value that is not "
                        "supported. The AttributeValue for a key attribute cannot contain an "
                        "empty string value."
                    )
                return (
                    "One or more parameter values are not valid. A value specified for a "
                    "secondary index key is not supported. The AttributeValue for a key "
                    "attribute cannot contain an empty string value. IndexName: "
                    f"{index.name}, IndexKey: {key.name}"
                )
            if value_size(value) > key.max_bytes:
                return (
                    "One or more parameter values were invalid: Size limit exceeded for the "
                    f"key {key.name} of index {index.name} (at most {key.max_bytes} bytes)"
                )
    return None


def key_attribute(role: str, name: str, kind: str) -> KeyAttribute:
    """An index's key attribute: its role (HASH or RANGE) sets its size limit."""
    limit = MAX_PARTITION_KEY_BYTES if role == "HASH" else MAX_SORT_KEY_BYTES
    return KeyAttribute(name, kind, limit)


def checked_values(values: object) -> dict[str, Any] | None:
    if values is None:
        return None
    if not isinstance(values, dict):
        raise validation("ExpressionAttributeValues must be a map")
    return {name: checked_value(value, name) for name, value in values.items()}


def checked_item(item: object) -> Item:
    if not isinstance(item, dict):
        raise validation("One or more parameter values were invalid: the item must be a map")
    checked: Item = {}
    for name, value in item.items():
        # The room's usual attribute, a plain string or number, takes the short way through
        # the same checks; anything else, checked_value's.
        if type(value) is dict and len(value) == 1 and type(name) is str:
            ((kind, content),) = value.items()
            if type(content) is str:
                if kind == "S":
                    checked[name] = {"S": content}
                    continue
                if kind == "N":
                    try:
                        checked[name] = {"N": normal_number(content)}
                        continue
                    except ExpressionInvalid:
                        pass  # refused below, as any value
        checked[str(name)] = checked_value(value, str(name))
    return checked


def checked_value(value: object, name: str) -> dict[str, Any]:
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
            return {"L": [checked_value(v, name) for v in content]}
        if kind == "M" and isinstance(content, dict):
            return {"M": {str(k): checked_value(v, name) for k, v in content.items()}}
        if kind in SET_TYPES and isinstance(content, list):
            return _checked_set(kind, content)
    except ExpressionInvalid as error:
        raise validation(str(error)) from None
    except binascii.Error as error:
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
