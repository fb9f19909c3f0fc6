"""The room is assembled in one place (room/assembly.py): each part runs against the wiring of
its own part's name, and the side effects passed in are the ones the parts use."""

from __future__ import annotations

from typing import Any

from beekeeper.core.settings import RoomSettings
from beekeeper.room.assembly import Effects, Part, assemble
from beekeeper.room.tickets import NO_TICKETS, TicketIssuer
from beekeeper.room.wiring import RoomWiring

SETTINGS = RoomSettings(
    name="assembled",
    display_name="Assembled",
    region="us-east-1",
    origin="https://shop.example.com",
    rate=60,
)


class Client:
    """Stands for a part's AWS client; the assembly only hands it on."""

    def __init__(self, part: str) -> None:
        self.part = part


def wiring_of(asked: list[str]) -> Any:
    def wired(part: Part) -> RoomWiring:
        asked.append(part)
        return RoomWiring(
            settings=SETTINGS,
            table="table",
            queue_url="queue",
            dynamodb=Client(part),
            sqs=Client(part),
        )

    return wired


def effects(**changes: Any) -> Effects:
    values: dict[str, Any] = {
        "clock": lambda: 1_800_000_000.0,
        "sleep": lambda seconds: None,
        "invoke_consumer": lambda payload: None,
        "read_join_secret": lambda: "j" * 64,
        "room_origin": "https://room.example.com",
    }
    return Effects(**{**values, **changes})


def test_each_part_runs_against_its_own_wiring() -> None:
    asked: list[str] = []
    room = assemble(wiring_of(asked), effects())
    assert room.producer.dynamodb.part == "producer"
    assert room.gate.dynamodb.part == "producer"
    assert room.leaving.dynamodb.part == "leave"
    assert set(asked) == {"producer", "leave"}


def test_the_producer_the_gate_and_the_leave_share_the_room_s_keys_and_origin() -> None:
    room = assemble(wiring_of([]), effects())
    assert room.producer.gate is room.gate
    assert room.leaving.token_key() == room.gate.keys().token
    assert room.leaving.room_origin == room.producer.room_origin == "https://room.example.com"


def test_tickets_are_signed_only_when_the_keys_can_be_read() -> None:
    assert assemble(wiring_of([]), effects()).tickets is NO_TICKETS
    signing = assemble(wiring_of([]), effects(read_ticket_keys=lambda: "{}"))
    assert isinstance(signing.tickets, TicketIssuer)


def test_the_gate_takes_its_own_randomness_when_given_one() -> None:
    drawn: list[int] = []

    def challenge_bytes(size: int) -> bytes:
        drawn.append(size)
        return bytes(size)

    room = assemble(wiring_of([]), effects(challenge_bytes=challenge_bytes))
    room.gate.challenge(now=1_800_000_000.0, work_ms=10)
    assert drawn
    assert room.producer.token_bytes is not challenge_bytes


def test_the_producer_s_cold_start_loads_neither_the_trigger_nor_the_governor() -> None:
    """The marketing link's function is on every new visitor's path: its handler module loads
    only what the producer runs (a fresh interpreter, as a new Lambda container)."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, beekeeper.lambdas.producer; print(' '.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "beekeeper.room.assembly" in loaded
    for heavy in (
        "beekeeper.room.trigger",
        "beekeeper.room.governor",
        "beekeeper.room.governor_sampling",
        "urllib.request",
        "cryptography",
    ):
        assert heavy not in loaded
