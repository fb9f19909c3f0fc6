"""The store refuses what DynamoDB refuses, and pages as DynamoDB pages, as DynamoDB Local shows.

Each scenario runs on DynamoDB Local and on the store (through local mode's boto3 clients);
the transcripts must be equal, refusals compared by error code, modeled fields and the sense
of their sentence (`sense`): an unescaped reserved word in every kind of expression,
redundant parentheses, comparisons with missing attributes and values of other types, values
an operator does not take, an index key of the wrong type, empty or too long, items and
updates past 400 KB (every kind of value measured at the limit), key values past 2,048 bytes,
numbers DynamoDB does not read, the order of a write's checks (the condition before the
update's own refusals), a transaction's reasons, and Scan and Query pages of 1 MB.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

import pytest

from beekeeper.core.datamodel import (
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEAVING_VALUE,
    LEFT_AT_ATTRIBUTE,
)
from beekeeper.store.expressions import normal_number
from beekeeper.store.reserved_words import RESERVED_WORDS
from beekeeper.store.sizes import MAX_ITEM_BYTES, item_size, number_size
from tests.support.store_scenarios import TABLE, Side, key, n, sensed

# DynamoDB Local is a JVM started once per session (5 to 15 s): a subprocess, so slow.
pytestmark = pytest.mark.slow

# DynamoDB Local accepts these two of the Developer Guide's 573 reserved words as attribute
# names; the store follows the Guide.
KINDER_IN_DYNAMODB_LOCAL = frozenset({"CONVERT", "SIZE"})


def update(side: Side, pk: str, expression: str, **more: Any) -> dict[str, Any]:
    return side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key(pk),
        **{"UpdateExpression": expression, **more},
    )


def put(side: Side, item: dict[str, Any], **more: Any) -> dict[str, Any]:
    return side.call("dynamodb", "put_item", TableName=TABLE, Item=item, **more)


ONE = {":v": n(1)}


# -- scenarios --------------------------------------------------------------------------------


def reserved_words_in_every_expression(side: Side) -> None:
    put(side, {**key("r"), "status": {"S": "x"}, "count": n(1), "a": {"M": {"b": n(1)}}})
    update(side, "r", "SET state = :v", ExpressionAttributeValues=ONE)
    update(side, "r", "SET ttl = :v", ExpressionAttributeValues=ONE)
    update(side, "r", "REMOVE name")
    update(side, "r", "ADD total :v", ExpressionAttributeValues=ONE)
    update(side, "r", "DELETE users :s", ExpressionAttributeValues={":s": {"SS": ["u"]}})
    update(side, "r", "SET x = if_not_exists(count, :v)", ExpressionAttributeValues=ONE)
    update(side, "r", "SET x = count + :v", ExpressionAttributeValues=ONE)
    update(
        side, "r", "SET x = :v", ConditionExpression="status = :v", ExpressionAttributeValues=ONE
    )
    update(
        side, "r", "SET x = :v", ConditionExpression="Status = :v", ExpressionAttributeValues=ONE
    )
    update(
        side,
        "r",
        "SET x = :v",
        ConditionExpression="attribute_exists(ttl)",
        ExpressionAttributeValues=ONE,
    )
    update(
        side, "r", "SET x = :v", ConditionExpression="a.status = :v", ExpressionAttributeValues=ONE
    )
    # The update is checked before the condition.
    update(
        side,
        "r",
        "SET state = :v",
        ConditionExpression="status = :v",
        ExpressionAttributeValues=ONE,
    )
    side.call(
        "dynamodb",
        "delete_item",
        TableName=TABLE,
        Key=key("r"),
        ConditionExpression="attribute_exists(count)",
    )
    put(side, key("r2"), ConditionExpression="attribute_not_exists(name)")
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("r"), ProjectionExpression="name, a")
    side.call(
        "dynamodb",
        "batch_get_item",
        RequestItems={TABLE: {"Keys": [key("r")], "ProjectionExpression": "status"}},
    )
    side.call(
        "dynamodb",
        "scan",
        TableName=TABLE,
        FilterExpression="status = :v",
        ExpressionAttributeValues=ONE,
    )
    side.call("dynamodb", "scan", TableName=TABLE, ProjectionExpression="pk, count")
    side.call(
        "dynamodb",
        "transact_write_items",
        TransactItems=[
            {
                "ConditionCheck": {
                    "TableName": TABLE,
                    "Key": key("r"),
                    "ConditionExpression": "attribute_exists(value)",
                }
            }
        ],
    )
    # Escaped, each is an attribute like any other.
    update(
        side,
        "r",
        "SET #s = :v, #t = :v ADD #c :v",
        ConditionExpression="#s <> :v AND attribute_exists(#n)",
        ExpressionAttributeNames={"#s": "state", "#t": "ttl", "#c": "count", "#n": "name"},
        ExpressionAttributeValues=ONE,
        ReturnValues="ALL_NEW",
    )
    side.call(
        "dynamodb",
        "get_item",
        TableName=TABLE,
        Key=key("r"),
        ProjectionExpression="#s, #c",
        ExpressionAttributeNames={"#s": "status", "#c": "count"},
    )


def redundant_parentheses(side: Side) -> None:
    put(side, {**key("p"), "a": n(1), "b": n(1)})
    for condition in (
        "(a = :v)",
        "((a = :v))",
        "(a = :v) AND (b = :v)",
        "((a = :v) AND b = :v)",
        "(attribute_exists(a))",
        "a = :v AND ((b = :v))",
        "NOT (a = :v)",
        "NOT ((a = :v))",
        "((a = :v) OR (b = :v)) AND a = :v",
        "a = (:v)",
        "(a) = :v",
        "((a)) = :v",
        "size((a)) = :v",
        "(a = :v AND b = :v) OR b = :v",
        "a IN (:v)",
        "(a BETWEEN :v AND :v)",
        "((status = :v))",
    ):
        update(
            side, "p", "SET z = :v", ConditionExpression=condition, ExpressionAttributeValues=ONE
        )
    for expression in ("SET z = (:v)", "SET z = (a + :v)", "SET z = ((:v))", "SET z = (((:v)))"):
        update(side, "p", expression, ExpressionAttributeValues=ONE)


def comparisons(side: Side) -> None:
    """Comparisons and functions on missing attributes, other types, and values."""
    put(
        side,
        {
            **key("m"),
            "s": {"S": "é"},
            "n": n(5),
            "l": {"L": [n(1)]},
            "flag": {"BOOL": True},
            "nothing": {"NULL": True},
            "b": {"B": b"\x00\x01\x02"},
            "ss": {"SS": ["a"]},
        },
    )
    values = {
        ":v": n(1),
        ":s": {"S": "x"},
        ":z": {"S": "z"},
        ":t": {"BOOL": True},
        ":null": {"NULL": True},
        ":b": {"B": b"\x00\x02"},
        ":top": {"B": b"\xff"},
        ":three": n(3),
        ":a": {"S": "a"},
        ":l": {"L": []},
        ":set": {"SS": ["a"]},
        ":five": n(5),
    }
    for condition in (
        "absent <> :v",
        "absent = :v",
        "absent < :v",
        "absent <= :v",
        "absent > :v",
        "absent >= :v",
        "NOT absent = :v",
        "NOT absent <> :v",
        "absent <> absent2",
        "absent = absent2",
        "absent BETWEEN :v AND :v",
        "absent IN (:v)",
        "NOT absent IN (:v)",
        "size(absent) = :v",
        "size(absent) <> :v",
        "begins_with(absent, :s)",
        "NOT begins_with(absent, :s)",
        "contains(absent, :s)",
        "NOT contains(absent, :s)",
        "s <> :v",
        "s < :v",
        "n <> :s",
        "n < s",
        "s > :z",
        "flag = :t",
        "flag <> :t",
        "nothing = :null",
        "nothing <> :null",
        "l <> :v",
        "l < :v",
        "size(s) = :v",
        "size(b) = :three",
        "size(n) >= :v",
        "size(ss) = :v AND size(l) = :v",
        "b < :b",
        "b > :top",
        "begins_with(b, :b)",
        "contains(b, :b)",
        "contains(ss, :a)",
        "contains(l, :v)",
        "n IN (:s, :five)",
        "n BETWEEN :v AND :five",
        "s BETWEEN :v AND :five",
        ":v = :v",
        "ss = :set",
        "contains(:v, n)",
        "size(:s) = :v",
    ):
        used = {k: v for k, v in values.items() if k in re.findall(r":\w+", condition)}
        update(
            side,
            "m",
            "SET z = :zero",
            ConditionExpression=condition,
            ExpressionAttributeValues={**used, ":zero": n(0)},
        )
    update(
        side,
        "nobody",
        "SET z = :v",
        ConditionExpression="absent <> :v",
        ExpressionAttributeValues=ONE,
    )
    update(
        side,
        "nobody2",
        "SET z = :v",
        ConditionExpression="absent = :v",
        ExpressionAttributeValues=ONE,
    )


def refused_operands(side: Side) -> None:
    """What DynamoDB refuses before it reads the item: the operands themselves."""
    put(side, {**key("o"), "a": n(1), "s": {"S": "x"}, "l": {"L": []}})

    def condition(text: str, values: dict[str, Any], names: dict[str, str] | None = None) -> None:
        more: dict[str, Any] = {"ExpressionAttributeNames": names} if names else {}
        update(
            side,
            "o",
            "SET z = :zero",
            ConditionExpression=text,
            ExpressionAttributeValues={**values, ":zero": n(0)},
            **more,
        )

    condition("a < :t", {":t": {"BOOL": True}})
    condition("a < :l", {":l": {"L": []}})
    condition("a < :set", {":set": {"SS": ["a"]}})
    condition("begins_with(a, :v)", ONE)
    condition("begins_with(:v, a)", ONE)
    condition("size(:v) = :v", ONE)
    condition("a BETWEEN :v AND :s", {**ONE, ":s": {"S": "x"}})
    condition("a BETWEEN :five AND :v", {**ONE, ":five": n(5)})
    condition("l = l", {})
    condition("#a = a", ONE, {"#a": "a"})
    condition("a <> a", {})
    condition("a BETWEEN a AND :v", ONE)
    condition("a IN (a, :v)", ONE)
    condition("contains(a, a)", {})
    condition("attribute_exists(:v)", ONE)
    condition("ATTRIBUTE_EXISTS(a)", {})
    condition("a = :nope", ONE)
    condition("#nope = :v", ONE)
    condition("a = :v", {**ONE, ":unused": n(2)})
    condition("a = :v AND", ONE)
    condition("a", {})
    condition("a = :v = :v", ONE)
    condition("a IN ()", ONE)
    update(
        side,
        "o",
        "ADD z :s",
        ConditionExpression="attribute_exists(zz)",
        ExpressionAttributeValues={":s": {"S": "x"}},
    )
    update(
        side,
        "o",
        "DELETE z :v",
        ConditionExpression="attribute_exists(zz)",
        ExpressionAttributeValues=ONE,
    )
    update(
        side,
        "o",
        "SET z = :s + :v",
        ConditionExpression="attribute_exists(zz)",
        ExpressionAttributeValues={**ONE, ":s": {"S": "x"}},
    )
    update(side, "o", "SET z = :v + :v + :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET z = if_not_exists(:v, :v)", ExpressionAttributeValues=ONE)
    update(side, "o", "SET z = IF_NOT_EXISTS(a, :v)", ExpressionAttributeValues=ONE)
    update(side, "o", "SET a-b = :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET _a = :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET 1a = :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET a = :v SET b = :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET a = :v, a = :v", ExpressionAttributeValues=ONE)
    update(side, "o", "SET a = :v REMOVE a", ExpressionAttributeValues=ONE)
    update(
        side,
        "o",
        "SET #k = :v",
        ExpressionAttributeNames={"#k": "pk"},
        ExpressionAttributeValues=ONE,
    )
    update(side, "o", "REMOVE pk")
    update(side, "o", "SET z = :v,", ExpressionAttributeValues=ONE)
    update(side, "o", "set z = :v remove s", ExpressionAttributeValues=ONE, ReturnValues="ALL_NEW")


def checks_in_order(side: Side) -> None:
    """The condition is checked before the update's own refusals, which need the item."""
    put(side, {**key("c"), "s": {"S": "x"}})
    for expression in ("SET a = absent + :v", "SET a = s + :v", "ADD s :v"):
        update(
            side,
            "c",
            expression,
            ConditionExpression="attribute_exists(zz)",
            ExpressionAttributeValues=ONE,
        )
        update(side, "c", expression, ExpressionAttributeValues=ONE)


