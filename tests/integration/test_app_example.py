"""docs/apps.md's example, run as written against `beekeeper local` at the default join_work:
an app joins with JSON, does the work, waits by its Beekeeper-Token header and gets its ticket
in the answer, a ticket that verifies against the room's keys."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import jwt
import pytest

from beekeeper.core.datamodel import Token
from beekeeper.core.join_work import Challenge, solve
from beekeeper.core.tickets import issuer_of
from tests.support.localroom.http import get
from tests.support.localroom.process import LocalProcess, start_local
from tests.support.snippets import DOCS, snippet

pytestmark = pytest.mark.slow
ORIGIN = "http://localhost:9/sale"
APP = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    local = start_local(
        ["--origin", ORIGIN, "--rate", "600", "--minute-seconds", "2"],
        tmp_path_factory.mktemp("config"),
        name="apps",
    )
    try:
        yield local
    finally:
        if local.process.poll() is None:
            local.interrupt()


def run_example(tmp_path: Path, marketing_url: str) -> dict[str, object]:
    script = tmp_path / "app.py"
    script.write_text(snippet("app.py", DOCS / "apps.md"), encoding="utf-8")
    finished = subprocess.run(
        [sys.executable, str(script), marketing_url],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr
    answer: dict[str, object] = json.loads(finished.stdout)
    return answer


def test_the_example_joins_does_the_work_and_gets_its_ticket_in_the_answer(
    room: LocalProcess, tmp_path: Path
) -> None:
    answer = run_example(tmp_path, room.urls["marketing URL"])
    assert set(answer) == {"allow", "token", "origin", "ticket"}
    assert answer["allow"] is True and answer["origin"] == ORIGIN
    token = Token.parse(answer["token"])
    assert token is not None
    # The ticket the consumer signed for this token, verifiable offline with the room's keys.
    keys = jwt.PyJWKSet.from_dict(get(room.urls["JWKS URL"]).json())
    ticket = str(answer["ticket"])
    key = next(k for k in keys.keys if k.key_id == jwt.get_unverified_header(ticket)["kid"])
    claims = jwt.decode(
        ticket,
        key.key,
        algorithms=["ES256"],
        audience="http://localhost:9",
        issuer=issuer_of(room.urls["marketing URL"]),
    )
    assert claims["room"] == "apps"
    # The room knows the token: /client says it came through the line.
    check = get(f"{room.urls['client check URL']}?token={answer['token']}")
    assert check.json() == {"allow": True}


def test_an_app_that_asks_twice_with_the_same_solution_gets_no_second_place(
    room: LocalProcess,
) -> None:
    """The JSON answers over HTTP, as the room serves them: the challenge, a place, a replay."""
    link = room.urls["marketing URL"]
    first = get(link, headers=APP)
    assert first.status == 200 and first.json()["state"] == "work"
    challenge = Challenge.parse(first.json()["challenge"])
    assert challenge is not None
    solution = quote(str(solve(challenge)), safe="")
    joined = get(f"{link}?work={solution}", headers=APP)
    assert joined.status == 200 and joined.json()["state"] == "waiting"
    replay = get(f"{link}?work={solution}", headers=APP)
    assert replay.status == 400
    assert (replay.json()["state"], replay.json()["refused"]) == ("work", "used")
