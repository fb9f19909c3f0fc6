"""The room's DynamoDB requests as scenarios, run on several DynamoDBs and compared.

A scenario makes the same calls on a `Side` (a DynamoDB client and a transcript); two sides
that answered alike have equal transcripts: each answer compared whole (sets as sets), each
refusal by its error code and modeled fields (a cancelled transaction's reasons, a failed
condition's item). tests/functional/store compares the store with moto and with DynamoDB
Local on these scenarios.

Covered: the templates' reads and writes (/polling's BatchGetItem, /jwks.json's GetItem,
/client's check and redeem, capacity mode's session and /leave: the requests core/ builds,
which tests/unit holds equal to the rendered templates; refusals included), every write the
producer, trigger, consumer, governor and CLI make, and what capacity mode uses:
TransactWriteItems with condition checks, string-set ADD and DELETE, DeleteItem, GetItem and
UpdateItem with every ReturnValues, the warden's Query of the sparse `leaving` index, and the
pre-queue's Scan (its items compared as a set: DynamoDB promises no order).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import client_check, sessions
from beekeeper.core.datamodel import (
    LEAVING_ATTRIBUTE,
    LEAVING_INDEX,
    LEAVING_VALUE,
    LEFT_AT_ATTRIBUTE,
    STATE_ADMITTED,
    STATE_INSIDE,
    prequeue_key,
)

TABLE = "beekeeper-diff"
Outcome = tuple[Any, ...]
# Added to every answer by some services; DynamoDB adds them only when the request asks.
_UNASKED = ("ResponseMetadata", "ConsumedCapacity", "ItemCollectionMetrics")


def normal(value: Any) -> Any:
    """Sets compared as sets (DynamoDB returns their members in no particular order)."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("SS", "NS", "BS"):
            ((kind, members),) = value.items()
            return {kind: sorted(members)}
        return {k: normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return value


def _as_set(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: json.dumps(item, sort_keys=True, default=repr))


def comparable(answer: dict[str, Any]) -> dict[str, Any]:
    """An answer without what only some services add unasked."""
    return {k: v for k, v in answer.items() if k not in _UNASKED}


class Side:
    """One side of a comparison: its clients by service name, and a transcript."""

    def __init__(
        self,
        clients: dict[str, Any],
        *,
        answer: Callable[[dict[str, Any]], dict[str, Any]] = comparable,
        adjust: Callable[[str, dict[str, Any], dict[str, Any]], None] | None = None,
    ) -> None:
        self.clients = clients
        self.transcript: list[Outcome] = []
        self.messages: list[str | None] = []  # each refusal's sentence (None for an answer)
        self._answer = answer
        self._adjust = adjust

    def call(self, service: str, operation: str, **request: Any) -> dict[str, Any]:
        try:
            answer = getattr(self.clients[service], operation)(**request)
        except ClientError as error:
            response = error.response
            extras = {
                "reasons": response.get("CancellationReasons"),
                "item": response.get("Item"),
            }
            self.transcript.append(
                (operation, "refused", response["Error"]["Code"], normal(extras))
            )
            self.messages.append(response["Error"].get("Message", ""))
            return {}
        if self._adjust is not None:
            self._adjust(operation, request, answer)
        shown = self._answer(answer)
        # DynamoDB promises no order for a Scan's items (nor where its page stops) or for
        # BatchGetItem's: items as sets.
        if operation == "scan":
            shown = {**shown, "Items": _as_set(shown.get("Items", []))}
            if "LastEvaluatedKey" in shown:
                shown["LastEvaluatedKey"] = "<given>"
        if operation == "batch_get_item":
            responses = shown.get("Responses", {})
            shown = {**shown, "Responses": {t: _as_set(items) for t, items in responses.items()}}
        self.transcript.append((operation, "answered", normal(shown)))
        self.messages.append(None)
        return answer

    def record(self, outcome: Outcome) -> None:
        """An outcome a scenario put together itself (a scan's pages, say)."""
        self.transcript.append(outcome)
        self.messages.append(None)


def assert_same_transcripts(ours: Side, theirs: Side, scenario: str) -> None:
    assert len(ours.transcript) == len(theirs.transcript), scenario
    for step, (mine, other) in enumerate(zip(ours.transcript, theirs.transcript, strict=True)):
        assert mine == other, f"step {step} of {scenario!r}: {theirs.messages[step]}"


# The sense of a refusal: the first sense whose phrases its sentence holds (DynamoDB's
# sentences name tokens and values in ways two implementations need not share, and DynamoDB
# Local words some of DynamoDB's refusals its own way); a sentence that holds none is
# compared whole.
SENSES: tuple[tuple[str, ...], ...] = (
    ("reserved keyword",),
    ("redundant parentheses",),
    ("Syntax error",),
    ("Invalid function name",),
    ("requires a document path",),
    ("first operand must be distinct",),
    ("Incorrect operand type",),
    ("BETWEEN operator requires same data type",),
    ("BETWEEN operator requires upper bound",),
    ("not defined",),
    ("unused in expressions",),
    ("Type mismatch for Index Key",),
    ("secondary index key is not supported",),
    ("update a secondary index key to a value that is not supported",),
    ("Size limit exceeded",),
    ("Item size to update has exceeded the maximum allowed size",),
    ("Item size has exceeded the maximum allowed size",),
    ("primary key values must be under 2048 bytes",),
    ("cannot be converted into a number",),
    ("Number overflow",),
    ("Number underflow",),
    ("38",),
    ("refers to an attribute that does not exist",),
    ("incorrect data type",),
    ("Cannot update attribute",),
    ("Two document paths overlap",),
    ("The conditional request failed",),
    ("Transaction cancelled",),
    ("Query key condition not supported",),
    ("Consistent reads are not supported on global secondary indexes",),
    ("Condition parameter type does not match schema type",),
    ("Invalid operator used in KeyConditionExpression",),
    ("no such table", "Requested resource not found", "non-existent table"),
    ("a key missing", "Missing the key", "required keys was not given a value"),
    (
        "not the key",
        "does not match the schema",
        "number of conditions on the keys is invalid",
        "Type mismatch for key",
    ),
    ("contains duplicates",),
    ("Return values set to invalid value",),
    ("set  may not be empty",),
)


def sense(message: str | None) -> str | None:
    if message is None:
        return None
    return next(
        (phrases[0] for phrases in SENSES if any(phrase in message for phrase in phrases)),
        message,
    )


def sensed(side: Side) -> list[tuple[Any, ...]]:
    """The transcript with each refusal's sentence, and its cancellation reasons', as sense."""
    out = []
    for outcome, message in zip(side.transcript, side.messages, strict=True):
        if outcome[1] == "refused" and outcome[3].get("reasons"):
            reasons = [
                {**reason, "Message": sense(reason.get("Message"))}
                for reason in outcome[3]["reasons"]
            ]
            outcome = (*outcome[:3], {**outcome[3], "reasons": reasons})
        out.append((*outcome, sense(message)))
    return out


def key(pk: str) -> dict[str, Any]:
    return {"pk": {"S": pk}}


def n(value: int | str) -> dict[str, str]:
    return {"N": str(value)}


# -- scenarios: each makes the same calls on a side ------------------------------------------


def templates_reads(side: Side) -> None:
    """The /polling and /client templates' requests, and what a bad one gets."""
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("v#a"), "expires_at": n(9)})
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("status#1"), "rate": n(60)})
    side.call(
        "dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("v#a"), key("status#1")]}}
    )
    side.call("dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("v#nobody")]}})
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#a"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#nobody"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#a"), ConsistentRead=True)
    side.call("dynamodb", "get_item", TableName="no-such-table", Key=key("v#a"))
    side.call("dynamodb", "batch_get_item", RequestItems={"no-such-table": {"Keys": [key("a")]}})
    side.call("dynamodb", "batch_get_item", RequestItems={TABLE: {"Keys": [key("a"), key("a")]}})
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key(""))
    side.call("dynamodb", "get_item", TableName=TABLE, Key={**key("a"), "other": n(1)})
    side.call(
        "dynamodb",
        "batch_get_item",
        RequestItems={TABLE: {"Keys": [key(f"k{i}") for i in range(101)]}},
    )
    side.call(
        "dynamodb", "get_item", TableName=TABLE, Key=key("v#a"), ProjectionExpression="expires_at"
    )
    # /client: a check, a redeem (once; the second's refusal carries the item as it was), on a
    # valid, an expired and a missing admission; capacity mode's session redeem.
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("v#b"), "expires_at": n(99)})
    for token_id in ("b", "a", "nobody"):
        for redeem in (False, True, True):
            side.call(
                "dynamodb",
                "update_item",
                **client_check.check_request(TABLE, token_id, now=50, redeem=redeem),
            )
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("v#c"), "expires_at": n(99), "state": {"S": "admitted"}, "ticket": {"S": "t"}},
    )
    for redeem in (False, True, True):
        side.call(
            "dynamodb",
            "update_item",
            **sessions.session_request(TABLE, "c", now=50, session_seconds=60, redeem=redeem),
        )