def index_keys(side: Side) -> None:
    leaving = {LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE}}
    put(side, {**key("g"), LEAVING_ATTRIBUTE: {"S": ""}})
    put(side, {**key("g"), LEAVING_ATTRIBUTE: n(1)})
    put(side, {**key("g"), LEFT_AT_ATTRIBUTE: {"S": "1"}})
    put(side, {**key("g"), **leaving, LEFT_AT_ATTRIBUTE: {"S": "1"}})
    put(side, {**key("g"), LEAVING_ATTRIBUTE: {"S": "x" * 2049}})
    put(side, {**key("g"), LEAVING_ATTRIBUTE: {"S": "x" * 2048}})
    put(side, {**key("g"), **leaving, LEFT_AT_ATTRIBUTE: n(7)})
    update(side, "g", f"SET {LEFT_AT_ATTRIBUTE} = :s", ExpressionAttributeValues={":s": {"S": "x"}})
    update(side, "g", f"SET {LEAVING_ATTRIBUTE} = :s", ExpressionAttributeValues={":s": {"S": ""}})
    update(side, "g", f"SET {LEAVING_ATTRIBUTE} = :v", ExpressionAttributeValues=ONE)
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={
            TABLE: [{"PutRequest": {"Item": {**key("g2"), LEAVING_ATTRIBUTE: {"S": ""}}}}]
        },
    )
    side.call(
        "dynamodb",
        "transact_write_items",
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {**key("g3"), LEFT_AT_ATTRIBUTE: {"S": "x"}}}},
            {
                "Put": {
                    "TableName": TABLE,
                    "Item": key("g4"),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        ],
    )
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("g"))


