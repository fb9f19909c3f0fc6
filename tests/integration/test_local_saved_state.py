"""A local room's line across restarts: what is kept (the ticket keys too), what a killed room
loses (nothing it had answered), and a saved line that can not be read, said in one sentence."""

from __future__ import annotations

import json
import logging
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest

from beekeeper.apigateway.room import HttpRequest, run_integration
from beekeeper.cli.room_metrics import MetricReader, room_query
from beekeeper.core import telemetry
from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import Token
from beekeeper.core.headers import browser_origin
from beekeeper.core.join_work import JoinKeys
from beekeeper.core.local_room import LOCAL_REGION
from beekeeper.core.names import ResourceNames
from beekeeper.core.routes import JWKS
from beekeeper.local.emulator import Emulator
from beekeeper.local.saved_state import FORMAT, METRICS_PER_LINE, Restored, SavedState
from beekeeper.room.ticket_keys import TicketKeyStore
from beekeeper.room.tickets import KeyRing, TicketIssuer, secret_reader
from tests.support.sample_room import sample_room

ROOM = "saved"
NAMES = ResourceNames(ROOM)
ISSUER = "http://127.0.0.1:8080"


@pytest.fixture()
def started() -> Iterator[list[Emulator]]:
    emulators: list[Emulator] = []
    yield emulators
    for emulator in emulators:
        emulator.stop()


def run(started: list[Emulator], path: Path, *, discard: bool = False) -> tuple[Emulator, Restored]:
    """A room's start: a new emulator (an empty store), its line restored from `path`."""
    emulator = Emulator()
    emulator.start()
    started.append(emulator)
    emulator.create_room_resources(ROOM)
    restored = SavedState(path).restore(emulator, discard=discard)
    return emulator, restored


def queue_bodies(emulator: Emulator) -> list[str]:
    (queue,) = [q for q in emulator.sqs.queues.values() if q.name == NAMES.queue]
    return [body for _, body in queue.waiting_bodies()]


def test_the_line_and_the_admitted_survive_a_kill(tmp_path: Path, started: list[Emulator]) -> None:
    path = tmp_path / "saved.state.jsonl"
    first, restored = run(started, path)
    assert restored.found is False
    dynamodb, sqs = first.client("dynamodb"), first.client("sqs")
    queue_url = next(q.url for q in first.sqs.queues.values() if q.name == NAMES.queue)
    for ordinal in range(1, 6):
        sqs.send_message(QueueUrl=queue_url, MessageBody=f"token{ordinal}.{ordinal}")
    # Visitor 1 is admitted: written, then their message deleted, as the consumer does.
    (message,) = sqs.receive_message(QueueUrl=queue_url)["Messages"]
    dynamodb.put_item(
        TableName=NAMES.table, Item={"pk": {"S": "v#token1"}, "expires_at": {"N": "9"}}
    )
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
    # Visitor 2 was being admitted (received, in flight) when the room was killed.
    sqs.receive_message(QueueUrl=queue_url)
    dynamodb.update_item(
        TableName=NAMES.table,
        Key={"pk": {"S": "admitted"}},
        UpdateExpression="ADD n :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
    )
    # Killed: no stop, no clean-up. The next start replays the file.
    second, restored = run(started, path)
    assert restored.sentence(ROOM, path) == (
        f"Local room {ROOM!r} continues its saved line: 4 visitors queued, 2 items in its table."
    )
    assert queue_bodies(second) == [f"token{i}.{i}" for i in range(2, 6)]
    table = second.dynamodb.tables[NAMES.table].items
    assert table["v#token1"] == {"pk": {"S": "v#token1"}, "expires_at": {"N": "9"}}
    assert table["admitted"]["n"] == {"N": "1"}
    # A third start after a clean run of the second keeps the same line.
    third, _ = run(started, path)
    assert queue_bodies(third) == queue_bodies(second)


def test_a_change_cut_off_by_the_kill_is_left_out(tmp_path: Path, started: list[Emulator]) -> None:
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    queue_url = next(q.url for q in first.sqs.queues.values() if q.name == NAMES.queue)
    first.client("sqs").send_message(QueueUrl=queue_url, MessageBody="kept.1")
    with path.open("a", encoding="utf-8") as journal:
        journal.write('{"q": "beekeeper-saved-visitors", "n": "1.9", "b": "half')
    second, restored = run(started, path)
    assert restored.lost_reason is None
    assert queue_bodies(second) == ["kept.1"]