def counters_and_claims(side: Side) -> None:
    """The producer's counters, the trigger's claim, the consumer's counts and admissions."""
    for _ in range(3):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("arrivals#3"),
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": n(1)},
            ReturnValues="UPDATED_NEW",
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("quiet"),
        UpdateExpression="SET n = :next",
        ConditionExpression="attribute_not_exists(n) OR n < :next",
        ExpressionAttributeValues={":next": n(5)},
        ReturnValues="ALL_NEW",
    )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("quiet"),
        UpdateExpression="SET n = :next",
        ConditionExpression="attribute_not_exists(n) OR n < :next",
        ExpressionAttributeValues={":next": n(4)},
    )
    for _ in range(2):
        side.call(
            "dynamodb",
            "put_item",
            TableName=TABLE,
            Item={**key("minute#7"), "rate": n(60)},
            ConditionExpression="attribute_not_exists(pk)",
        )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={
            TABLE: [
                {"PutRequest": {"Item": {**key(f"v#{i}"), "ordinal": n(i), "ttl": n(99)}}}
                for i in range(25)
            ]
        },
    )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={
            TABLE: [{"PutRequest": {"Item": key("dup")}}, {"PutRequest": {"Item": key("dup")}}]
        },
    )
    side.call(
        "dynamodb",
        "batch_get_item",
        RequestItems={TABLE: {"Keys": [key("v#3"), key("v#24")], "ConsistentRead": True}},
    )
    side.call(
        "dynamodb",
        "batch_write_item",
        RequestItems={TABLE: [{"DeleteRequest": {"Key": key("v#3")}}]},
    )
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("v#3"))