def key_sizes(side: Side) -> None:
    for pk in ("k" * 2048, "k" * 2049, "é" * 1024, "é" * 1024 + "a"):
        put(side, key(pk))
        side.call("dynamodb", "get_item", TableName=TABLE, Key=key(pk))
        update(side, pk, "SET a = :v", ExpressionAttributeValues=ONE)


def filler(item: dict[str, Any], total: int) -> dict[str, Any]:
    """`item` with a string attribute `x` that brings it to exactly `total` bytes."""
    return {**item, "x": {"S": "a" * (total - item_size(item) - len("x"))}}


# Every kind of value, measured at the limit: the store's sizes are DynamoDB Local's.
SIZED_VALUES: list[dict[str, Any]] = [
    *(
        n(text)
        for text in (
            "0",
            "1",
            "12",
            "123",
            "1234",
            "-1",
            "-12",
            "-123",
            "100",
            "1000000",
            "0.001",
            "1.5",
            "12.5",
            "1" * 38,
            "-" + "1" * 38,
            "1E+100",
            "1E-100",
            "10.01",
            "101",
            "0.01",
            "1763000000",
            "1763000000.123",
            "-0.5",
        )
    ),
    {"S": "é€😀"},
    {"S": ""},
    {"B": b"abc"},
    {"BOOL": False},
    {"NULL": True},
    {"SS": ["ab", "c"]},
    {"NS": ["1", "22", "-0.5"]},
    {"BS": [b"ab", b"\x00"]},
    {"L": []},
    {"M": {}},
    {"L": [{"S": "ab"}, n(1), {"BOOL": True}]},
    {"M": {"kk": {"L": [{"S": "x"}]}, "é": {"M": {"n": n(12)}}}},
]


