"""Benchmark: every DynamoDB call a pytest run makes to the store, replayed against DynamoDB
Local and a fresh store, answer by answer.

    .venv/bin/python bench/dynamodb_replay.py [--max-calls N] [--show N] -- PYTEST_ARGS...

for example `bench/dynamodb_replay.py -- tests/functional/store` (never the whole suite on a
shared machine: pick the suites). It

1. runs pytest with this file as a plugin: every call a store (`store.dynamodb.DynamoDb`, in the
   simulator, local mode or a test) answers, in the order it answered them, and every table it
   created, are written to a record, one JSON line each;
2. starts DynamoDB Local (tests/support/dynamodb_local.py) and, store by store, creates the
   same tables in it (renamed: its table names need 3 characters) and in a fresh store, and
   sends each recorded call to both through boto3 (the first `--max-calls` of each store: the
   simulator's runs make hundreds of thousands);
3. compares the two answers as the differential tests do (tests/support/store_scenarios.py:
   sets as sets, a Scan's items in no order, a refusal by its code and the sense of its
   sentence) and prints the calls recorded, replayed and agreed, and each kind of
   difference with its first examples. Answers that differ only in a number's text
   (DynamoDB Local keeps the numbers an update writes as written, `2.0`; DynamoDB trims them)
   are counted apart.

Opt-in: nothing in scripts/check or CI runs it.
"""

from __future__ import annotations

import argparse
import atexit
import base64
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RECORD = "BEEKEEPER_DYNAMODB_RECORD"
RECORD_MAX = "BEEKEEPER_DYNAMODB_RECORD_MAX"  # calls recorded per store; the rest are counted


# -- 1. recording (this file as a pytest plugin) ----------------------------------------------


def pytest_configure(config: Any) -> None:
    """Record every store's tables and calls into the file BEEKEEPER_DYNAMODB_RECORD names."""
    path = os.environ.get(RECORD)
    if path:
        _record_into(Path(path), int(os.environ.get(RECORD_MAX, "0")) or None)


