"""A local room's line, kept across restarts: every change of its store, appended to a file.

The room's store lives in memory; this journal (`local/<name>.state.jsonl` under the config
directory, readable by its user alone: it holds the room's private ticket keys) gets one JSON
line per change as it happens: a table request's writes (an item written or deleted; every
item a transaction or a batch wrote, together in one line), a message sent, a message deleted
or dead-lettered, the ticket keys' secret written, the metrics the room's functions wrote to
its CloudWatch. Each line is flushed to the operating system at
once, so a room that is killed (Ctrl-C, SIGKILL, a closed terminal) loses nothing it had
answered; only a crash of the machine itself can cut the last lines off. A line cut off by a
kill can only be the last one and is left out whole, so a transaction (an admission with its
place, a release, a leaver passed over) comes back whole or not at all: the store tells the
journal when a request has applied all its writes (`DynamoDb.request_observers`), and the
journal writes them as one line then. At the next start the journal is replayed, then
rewritten compactly (atomically) and appended to again.

What a restart keeps: the table (config, counters, minute claims, every admitted visitor's
item, so /client keeps answering true, and the published ticket keys), the ticket keys'
secret (so tickets signed before the restart still verify against /jwks.json after it and the
same keys go on signing), the join secret (so the tokens in line still carry ids the room
signed, and can leave), every message not yet deleted, in order, and the room's metrics (so
`beekeeper report` after a restart shows the minutes before it, as CloudWatch keeps a deployed
room's whatever its functions do). Messages
a consumer held in flight are visible again at once (their consumers ended with the process);
one already admitted is recognised by the consumer's consistent read and deleted, as a
duplicate delivery is. Receive counts start again from zero.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from beekeeper.core.config_dir import write_atomically
from beekeeper.core.words import count
from beekeeper.local.emulator import Emulator
from beekeeper.store.cloudwatch import Datum
from beekeeper.store.expressions import Item

log = logging.getLogger("beekeeper.local")

# Format 2 adds the line of one request's writes ({"w": [...]}), format 3 the metrics'
# ({"m": [...]}); a journal of an earlier format is read as before.
FORMAT = 3
READABLE_FORMATS = (1, 2, 3)
# The most metric values one line of the compacted journal holds.
METRICS_PER_LINE = 500


class StateUnreadable(Exception):
    """The saved line can not be replayed; the message says why."""


@dataclass(frozen=True)
class Restored:
    """What a start found: whether a line was saved, what of it came back, or why not."""

    found: bool
    items: int = 0
    messages: int = 0
    lost_reason: str | None = None  # set when a saved line could not be read

    def sentence(self, room: str, path: Path) -> str | None:
        if self.lost_reason is not None:
            return (
                f"The saved line of local room {room!r} could not be read ({self.lost_reason}; "
                f"kept as {path.name}.unreadable): the room starts with an empty line, and "
                "visitors from before get a new place at the marketing link."
            )
        if self.found:
            return (
                f"Local room {room!r} continues its saved line: "
                f"{count(self.messages, 'visitor')} queued, {count(self.items, 'item')} in its "
                "table."
            )
        return None


class SavedState:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None
        self._lock = threading.Lock()
        self._run = 0
        # The current table request's writes, kept until the store says it is done: the store
        # answers one table request at a time, so one list serves every thread.
        self._request: list[dict[str, Any]] = []

    # -- start --------------------------------------------------------------------------

    def restore(self, emulator: Emulator, *, discard: bool = False) -> Restored:
        """Replay the saved line into the emulator's (empty) store, then keep saving."""
        restored = Restored(found=False)
        if discard:
            self.path.unlink(missing_ok=True)
        elif self.path.exists():
            try:
                saved = _replay(self.path)
            except StateUnreadable as error:
                self.path.replace(self.path.with_name(self.path.name + ".unreadable"))
                restored = Restored(found=True, lost_reason=str(error))
            else:
                self._run = saved.run
                restored = self._load(emulator, saved)
        self._run += 1
        self._compact(emulator)
        self._attach(emulator)
        return restored

    def _load(self, emulator: Emulator, saved: Saved) -> Restored:
        items = messages = 0
        for table_name, table in saved.tables.items():
            if table_name in emulator.dynamodb.tables:
                emulator.dynamodb.load(table_name, table.items())
                items += len(table)
        for secret_name, secret in saved.secrets.items():
            if secret_name in emulator.secretsmanager.secrets:
                emulator.secretsmanager.load(secret_name, secret)
        emulator.cloudwatch.load(saved.metrics)
        by_name = {queue.name: queue for queue in emulator.sqs.queues.values()}
        for queue_name, bodies in saved.queues.items():
            queue = by_name.get(queue_name)
            if queue is None:
                continue
            queue.restore(bodies.values())
            if queue.dead_letter is not None:  # the visitors' queue, not its dead letters
                messages += len(bodies)
        return Restored(found=True, items=items, messages=messages)

    def _compact(self, emulator: Emulator) -> None:
        lines = [json.dumps({"format": FORMAT, "run": self._run})]
        for table_name, items in emulator.dynamodb.snapshot().items():
            lines += [json.dumps({"t": table_name, "k": pk, "i": i}) for pk, i in items.items()]
        for secret_name, secret in emulator.secretsmanager.snapshot().items():
            lines.append(json.dumps({"s": secret_name, "v": secret}))
        for queue in emulator.sqs.queues.values():
            lines += [
                json.dumps({"q": queue.name, "n": f"{self._run}.{index}", "b": body})
                for index, body in queue.waiting_bodies()
            ]
        data = emulator.cloudwatch.snapshot()
        lines += [
            json.dumps({"m": [_metric(d) for d in data[start : start + METRICS_PER_LINE]]})
            for start in range(0, len(data), METRICS_PER_LINE)
        ]
        write_atomically(self.path, "\n".join(lines) + "\n", private=True)

    def _attach(self, emulator: Emulator) -> None:
        self._file = self.path.open("a", encoding="utf-8")
        emulator.dynamodb.observers.append(self._item_written)
        emulator.dynamodb.request_observers.append(self._request_done)
        emulator.secretsmanager.observers.append(self._secret_written)
        emulator.cloudwatch.observers.append(self._metrics_written)
        for queue in emulator.sqs.queues.values():
            queue.observers.append(self._message_changed)

    # -- while running ------------------------------------------------------------------

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record) + "\n"
        with self._lock:
            if self._file is not None:
                self._file.write(line)
                self._file.flush()

    def _item_written(self, table: str, pk: str, item: Item | None, _whole: bool) -> None:
        self._request.append({"t": table, "k": pk, "i": item})

    def _request_done(self) -> None:
        """One line for everything the request wrote: a single item as before, several (a
        transaction, a batch) in one line, so that a kill keeps all of them or none."""
        writes, self._request = self._request, []
        if len(writes) == 1:
            self._append(writes[0])
        elif writes:
            self._append({"w": writes})

    def _secret_written(self, name: str, secret: dict[str, Any] | None) -> None:
        self._append({"s": name, "v": secret})

    def _metrics_written(self, data: list[Datum]) -> None:
        if data:
            self._append({"m": [_metric(d) for d in data]})

    def _message_changed(self, queue: str, event: str, index: int, body: str | None) -> None:
        record: dict[str, Any] = {"q": queue, "n": f"{self._run}.{index}"}
        if event == "sent":
            record["b"] = body
        self._append(record)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class Saved:
    """What the journal holds, replayed: the last state of each table, queue and secret."""

    run: int = 0
    tables: dict[str, dict[str, Item]] = field(default_factory=dict)
    queues: dict[str, dict[str, str]] = field(default_factory=dict)
    secrets: dict[str, dict[str, Any]] = field(default_factory=dict)
    metrics: list[Datum] = field(default_factory=list)