def item_sizes(side: Side) -> None:
    for number, value in enumerate(SIZED_VALUES):
        item = {**key(f"s{number}"), "value": value}
        wire = _wire_bytes(value)
        exact = filler({**key(f"s{number}"), "value": wire}, MAX_ITEM_BYTES)
        put(side, {**item, "x": exact["x"]})
        put(side, {**item, "x": {"S": exact["x"]["S"] + "a"}})
    put(side, filler(key("u"), MAX_ITEM_BYTES - 10))
    update(side, "u", "SET y = :s", ExpressionAttributeValues={":s": {"S": "a" * 8}})
    update(side, "u", "SET z = :s", ExpressionAttributeValues={":s": {"S": "a"}})
    update(side, "u2", "SET y = :s", ExpressionAttributeValues={":s": {"S": "a" * MAX_ITEM_BYTES}})
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={TABLE: [{"PutRequest": {"Item": filler(key("b"), MAX_ITEM_BYTES + 1)}}]},
    )
    side.call(
        "dynamodb",
        "transact_write_items",
        TransactItems=[{"Put": {"TableName": TABLE, "Item": filler(key("t"), MAX_ITEM_BYTES + 1)}}],
    )
    put(side, filler(key("t2"), MAX_ITEM_BYTES - 100))
    # Too large once updated: a ValidationError reason; an update that needs an attribute the
    # item lacks: the whole request refused.
    for expression, values in (
        ("SET y = :s", {":s": {"S": "a" * 200}}),
        ("SET y = absent + :v", ONE),
    ):
        update_in_transaction = {
            "TableName": TABLE,
            "Key": key("t2"),
            "UpdateExpression": expression,
            "ExpressionAttributeValues": values,
        }
        side.call(
            "dynamodb", "transact_write_items", TransactItems=[{"Update": update_in_transaction}]
        )


