"""`beekeeper local NAME`: a configured room rehearsed, its files untouched, killed and restarted.

The room has a room file (every setting the operator chose) and an AWS deployment record. The
rehearsal runs the room file's settings with the command line's overrides, is operated with
`--local` while the AWS record stands, keeps its line when it is killed with SIGKILL, says so
when it starts again, and never suggests a deploy.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from beekeeper.core.datamodel import COOKIE_NAME
from beekeeper.core.local_room import LOCAL_SETTINGS_KEY
from beekeeper.core.settings import RoomSettings
from tests.support.localroom.http import cookie_value, follow_link, get
from tests.support.localroom.process import LocalProcess, operator, start_local, wait_until

pytestmark = pytest.mark.slow

NAME = "spring"
ROOM_FILE = RoomSettings(
    name=NAME,
    display_name="Spring Sale",
    region="eu-central-1",
    origin="https://shop.example.com/",
    rate=1,
    admission_validity_minutes=30,
    accent_colour="#005a9c",
)
DEPLOYED = {
    "MarketingUrl": "https://abc.execute-api.eu-central-1.amazonaws.com/prod/beekeeper",
    "TableName": "beekeeper-spring",
    "QueueUrl": "https://sqs.eu-central-1.amazonaws.com/123456789012/beekeeper-spring-visitors",
}


@pytest.fixture()
def config_dir(tmp_path: Path) -> Path:
    rooms = tmp_path / "rooms"
    rooms.mkdir()
    (rooms / f"{NAME}.toml").write_text(ROOM_FILE.to_toml())
    (rooms / f"{NAME}.deployed.json").write_text(json.dumps(DEPLOYED))
    return tmp_path


def join(room: LocalProcess) -> str:
    answer = follow_link(room.urls["marketing URL"])
    token = cookie_value(answer.header("Set-Cookie") or "", COOKIE_NAME)
    assert answer.status == 302 and token
    return token


def polling(room: LocalProcess, token: str) -> dict[str, object]:
    polled: dict[str, object] = get(
        room.urls["page URL"].replace("/room", "/polling"), cookie=f"{COOKIE_NAME}={token}"
    ).json()
    return polled


def allowed(room: LocalProcess, token: str) -> bool:
    return bool(get(f"{room.urls['client check URL']}?token={token}").json()["allow"])


@pytest.fixture()
def rooms() -> Iterator[list[LocalProcess]]:
    started: list[LocalProcess] = []
    yield started
    for room in started:
        if room.process.poll() is None:
            room.process.kill()
            room.process.wait(10)


def test_a_room_file_rehearsed_killed_and_restarted(
    config_dir: Path, rooms: list[LocalProcess]
) -> None:
    files = {p: p.read_bytes() for p in (config_dir / "rooms").iterdir()}
    args = [NAME, "--minute-seconds", "2"]
    room = start_local([*args, "--origin", "http://localhost:9/", "--rate", "60"], config_dir, NAME)
    rooms.append(room)
    # The room file's settings, with the command line's overrides.
    running = json.loads(room.record_path.read_text())[LOCAL_SETTINGS_KEY]
    assert running["display_name"] == "Spring Sale"
    assert running["admission_validity_minutes"] == 30
    assert running["accent_colour"] == "#005a9c"
    assert (running["origin"], running["rate"]) == ("http://localhost:9/", 60)
    assert "Spring Sale" in get(room.urls["page URL"]).text
    # The printed command names the deployed room's twin with --local.
    assert f" status {NAME} --local (and off, on, rate, ..." in room.output()

    # Deployed in AWS and running here: the operator says which.
    ambiguous = operator(config_dir, "status", NAME)
    assert ambiguous.returncode == 1
    assert "add --aws for the deployed room or --local for the local one" in ambiguous.stderr
    status = operator(config_dir, "status", NAME, "--local", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["local"] is True

    admitted = [join(room) for _ in range(3)]
    assert wait_until(lambda: all(allowed(room, t) for t in admitted), timeout=20)
    assert operator(config_dir, "rate", NAME, "1", "--local").returncode == 0
    waiting = [join(room) for _ in range(4)]

    room.process.send_signal(signal.SIGKILL)
    room.process.wait(10)
    gone = operator(config_dir, "status", NAME, "--local")
    assert gone.returncode == 1
    assert gone.stderr.strip() == (
        f"Error: The local room {NAME!r} is not running (its process {room.process.pid} has "
        f"ended, and its line with it unless it was saved); start it again with "
        f"`beekeeper local {NAME}`."
    )
    assert "deploy" not in gone.stderr.replace(f"beekeeper local {NAME}", "")

    again = start_local(args, config_dir, NAME)
    rooms.append(again)
    assert "continues its saved line" in again.output()
    # Whoever was admitted stays admitted; whoever waited still has a place, and goes in.
    assert all(allowed(again, t) for t in admitted)
    for token in waiting:
        answer = polling(again, token)
        assert answer["allow"] is True or answer["state"] == "waiting", answer
    assert wait_until(lambda: all(allowed(again, t) for t in waiting), timeout=30)

    assert again.interrupt() == 0
    assert not again.record_path.exists()

    # A rate and a start given at a restart win over those the saved line was operated to.
    third = start_local(
        [*args, "--rate", "30", "--starts-in", "900", "--max-inside", "5"], config_dir, NAME
    )
    rooms.append(third)
    report = json.loads(operator(config_dir, "status", NAME, "--local", "--json").stdout)
    assert (report["rate"], report["operator_rate"]) == (30, 30)
    assert report["starts_at"] > 0
    # `capacity` chooses between the rehearsal and the deployed room as the others do.
    ambiguous = operator(config_dir, "capacity", NAME, "3")
    assert ambiguous.returncode == 1
    assert "add --aws for the deployed room or --local for the local one" in ambiguous.stderr
    assert operator(config_dir, "capacity", NAME, "3", "--local").returncode == 0
    report = json.loads(operator(config_dir, "status", NAME, "--local", "--json").stdout)
    assert report["max_inside"] == 3
    assert third.interrupt() == 0
    # The room file and the AWS deployment record were never touched.
    assert {p: p.read_bytes() for p in (config_dir / "rooms").iterdir()} == files
