"""A table's items held compactly: what a million visitors' items cost the store's memory.

DynamoDB's wire shape (`{"pk": {"S": "v#..."}, "ordinal": {"N": "1"}}`) gives each attribute
a dictionary of its own; held that way a million visitors' items took gigabytes. A stored item
is instead one tuple: its shape (the attribute names and types in the item's order, one shared
tuple for every item of the same shape), then each attribute's content (a string, a boolean,
a tuple for a set or a list, a tuple of (name, type, content) for a map). `StoredItems` is the
table's items as a mapping of wire-shaped items: each item read is decoded into new
dictionaries and lists (a copy no caller can change the stored item through), each item
written is encoded, so the store answers byte for byte as it would holding the wire shape.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping
from typing import Any

Item = dict[str, dict[str, Any]]
Record = tuple[Any, ...]  # (shape, content, content, ...)

_SETS = ("SS", "NS", "BS")
# Every distinct shape once: (name, type, name, type, ...). A room's items come in a handful
# of shapes; past _MOST_SHAPES (other callers' items) a shape is kept with its item.
_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}
_NAMES: dict[tuple[str, ...], frozenset[str]] = {}  # each kept shape's attribute names
_MOST_SHAPES = 10_000


def encode(item: Item) -> Record:
    """The stored form of a checked wire-shaped item."""
    shape: list[str] = []
    record: list[Any] = [None]  # the shape's place, filled once the shape is known
    for name, value in item.items():
        ((kind, content),) = value.items()
        shape += (name, kind)
        record.append(content if kind == "S" or kind == "N" else _encoded(kind, content))
    key = tuple(shape)
    if len(_SHAPES) < _MOST_SHAPES:
        key = _SHAPES.setdefault(key, key)
    record[0] = key
    return tuple(record)


def decode(record: Record) -> Item:
    """The wire-shaped item of a stored one: new dictionaries and lists throughout."""
    shape = record[0]
    item: Item = {}
    for i in range(1, len(record)):
        kind = shape[2 * i - 1]
        content = record[i]
        item[shape[2 * i - 2]] = (
            {kind: content} if kind in ("S", "N") else {kind: _decoded(kind, content)}
        )
    return item


def has_names(record: Record, wanted: Iterable[str]) -> bool:
    """Whether a stored item has every one of these attributes (without decoding it)."""
    shape = record[0]
    held = _NAMES.get(shape)
    if held is None:
        held = frozenset(shape[::2])
        if len(_NAMES) < _MOST_SHAPES:
            _NAMES[shape] = held
    return all(name in held for name in wanted)


def _encoded(kind: str, content: Any) -> Any:
    if kind in _SETS:
        return tuple(content)
    if kind == "L":
        return tuple(_encoded_value(value) for value in content)
    if kind == "M":
        return tuple((name, *_encoded_value(value)) for name, value in content.items())
    return content  # B, BOOL, NULL: immutable already


def _encoded_value(value: dict[str, Any]) -> tuple[str, Any]:
    ((kind, content),) = value.items()
    return kind, _encoded(kind, content)


def _decoded(kind: str, content: Any) -> Any:
    if kind in _SETS:
        return list(content)
    if kind == "L":
        return [{inner: _decoded(inner, value)} for inner, value in content]
    if kind == "M":
        return {name: {inner: _decoded(inner, value)} for name, inner, value in content}
    return content


class StoredItems(MutableMapping[str, Item]):
    """A table's items by partition key value, stored compactly, read and written as DynamoDB's
    wire shape."""

    __slots__ = ("_keys_changed", "_records", "_sorted")

    def __init__(self, items: Iterable[tuple[str, Item]] = ()) -> None:
        self._records: dict[str, Record] = {}
        self._keys_changed = 0  # moves on whenever a key comes or goes
        self._sorted: tuple[int, list[str]] = (-1, [])  # the keys in order, as of that count
        for pk, item in items:
            self[pk] = item

    def __getitem__(self, pk: str) -> Item:
        return decode(self._records[pk])

    def get(self, pk: str, default: Any = None) -> Any:
        record = self._records.get(pk)
        return default if record is None else decode(record)

    def __setitem__(self, pk: str, item: Item) -> None:
        if pk not in self._records:
            self._keys_changed += 1
        self._records[pk] = encode(item)

    def __delitem__(self, pk: str) -> None:
        del self._records[pk]
        self._keys_changed += 1

    def __contains__(self, pk: object) -> bool:
        return pk in self._records

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"StoredItems({dict(self.items())!r})"

    def records(self) -> Iterable[tuple[str, Record]]:
        """(partition key value, stored item) pairs, for reads that look before decoding."""
        return self._records.items()

    def record(self, pk: str) -> Record:
        return self._records[pk]

    def sorted_keys(self) -> list[str]:
        """Every key in order (not to be changed by the caller): sorted again only after a key
        came or went, so a Scan's pages through a large table sort it once, not once a page."""
        changed, keys = self._sorted
        if changed != self._keys_changed:
            keys = sorted(self._records)
            self._sorted = (self._keys_changed, keys)
        return keys