def _replay(path: Path) -> Saved:
    saved = Saved()
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as error:
        raise StateUnreadable(f"the file can not be read: {error}") from error
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
            if number == 1:
                if record.get("format") not in READABLE_FORMATS:
                    raise StateUnreadable(f"it is not a saved line of format {FORMAT}")
                saved.run = int(record["run"])
            elif "t" in record:
                _apply_item(saved, record)
            elif "w" in record:
                writes = record["w"]
                if not isinstance(writes, list) or not all("t" in w for w in writes):
                    raise TypeError("not a request's writes")
                # Checked whole before any of it is applied: all of the request, or none.
                for write in [{**w, "i": _item(w["i"])} for w in writes]:
                    _apply_item(saved, write)
            elif "m" in record:
                saved.metrics += [_datum(saved_metric) for saved_metric in record["m"]]
            elif "s" in record:
                if record["v"] is None:
                    saved.secrets.pop(str(record["s"]), None)
                else:
                    saved.secrets[str(record["s"])] = _secret(record["v"])
            else:
                bodies = saved.queues.setdefault(str(record["q"]), {})
                if "b" in record:
                    bodies[str(record["n"])] = str(record["b"])
                else:
                    bodies.pop(str(record["n"]), None)
        except StateUnreadable:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            if number == len(lines) and number > 1:
                # The last change was being written when the room was killed: it was never
                # answered, so nothing anyone was told is lost with it.
                log.warning("the saved line's last change was cut off; it is left out")
                break
            raise StateUnreadable(f"line {number} is not a saved change") from error
    return saved


def _item(saved: object) -> Item | None:
    if saved is None:
        return None
    if not isinstance(saved, dict):
        raise TypeError("not a saved item")
    return dict(saved)


def _apply_item(saved: Saved, record: dict[str, Any]) -> None:
    table = saved.tables.setdefault(str(record["t"]), {})
    item = _item(record["i"])
    if item is None:
        table.pop(str(record["k"]), None)
    else:
        table[str(record["k"])] = item


def _metric(datum: Datum) -> list[Any]:
    return [
        datum.namespace,
        datum.name,
        [list(pair) for pair in datum.dimensions],
        datum.at,
        datum.value,
        datum.count,
    ]


def _datum(saved: object) -> Datum:
    """A saved metric value, checked as far as reading it back needs."""
    if not isinstance(saved, list) or len(saved) != 6:
        raise TypeError("not a saved metric value")
    namespace, name, dimensions, at, value, count = saved
    if not isinstance(namespace, str) or not isinstance(name, str):
        raise TypeError("not a saved metric's name")
    pairs = tuple((str(n), str(v)) for n, v in dimensions)
    return Datum(namespace, name, pairs, float(at), float(value), float(count))


def _secret(saved: object) -> dict[str, Any]:
    """A saved secret, checked as far as loading it needs (a bad one is an unreadable line)."""
    if not isinstance(saved, dict) or not isinstance(saved["versions"], list):
        raise TypeError("not a saved secret")
    for version in saved["versions"]:
        if not isinstance(version["value"], dict) or not isinstance(version["stages"], list):
            raise TypeError("not a saved secret version")
        float(version["created"])
    return saved