def _wire_bytes(value: dict[str, Any]) -> dict[str, Any]:
    """A value as the store sizes it: binaries base64 (boto3 encodes them on the wire)."""
    ((kind, content),) = value.items()
    if kind == "N":
        return {"N": normal_number(content)}
    if kind == "B":
        return {"B": base64.b64encode(content).decode()}
    if kind == "BS":
        return {"BS": [base64.b64encode(m).decode() for m in content]}
    if kind == "NS":
        return {"NS": [normal_number(m) for m in content]}
    if kind == "L":
        return {"L": [_wire_bytes(v) for v in content]}
    if kind == "M":
        return {"M": {k: _wire_bytes(v) for k, v in content.items()}}
    return value


NUMBERS = (
    " 1",
    "1 ",
    "\t1",
    "1_000",
    "+1",
    "-1",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    ".5",
    "5.",
    "-.5",
    "-0",
    "0.0",
    "00012",
    "0x10",
    "Infinity",
    "NaN",
    "-Infinity",
    "1e126",
    "9.9999e125",
    "1e-130",
    "1e-131",
    "\u0661",  # ARABIC-INDIC DIGIT ONE: DynamoDB Local reads it as 1
    "\uff10",  # FULLWIDTH DIGIT ZERO
    "1,000",
    "",
    "-",
    "+",
    "1..2",
    "1e",
    "e5",
    "1d",
    "1f",
    "--1",
    "+-1",
    "0012.500",
    "1" * 38,
    "1" * 39,
    "1" * 38 + "0",
    "1.0e0",
    " ",
    "1 000",
)