def config_writes(side: Side) -> None:
    """`beekeeper on/off/rate`, the governor's conditional rate, the wake-up's claim."""
    values = {":now": n(100), ":one": n(1), ":deployed": n(60), ":enabled": {"BOOL": False}}
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("config"),
        UpdateExpression="SET updated_at = :now, enabled = :enabled, "
        "operator_rate = if_not_exists(operator_rate, :deployed), "
        "rate = if_not_exists(rate, :deployed) ADD version :one",
        ExpressionAttributeValues=values,
        ReturnValues="ALL_NEW",
    )
    for version in (1, 1, 7):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("config"),
            UpdateExpression="SET rate = :rate, updated_at = :now",
            ConditionExpression="version = :version",
            ExpressionAttributeValues={":rate": n(30), ":now": n(101), ":version": n(version)},
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("minute#9"),
        UpdateExpression="SET woken_at = :now",
        ConditionExpression="attribute_exists(pk) AND attribute_not_exists(woken_at)",
        ExpressionAttributeValues={":now": n(5)},
    )
    side.call("dynamodb", "put_item", TableName=TABLE, Item={**key("minute#9"), "consumers": n(0)})
    for _ in range(2):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("minute#9"),
            UpdateExpression="SET woken_at = :now",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(woken_at)",
            ExpressionAttributeValues={":now": n(5)},
            ReturnValues="UPDATED_OLD",
        )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("minute#9"),
        UpdateExpression="REMOVE woken_at",
        ReturnValues="UPDATED_OLD",
    )
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("governor"))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("config"))


def return_values(side: Side) -> None:
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("r"), "a": n(1), "b": {"S": "x"}, "c": {"BOOL": True}},
    )
    for returns in ("NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("r"),
            UpdateExpression="SET b = :b ADD a :half REMOVE c",
            ExpressionAttributeValues={":b": {"S": returns}, ":half": n(2)},
            ReturnValues=returns,
        )
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("r"), "z": n(1)},
        ReturnValues="ALL_OLD",
    )
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("r"), ReturnValues="ALL_OLD")
    side.call("dynamodb", "delete_item", TableName=TABLE, Key=key("r"), ReturnValues="ALL_OLD")
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("fresh"),
        UpdateExpression="SET a = :a",
        ExpressionAttributeValues={":a": n(1)},
        ReturnValues="UPDATED_OLD",
    )
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("fresh"),
        UpdateExpression="SET a = :a",
        ConditionExpression="a = :zero",
        ExpressionAttributeValues={":a": n(2), ":zero": n(0)},
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )
    side.call(
        "dynamodb",
        "delete_item",
        TableName=TABLE,
        Key=key("fresh"),
        ConditionExpression="attribute_not_exists(pk)",
        ReturnValuesOnConditionCheckFailure="ALL_OLD",
    )