def test_an_unreadable_line_is_said_in_one_sentence_and_kept_aside(
    tmp_path: Path, started: list[Emulator]
) -> None:
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    queue_url = next(q.url for q in first.sqs.queues.values() if q.name == NAMES.queue)
    for body in ("a.1", "b.2"):
        first.client("sqs").send_message(QueueUrl=queue_url, MessageBody=body)
    lines = path.read_text().splitlines()
    lines[1] = "this is not a saved change"
    path.write_text("\n".join(lines) + "\n")
    second, restored = run(started, path)
    sentence = restored.sentence(ROOM, path)
    assert sentence is not None and "\n" not in sentence
    assert sentence.startswith(f"The saved line of local room {ROOM!r} could not be read (line 2")
    assert "visitors from before get a new place at the marketing link" in sentence
    assert queue_bodies(second) == []
    assert (tmp_path / "saved.state.jsonl.unreadable").exists()


def test_a_new_line_forgets_the_saved_one(tmp_path: Path, started: list[Emulator]) -> None:
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    queue_url = next(q.url for q in first.sqs.queues.values() if q.name == NAMES.queue)
    first.client("sqs").send_message(QueueUrl=queue_url, MessageBody="old.1")
    second, restored = run(started, path, discard=True)
    assert restored.found is False
    assert queue_bodies(second) == []


def key_store(emulator: Emulator) -> TicketKeyStore:
    return TicketKeyStore(
        secretsmanager=emulator.client("secretsmanager"),
        secret_id=emulator.secretsmanager.secrets[NAMES.local_ticket_keys_secret].arn,
        dynamodb=emulator.client("dynamodb"),
        table=NAMES.table,
        clock=time.time,
    )


def jwks(emulator: Emulator) -> dict[str, Any]:
    """GET /jwks.json as the local gateway answers it, from the room's store."""
    answer = run_integration(
        JWKS.name,
        HttpRequest("GET", "/jwks.json", {}, {}),
        dynamodb=emulator.template_target(),
        table_name=NAMES.table,
        origin="https://shop.example",
        request_time_ms=int(time.time() * 1000),
    )
    assert answer.status == 200
    keys: dict[str, Any] = json.loads(answer.body)
    return keys


def test_tickets_signed_before_a_restart_verify_after_it(
    tmp_path: Path, started: list[Emulator], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="beekeeper")  # every line the room logs
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    assert key_store(first).ensure_first_key(issuer=ISSUER) is not None
    settings = sample_room(name=ROOM, region=LOCAL_REGION)
    secret_id = first.secretsmanager.secrets[NAMES.local_ticket_keys_secret].arn
    issuer = TicketIssuer(
        read_ring=secret_reader(first.client("secretsmanager"), secret_id),
        settings=settings,
        clock=time.time,
    )
    now = int(time.time())
    ticket = issuer.ticket(Token("S3cretVisitorId-abcdef", 1), now, now + 600)
    assert ticket is not None
    (private,) = KeyRing.parse(
        first.secretsmanager.secrets[NAMES.local_ticket_keys_secret].current.value
    ).keys

    # Killed; the next start finds the room's keys as they were and makes none.
    second, _ = run(started, path)
    assert key_store(second).ensure_first_key(issuer=ISSUER) is None
    (published,) = jwks(second)["keys"]
    assert published["kid"] == private["kid"] == jwt.get_unverified_header(ticket)["kid"]
    claims = jwt.decode(
        ticket,
        jwt.PyJWK(published),
        algorithms=[facts.ALGORITHM],
        audience=browser_origin(settings.origin),
        issuer=ISSUER,
    )
    assert claims["room"] == ROOM
    # The same key signs on: a ticket signed now names it too.
    later = TicketIssuer(
        read_ring=secret_reader(
            second.client("secretsmanager"),
            second.secretsmanager.secrets[NAMES.local_ticket_keys_secret].arn,
        ),
        settings=settings,
        clock=time.time,
    ).ticket(Token("An0therVisitorId-abcde", 2), now, now + 600)
    assert later is not None and jwt.get_unverified_header(later)["kid"] == published["kid"]

    # The private key is in the saved line, readable by its user alone, and in no log line.
    assert str(private["d"]) in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert str(private["d"]) not in caplog.text