def numbers(side: Side) -> None:
    """Each text as a number in an item and in an expression's value. (Only whether the update
    is taken is compared: DynamoDB Local keeps an update's numbers as written, `1.0e0` and
    `-0`, where DynamoDB trims them; tests/unit/test_store.py holds the store to DynamoDB.)"""
    for text in NUMBERS:
        side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("num"))
        put(side, {**key("num"), "n": {"N": text}})
        side.call("dynamodb", "get_item", TableName=TABLE, Key=key("num"))
        update(side, "num2", "SET n = :n", ExpressionAttributeValues={":n": {"N": text}})


def write_pages(side: Side, sizes: list[int]) -> None:
    for number, size in enumerate(sizes):
        put(side, filler(key(f"i{number:03d}"), size))


def scan_all(side: Side, **request: Any) -> None:
    """A scan to its end: each page's counts and whether it had a LastEvaluatedKey, then the
    keys of all items read (in no order: DynamoDB promises none)."""
    pages, seen = [], []
    start: dict[str, Any] | None = None
    while True:
        answer = side.call(
            "dynamodb",
            "scan",
            TableName=TABLE,
            **request,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        side.transcript.pop()  # the page itself holds keys in DynamoDB's own order
        side.messages.pop()
        pages.append(
            (answer.get("Count"), answer.get("ScannedCount"), "LastEvaluatedKey" in answer)
        )
        seen += [item["pk"]["S"] for item in answer.get("Items", [])]
        start = answer.get("LastEvaluatedKey")
        if not start:
            break
    side.record(("scan pages", pages, sorted(seen)))


def scan_pages(side: Side) -> None:
    quarter = 1024 * 1024 // 4
    for sizes in ([quarter] * 9, [quarter - 1] * 9, [quarter + 1] * 9, [quarter] * 8):
        write_pages(side, sizes)
        scan_all(side)
        scan_all(side, FilterExpression="attribute_exists(nothing)")
        scan_all(side, ProjectionExpression="pk", Limit=3)
        for number in range(len(sizes)):
            side.call("dynamodb", "delete_item", TableName=TABLE, Key=key(f"i{number:03d}"))
    write_pages(side, [100] * 3)
    scan_all(side, Limit=3)
    scan_all(
        side, Limit=2, FilterExpression="pk = :x", ExpressionAttributeValues={":x": {"S": "zz"}}
    )
    scan_all(side, Select="COUNT")


def query_pages(side: Side) -> None:
    """The leaving index's pages: entries of exactly 2,048 bytes, 512 to a megabyte."""
    requests = []
    for number in range(1100):
        left_at = str(number + 1)
        pad = 2048 - len("pk") - len(LEAVING_ATTRIBUTE) - len(LEAVING_VALUE)
        pad -= len(LEFT_AT_ATTRIBUTE) + number_size(left_at) + 5
        item = {
            "pk": {"S": f"{number:05d}" + "p" * pad},
            LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE},
            LEFT_AT_ATTRIBUTE: n(left_at),
        }
        requests.append({"PutRequest": {"Item": item}})
    for first in range(0, len(requests), 25):
        side.call(
            "dynamodb", "batch_write_item", RequestItems={TABLE: requests[first : first + 25]}
        )
    query: dict[str, Any] = {
        "TableName": TABLE,
        "IndexName": LEAVING_INDEX,
        "KeyConditionExpression": "#leaving = :yes",
        "ExpressionAttributeNames": {"#leaving": LEAVING_ATTRIBUTE},
        "ExpressionAttributeValues": {":yes": {"S": LEAVING_VALUE}},
    }
    for more in ({}, {"ScanIndexForward": False}, {"Limit": 100}, {"Limit": 600}):
        start: dict[str, Any] | None = None
        while True:
            answer = side.call(
                "dynamodb",
                "query",
                **query,
                **more,
                **({"ExclusiveStartKey": start} if start else {}),
            )
            start = answer.get("LastEvaluatedKey")
            if not start:
                break