def string_sets(side: Side) -> None:
    def update(expression: str, members: list[str], returns: str = "ALL_NEW") -> None:
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("lanes"),
            UpdateExpression=expression,
            ExpressionAttributeValues={":m": {"SS": members}},
            ReturnValues=returns,
        )

    update("ADD held :m", ["a", "b"])
    update("ADD held :m", ["b", "c"], "UPDATED_NEW")
    for most in (2, 4):
        side.call(
            "dynamodb",
            "update_item",
            TableName=TABLE,
            Key=key("lanes"),
            UpdateExpression="ADD held :m",
            ConditionExpression="contains(held, :one) OR size(held) < :most",
            ExpressionAttributeValues={":m": {"SS": ["q"]}, ":one": {"S": "q"}, ":most": n(most)},
            ReturnValues="ALL_NEW",
        )
    update("DELETE held :m", ["a", "x"], "UPDATED_OLD")
    update("DELETE held :m", ["b", "c", "q"])  # the last members: the attribute goes
    update("DELETE held :m", ["b"])  # from nothing: nothing happens
    update("ADD held :m", [])  # an empty set is refused
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("lanes"),
        UpdateExpression="ADD held :m",
        ExpressionAttributeValues={":m": {"S": "a"}},
    )


def transactions(side: Side) -> None:
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={**key("lease"), "held": {"SS": ["l1"]}, "n": n(1)},
    )

    def transact(*items: dict[str, Any]) -> None:
        side.call("dynamodb", "transact_write_items", TransactItems=list(items))

    check_free = {
        "ConditionCheck": {
            "TableName": TABLE,
            "Key": key("lease"),
            "ConditionExpression": "NOT contains(held, :lane)",
            "ExpressionAttributeValues": {":lane": {"S": "l2"}},
        }
    }
    take = {
        "Update": {
            "TableName": TABLE,
            "Key": key("slot#2"),
            "UpdateExpression": "SET lane = :lane ADD n :one",
            "ConditionExpression": "attribute_not_exists(lane)",
            "ExpressionAttributeValues": {":lane": {"S": "l2"}, ":one": n(1)},
        }
    }
    transact(check_free, take)  # succeeds
    transact(check_free, take)  # the slot is taken: cancelled, the first reason "None"
    transact(
        {
            "Put": {
                "TableName": TABLE,
                "Item": {**key("p"), "v": n(1)},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {
            "Delete": {
                "TableName": TABLE,
                "Key": key("lease"),
                "ConditionExpression": "n = :two",
                "ExpressionAttributeValues": {":two": n(2)},
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        },
    )
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("p"))  # not written: all or nothing
    transact(
        {"Put": {"TableName": TABLE, "Item": {**key("p"), "v": n(1)}}},
        {
            "Update": {
                "TableName": TABLE,
                "Key": key("lease"),
                "UpdateExpression": "DELETE held :l",
                "ExpressionAttributeValues": {":l": {"SS": ["l1"]}},
            }
        },
        {"Delete": {"TableName": TABLE, "Key": key("slot#2")}},
    )
    for pk in ("p", "lease", "slot#2"):
        side.call("dynamodb", "get_item", TableName=TABLE, Key=key(pk))
    transact(
        take,
        {
            "ConditionCheck": {
                "TableName": TABLE,
                "Key": key("slot#2"),
                "ConditionExpression": "attribute_exists(pk)",
            }
        },
    )


def refused_expressions(side: Side) -> None:
    side.call(
        "dynamodb", "put_item", TableName=TABLE, Item={**key("e"), "s": {"S": "text"}, "n": n(1)}
    )

    def update(expression: str, values: dict[str, Any] | None = None, **more: Any) -> None:
        request: dict[str, Any] = {
            "TableName": TABLE,
            "Key": key("e"),
            "UpdateExpression": expression,
        }
        if values is not None:
            request["ExpressionAttributeValues"] = values
        side.call("dynamodb", "update_item", **request, **more)

    update("ADD s :one", {":one": n(1)})  # ADD to a string
    update("SET a = missing + :one", {":one": n(1)})  # reads an attribute that is not there
    update("SET a = s + :one", {":one": n(1)})  # arithmetic on a string
    update("SET pk = :v", {":v": {"S": "x"}})  # the key
    update("SET n = :one", {":one": n(1), ":unused": n(2)})  # a value not used
    update("SET n = :nope", {":one": n(1)})  # a value not given
    update("SET n = :one, n = :two", {":one": n(1), ":two": n(2)})  # overlapping paths
    update("SET n = :one", {":one": n(1)}, ReturnValues="ALL_AND_MORE")
    side.call("dynamodb", "put_item", TableName=TABLE, Item={"other": {"S": "x"}})
    side.call("dynamodb", "put_item", TableName=TABLE, Item=key(""))
    side.call("dynamodb", "get_item", TableName=TABLE, Key=key("e"))


def leaving_index(side: Side) -> None:
    """The warden's Query: only items with both index keys, oldest `left_at` first (numbers
    by value, not by text), the keys only, a page of `Limit` with where it stopped."""
    leavers = {"v#late": "1000", "v#early": "95", "v#middle": "200.5", "v#first": "7"}
    for pk, left_at in leavers.items():
        item = {
            "pk": {"S": pk},
            LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE},
            LEFT_AT_ATTRIBUTE: n(left_at),
            "state": {"S": "left"},
        }
        side.call("dynamodb", "put_item", TableName=TABLE, Item=item)
    # Not in the index: no `leaving`, or no `left_at`.
    side.call("dynamodb", "put_item", TableName=TABLE, Item={"pk": {"S": "v#staying"}})
    side.call(
        "dynamodb",
        "put_item",
        TableName=TABLE,
        Item={"pk": {"S": "v#half"}, LEAVING_ATTRIBUTE: {"S": LEAVING_VALUE}},
    )
    query = {
        "TableName": TABLE,
        "IndexName": LEAVING_INDEX,
        "KeyConditionExpression": "#leaving = :yes",
        "ExpressionAttributeNames": {"#leaving": LEAVING_ATTRIBUTE},
        "ExpressionAttributeValues": {":yes": {"S": LEAVING_VALUE}},
    }
    side.call("dynamodb", "query", **query)
    side.call("dynamodb", "query", **query, Limit=2)
    side.call("dynamodb", "query", **query, ScanIndexForward=False, Limit=1)
    # Leaving the index: the attribute removed.
    side.call(
        "dynamodb",
        "update_item",
        TableName=TABLE,
        Key=key("v#first"),
        UpdateExpression=f"REMOVE {LEAVING_ATTRIBUTE}",
    )
    side.call("dynamodb", "query", **query)


def leaving(side: Side) -> None:
    """Capacity mode's /leave: a visitor inside, one admitted, one waiting, one who left
    already; and a session renewed after leaving (refused, with the item)."""
    for token_id, state in (("in", STATE_INSIDE), ("adm", STATE_ADMITTED)):
        side.call(
            "dynamodb",
            "put_item",
            TableName=TABLE,
            Item={**key(f"v#{token_id}"), "state": {"S": state}, "expires_at": n(99)},
        )
    for token_id in ("in", "adm", "waiting", "in"):
        side.call("dynamodb", "update_item", **sessions.leave_request(TABLE, token_id, now=50))
        side.call("dynamodb", "get_item", TableName=TABLE, Key=key(f"v#{token_id}"))
    side.call(
        "dynamodb",
        "update_item",
        **sessions.session_request(TABLE, "in", now=51, session_seconds=60, redeem=False),
    )


def prequeue_scan(side: Side) -> None:
    """The pre-queue's read: every `p#` item, consistently, among the table's other items."""
    for number in range(30):
        side.call(
            "dynamodb",
            "put_item",
            TableName=TABLE,
            Item={**key(prequeue_key(f"t{number}")), "ordinal": n(number)},
        )
        side.call("dynamodb", "put_item", TableName=TABLE, Item=key(f"v#t{number}"))
    request = {
        "TableName": TABLE,
        "FilterExpression": "begins_with(pk, :prefix)",
        "ExpressionAttributeValues": {":prefix": {"S": prequeue_key("")}},
        "ConsistentRead": True,
    }
    side.call("dynamodb", "scan", **request)
    side.call("dynamodb", "scan", **request, Select="COUNT")
    side.call("dynamodb", "scan", TableName=TABLE, ProjectionExpression="pk")


SCENARIOS: dict[str, Callable[[Side], None]] = {
    "capacity mode's leave": leaving,
    "the pre-queue's scan": prequeue_scan,
    "the warden's leaving index": leaving_index,
    "the templates' reads": templates_reads,
    "counters and claims": counters_and_claims,
    "config writes": config_writes,
    "return values": return_values,
    "string sets": string_sets,
    "transactions": transactions,
    "refused expressions": refused_expressions,
}