def join_secret(emulator: Emulator) -> str:
    secret = emulator.secretsmanager.secrets[NAMES.local_join_secret]
    return str(secret.current.value)


def test_tokens_in_the_saved_line_still_carry_the_rooms_mark_after_a_restart(
    tmp_path: Path, started: list[Emulator]
) -> None:
    """The join secret is kept with the line: a visitor in line can still leave after a
    restart (room/leaving.py checks the mark), and a new line has a new secret."""
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    secret = join_secret(first)
    token = Token.issue(7, secrets.token_bytes, JoinKeys.from_secret(secret).token)
    second, _ = run(started, path)
    assert join_secret(second) == secret
    assert token.issued_with(JoinKeys.from_secret(join_secret(second)).token)
    third, _ = run(started, path, discard=True)
    assert join_secret(third) != secret


def test_a_new_line_forgets_the_keys_too(tmp_path: Path, started: list[Emulator]) -> None:
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    made = key_store(first).ensure_first_key(issuer=ISSUER)
    second, _ = run(started, path, discard=True)
    assert key_store(second).read().ring.keys == ()
    assert jwks(second) == {"keys": []}
    assert made is not None


def test_a_line_saved_one_item_a_line_is_still_read(
    tmp_path: Path, started: list[Emulator]
) -> None:
    """A journal from before transactions were kept whole (format 1: one line per item)."""
    path = tmp_path / "saved.state.jsonl"
    item = {"pk": {"S": "v#old"}, "expires_at": {"N": "9"}}
    lines = [
        {"format": 1, "run": 3},
        {"t": NAMES.table, "k": "v#old", "i": item},
        {"t": NAMES.table, "k": "v#gone", "i": {"pk": {"S": "v#gone"}}},
        {"t": NAMES.table, "k": "v#gone", "i": None},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    emulator, restored = run(started, path)
    assert restored.lost_reason is None and restored.items == 1
    assert emulator.dynamodb.tables[NAMES.table].items == {"v#old": item}
    assert json.loads(path.read_text().splitlines()[0]) == {"format": FORMAT, "run": 4}


def test_the_rooms_metrics_survive_a_restart(tmp_path: Path, started: list[Emulator]) -> None:
    """What the functions wrote before a restart is still what `beekeeper report` reads after
    it: the rate held at 10 is not drawn as unknown (or 0) for the minutes before."""
    path = tmp_path / "saved.state.jsonl"
    first, _ = run(started, path)
    start = (int(time.time()) // 60 - 30) * 60  # whole minutes, half an hour ago
    minutes = 3
    for minute in range(minutes):
        document = {
            "_aws": {
                "Timestamp": (start + minute * 60) * 1000,
                "CloudWatchMetrics": [
                    {
                        "Namespace": telemetry.METRIC_NAMESPACE,
                        "Dimensions": [[telemetry.ROOM_DIMENSION]],
                        "Metrics": [{"Name": telemetry.RATE.name}, {"Name": telemetry.WAIT.name}],
                    }
                ],
            },
            telemetry.ROOM_DIMENSION: ROOM,
            telemetry.RATE.name: 10,
            # More values than one line of the compacted journal holds.
            telemetry.WAIT.name: [float(i) for i in range(METRICS_PER_LINE)],
        }
        first.cloudwatch.ingest_emf(json.dumps(document))

    def read(emulator: Emulator) -> dict[str, dict[int, float]]:
        return MetricReader(emulator.client("cloudwatch")).read(
            [
                room_query("rate", ROOM, telemetry.RATE),
                room_query("waits", ROOM, telemetry.WAIT, "SampleCount"),
                room_query("longest", ROOM, telemetry.WAIT, "Maximum"),
            ],
            start=start,
            end=start + minutes * 60,
            period=60,
        )

    before = read(first)
    assert before["rate"] == {0: 10.0, 1: 10.0, 2: 10.0}
    assert before["waits"] == {m: float(METRICS_PER_LINE) for m in range(minutes)}
    # Killed; the next start replays the journal, the one after that its compacted form.
    second, _ = run(started, path)
    assert read(second) == before
    third, _ = run(started, path)
    assert read(third) == before