def query_refusals(side: Side) -> None:
    put(side, {**key("q"), LEAVING_ATTRIBUTE: {"S": "1"}, LEFT_AT_ATTRIBUTE: n(1)})
    query = {
        "TableName": TABLE,
        "IndexName": LEAVING_INDEX,
        "ExpressionAttributeNames": {"#l": LEAVING_ATTRIBUTE},
    }
    yes = {":y": {"S": "1"}}
    for condition, values in (
        ("#l = :y", yes),
        ("(#l = :y)", yes),
        ("#l > :y", yes),
        ("#l = :y OR #l = :y", yes),
        ("#l = :y AND left_at > :y", yes),
        ("#l = :y AND left_at > :n", {**yes, ":n": n(0)}),
        ("#l = :y AND left_at BETWEEN :n AND :n", {**yes, ":n": n(1)}),
        ("#l = :n", {":n": n(1)}),
    ):
        side.call(
            "dynamodb",
            "query",
            **query,
            KeyConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
    side.call(
        "dynamodb",
        "query",
        **query,
        KeyConditionExpression="#l = :y",
        ExpressionAttributeValues=yes,
        ConsistentRead=True,
    )
    side.call(
        "dynamodb",
        "query",
        **query,
        KeyConditionExpression="#l = :y",
        ExpressionAttributeValues=yes,
        Limit=1,
    )


SCENARIOS: dict[str, Callable[[Side], None]] = {
    "reserved words in every expression": reserved_words_in_every_expression,
    "redundant parentheses": redundant_parentheses,
    "comparisons": comparisons,
    "refused operands": refused_operands,
    "checks in order": checks_in_order,
    "index keys": index_keys,
    "key sizes": key_sizes,
    "item sizes": item_sizes,
    "numbers": numbers,
    "scan pages": scan_pages,
    "query pages": query_pages,
    "query refusals": query_refusals,
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_store_refuses_and_pages_as_dynamodb_local_does(
    local_side: Side, store_side: Side, scenario: str
) -> None:
    SCENARIOS[scenario](local_side)
    SCENARIOS[scenario](store_side)
    theirs, ours = sensed(local_side), sensed(store_side)
    assert len(ours) == len(theirs)
    for step, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
        assert mine == other, f"step {step} of {scenario!r}: {local_side.messages[step]}"


def test_every_reserved_word_is_refused_unescaped_and_taken_escaped(
    local_side: Side, store_side: Side
) -> None:
    """All 573 of the Developer Guide's words, in an update and in a condition."""
    for side in (local_side, store_side):
        for word in sorted(RESERVED_WORDS):
            update(side, "w", f"SET {word} = :v", ExpressionAttributeValues=ONE)
            update(
                side,
                "w",
                "SET x = :v",
                ConditionExpression=f"attribute_not_exists({word.lower()})",
                ExpressionAttributeValues=ONE,
            )
            update(
                side,
                "w",
                "SET #w = :v",
                ExpressionAttributeNames={"#w": word},
                ExpressionAttributeValues=ONE,
            )
    words = [w for w in sorted(RESERVED_WORDS) for _ in range(3)]
    ours, theirs = sensed(store_side), sensed(local_side)
    for step, (word, mine, other) in enumerate(zip(words, ours, theirs, strict=True)):
        if step % 3 == 2:  # escaped: taken
            assert mine[1] == other[1] == "answered", (word, mine, other)
        elif word in KINDER_IN_DYNAMODB_LOCAL and other[1] == "answered":
            assert mine[1:] == (
                "refused",
                "ValidationException",
                {"reasons": None, "item": None},
                "reserved keyword",
            ), word
        else:
            assert mine == other, word
            assert mine[1:3] == ("refused", "ValidationException"), word
            assert mine[4] in ("reserved keyword", "Syntax error"), (word, mine)
    kinder = {
        word
        for step, (word, other) in enumerate(zip(words, theirs, strict=True))
        if step % 3 != 2 and other[1] == "answered"
    }
    assert kinder <= KINDER_IN_DYNAMODB_LOCAL