def _record_into(path: Path, most: int | None) -> None:
    from beekeeper.store.dynamodb import DynamoDb

    output = path.open("a", encoding="utf-8")
    lock = threading.Lock()
    numbers = itertools.count(1)
    calls: Counter[int] = Counter()
    create_table, run = DynamoDb.create_table, DynamoDb._run
    atexit.register(lambda: _finish(output, calls))

    def number(store: Any) -> int:
        if not hasattr(store, "_replay_number"):
            store._replay_number = next(numbers)
        return int(store._replay_number)

    def write(line: dict[str, Any]) -> None:
        with lock:
            output.write(json.dumps(line, default=repr) + "\n")

    def recording_create_table(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        table = create_table(self, name, *args, **kwargs)
        indexes = [
            {"name": i.name, "keys": [[k.name, k.kind] for k in i.keys]}
            for i in table.indexes.values()
        ]
        write(
            {
                "store": number(self),
                "table": {
                    "name": name,
                    "key": [table.key_name, table.key_type],
                    "indexes": indexes,
                },
            }
        )
        return table

    def recording_run(self: Any, answer: Any, request: dict[str, Any]) -> Any:
        store = number(self)
        calls[store] += 1
        if most is None or calls[store] <= most:
            action = next(name for name, method in self._actions.items() if method == answer)
            write({"store": store, "action": action, "request": request})
        return run(self, answer, request)

    DynamoDb.create_table = recording_create_table  # type: ignore[method-assign]
    DynamoDb._run = recording_run  # type: ignore[method-assign]


def _finish(output: Any, calls: Counter[int]) -> None:
    """Each store's count of calls, the ones not recorded included."""
    for store, count in calls.items():
        output.write(json.dumps({"store": store, "calls": count}) + "\n")
    output.close()


# -- 2. replaying ------------------------------------------------------------------------------


def _stores(record: Path) -> dict[int, list[dict[str, Any]]]:
    stores: dict[int, list[dict[str, Any]]] = {}
    with record.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            stores.setdefault(event["store"], []).append(event)
    return stores


def _made(stores: dict[int, list[dict[str, Any]]]) -> int:
    """The calls the run made, recorded or not."""
    return sum(e["calls"] for events in stores.values() for e in events if "calls" in e)


def _definition(table: dict[str, Any], name: str) -> dict[str, Any]:
    """CreateTable's parameters for a recorded table."""
    key_name, key_type = table["key"]
    types = {key_name: key_type}
    indexes = []
    for index in table["indexes"]:
        schema = []
        for (attribute, kind), role in zip(index["keys"], ("HASH", "RANGE"), strict=False):
            types[attribute] = kind
            schema.append({"AttributeName": attribute, "KeyType": role})
        indexes.append(
            {
                "IndexName": index["name"],
                "KeySchema": schema,
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            }
        )
    definition: dict[str, Any] = {
        "TableName": name,
        "KeySchema": [{"AttributeName": key_name, "KeyType": "HASH"}],
        "AttributeDefinitions": [
            {"AttributeName": a, "AttributeType": t} for a, t in types.items()
        ],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if indexes:
        definition["GlobalSecondaryIndexes"] = indexes
    return definition


def _renamed(request: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The request with its tables' names replaced (TableName, RequestItems, TransactItems)."""
    out = dict(request)
    if isinstance(out.get("TableName"), str):
        out["TableName"] = names.get(out["TableName"], out["TableName"])
    if isinstance(out.get("RequestItems"), dict):
        out["RequestItems"] = {names.get(k, k): v for k, v in out["RequestItems"].items()}
    if isinstance(out.get("TransactItems"), list):
        out["TransactItems"] = [
            {kind: _renamed(body, names) for kind, body in operation.items()}
            if isinstance(operation, dict)
            else operation
            for operation in out["TransactItems"]
        ]
    return out


def _as_boto3(value: Any) -> Any:
    """Wire JSON as boto3's arguments: binaries as bytes (botocore encodes them again)."""
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("B"), str):
            return {"B": base64.b64decode(value["B"])}
        if len(value) == 1 and isinstance(value.get("BS"), list):
            return {"BS": [base64.b64decode(m) for m in value["BS"]]}
        return {k: _as_boto3(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_boto3(v) for v in value]
    return value


def _numbers_by_value(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("N"), str):
            return {"N": Decimal(value["N"]).normalize()}
        return {k: _numbers_by_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_numbers_by_value(v) for v in value]
    return value


_TABLE_NAME = re.compile(r"[A-Za-z0-9_.-]{3,255}")


def _local_name(name: str) -> str:
    """The name DynamoDB Local takes for a table (3 to 255 of its characters)."""
    return name if _TABLE_NAME.fullmatch(name) else f"replayed-{name.encode().hex()}"


def _renamed_back(value: Any, names: dict[str, str]) -> Any:
    """DynamoDB Local's answer with the tables' own names (BatchGetItem's Responses...)."""
    back = {local: own for own, local in names.items() if local != own}
    if not back:
        return value
    if isinstance(value, dict):
        return {back.get(k, k): _renamed_back(v, names) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_renamed_back(v, names) for v in value)
    return value


def _page_shape(outcome: tuple[Any, ...]) -> tuple[Any, ...]:
    """A Scan page that stopped early: its counts, or () for any other outcome."""
    if outcome[1] != "answered" or "LastEvaluatedKey" not in outcome[2]:
        return ()
    return (outcome[2].get("Count"), outcome[2].get("ScannedCount"))


def _items_as_set(outcome: tuple[Any, ...]) -> tuple[Any, ...]:
    if outcome[1] != "answered":
        return outcome
    items = sorted(outcome[2].get("Items", []), key=lambda i: json.dumps(i, sort_keys=True))
    return (*outcome[:2], {**outcome[2], "Items": items}, *outcome[3:])


def _kind_of_difference(
    event: dict[str, Any], mine: tuple[Any, ...], other: tuple[Any, ...]
) -> str:
    action, request = event["action"], event["request"]
    if action == "Scan" and "ExclusiveStartKey" in request:
        return "a Scan page after the store's own LastEvaluatedKey (each reads in its own order)"
    if action == "Scan" and _page_shape(mine) == _page_shape(other) != ():
        return "agreed as a Scan page (the same counts; which items depends on each one's order)"
    if action == "Query" and _items_as_set(mine) == _items_as_set(other):
        return "a Query's items of one range key in another order (DynamoDB promises none)"
    if _numbers_by_value(mine) == _numbers_by_value(other):
        return "a number's text only (DynamoDB Local keeps an update's numbers as written)"
    texts = " ".join(str(request.get(f, "")) for f in ("UpdateExpression", "ConditionExpression"))
    if other[1] == "answered" and re.search(r"\b(?i:convert|size)\b(?!\()", texts):
        return "CONVERT or SIZE unescaped (DynamoDB Local takes them; the Guide reserves them)"
    return f"differed: {action}"


def replay(stores: dict[int, list[dict[str, Any]]], show: int) -> Counter[str]:
    sys.path.insert(0, str(ROOT))
    from beekeeper.local.store_transport import StoreTransport
    from beekeeper.store.client import method_name
    from beekeeper.store.dynamodb import DynamoDb, Index
    from beekeeper.store.dynamodb_validation import key_attribute
    from beekeeper.store.sqs import Sqs
    from beekeeper.store.timing import RealTime
    from beekeeper.store.wire import JsonProtocol
    from tests.support.dynamodb_local import find_installation, start
    from tests.support.store_scenarios import Side, sensed

    found = find_installation()
    if isinstance(found, str):
        raise SystemExit(found)
    outcomes: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="dynamodb-replay-") as log_dir:
        local = start(found, Path(log_dir))
        try:
            client = local.client()
            for events in stores.values():
                timing = RealTime()
                fresh = DynamoDb(timing)
                transport = StoreTransport(JsonProtocol(fresh, Sqs(timing)), "http://127.0.0.1:9/r")
                theirs, ours = (
                    Side({"dynamodb": client}),
                    Side({"dynamodb": transport.client("dynamodb")}),
                )
                names: dict[str, str] = {}
                for event in events:
                    if "calls" in event:
                        continue
                    if "table" in event:
                        table = event["table"]
                        names[table["name"]] = _local_name(table["name"])
                        indexes = [
                            Index(
                                index["name"],
                                *(
                                    key_attribute(role, attribute, kind)
                                    for (attribute, kind), role in zip(
                                        index["keys"], ("HASH", "RANGE"), strict=False
                                    )
                                ),
                            )
                            for index in table["indexes"]
                        ]
                        fresh.create_table(table["name"], *table["key"], indexes)
                        client.create_table(**_definition(table, names[table["name"]]))
                        continue
                    operation = method_name(event["action"])
                    request = _as_boto3(event["request"])
                    theirs.call("dynamodb", operation, **_renamed(request, names))
                    ours.call("dynamodb", operation, **request)
                    mine = sensed(ours)[-1]
                    other = _renamed_back(sensed(theirs)[-1], names)
                    if mine == other:
                        outcomes["agreed"] += 1
                        continue
                    kind = _kind_of_difference(event, mine, other)
                    outcomes[kind] += 1
                    shown = examples.setdefault(kind, [])
                    if len(shown) < show:
                        shown.append(
                            f"    request {json.dumps(event['request'])[:300]}\n"
                            f"      store          {mine!r:.300}\n"
                            f"      DynamoDB Local {other!r:.300}"
                        )
                for name in names.values():
                    client.delete_table(TableName=name)
        finally:
            local.stop()
    for kind, lines in examples.items():
        print(f"{kind}, for example:")
        print("\n".join(lines))
    return outcomes


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-calls", type=int, default=20_000, help="per store (default 20000)")
    parser.add_argument("--show", type=int, default=3, help="examples of each difference")
    parser.add_argument("pytest_args", nargs="*", help="after --: what pytest runs")
    options = parser.parse_args(list(argv) if argv is not None else None)
    with tempfile.TemporaryDirectory(prefix="dynamodb-record-") as directory:
        record = Path(directory) / "calls.jsonl"
        record.touch()
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "dynamodb_replay", *options.pytest_args],
            cwd=ROOT,
            env={
                **os.environ,
                RECORD: str(record),
                RECORD_MAX: str(options.max_calls),
                "PYTHONPATH": str(ROOT / "bench"),
            },
            check=False,
        )
        recorded = time.perf_counter() - started
        stores = _stores(record)
        total = sum(1 for events in stores.values() for event in events if "action" in event)
        print(
            f"\nthe run made {_made(stores):,} DynamoDB calls to {len(stores):,} stores in "
            f"{recorded:.0f} s; recorded {total:,} (at most {options.max_calls:,} a store)"
        )
        started = time.perf_counter()
        outcomes = replay(stores, options.show)
        took = time.perf_counter() - started
        print(f"replayed against DynamoDB Local and a fresh store in {took:.0f} s:")
        for kind, count in outcomes.most_common():
            print(f"  {kind}: {count:,}")


if __name__ == "__main__":
    main()
