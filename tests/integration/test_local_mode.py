"""A real local room over HTTP: `beekeeper local` running the real room code, with 2 s minutes.

The producer, trigger and consumers, the /polling and /client templates and the page are the
ones AWS runs; the tests only talk HTTP to the room and read its table through the emulator,
as the operator CLI does.
"""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from beekeeper.core import datamodel
from beekeeper.core.join_work import WORK_PARAMETER, Challenge, solve
from beekeeper.core.polling import eta_seconds
from tests.support.localroom.http import cookie_value, enter_shop, follow_link, get
from tests.support.localroom.process import BEEKEEPER, LocalProcess, start_local, wait_until

pytestmark = pytest.mark.slow
# The room's real code: the admission pipeline's Lambdas (issue 3) must be installed.
pytest.importorskip("beekeeper.room.producer", reason="needs the admission pipeline's modules")

RATE = 100
MINUTE_SECONDS = 2  # the room below is started with --minute-seconds 2
VISITORS = 200


def _start(config_dir: Path, name: str) -> Iterator[LocalProcess]:
    room = start_local(
        # 200 visitors join at once: a place costs little work here (the default's is held by
        # the smaller rooms of tests/integration).
        [
            "--demo",
            "--demo-port",
            "0",
            "--rate",
            str(RATE),
            "--minute-seconds",
            "2",
            "--join-work",
            "20",
        ],
        config_dir,
        name=name,
    )
    try:
        yield room
    finally:
        if room.process.poll() is None:
            room.interrupt()


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProcess]:
    """One room for the checks that leave its line as they found it."""
    yield from _start(tmp_path_factory.mktemp("config"), "http-test")


@pytest.fixture()
def fresh_room(tmp_path: Path) -> Iterator[LocalProcess]:
    """A room of its own, for a test that counts everything in the table and the queue."""
    yield from _start(tmp_path, "counted")


def join(room: LocalProcess) -> str:
    answer = follow_link(room.urls["marketing URL"])
    assert answer.status == 302, answer.text
    (set_cookie,) = answer.headers_named("Set-Cookie")
    assert "HttpOnly" in set_cookie
    assert "Secure" not in set_cookie  # plain-http loopback only
    token = cookie_value(set_cookie, datamodel.COOKIE_NAME)
    assert datamodel.Token.parse(token) is not None
    assert token is not None
    return token


def client_allows(room: LocalProcess, token: str) -> bool:
    answer = get(f"{room.urls['client check URL']}?token={quote(token)}")
    assert answer.status == 200
    allow = answer.json()["allow"]
    assert isinstance(allow, bool)
    return allow


def polling(room: LocalProcess, cookie: str | None) -> dict[str, Any]:
    answer = get(room.urls["page URL"].replace("/room", "/polling"), cookie=cookie)
    assert answer.status == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def scan(room: LocalProcess, prefix: str) -> list[dict[str, Any]]:
    dynamodb = room.client("dynamodb")
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {
        "TableName": room.record["TableName"],
        "FilterExpression": "begins_with(pk, :p)",
        "ExpressionAttributeValues": {":p": {"S": prefix}},
    }
    while True:
        page = dynamodb.scan(**kwargs)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_200_visitors_are_each_admitted_once_at_the_rate_and_none_is_lost(
    fresh_room: LocalProcess,
) -> None:
    room = fresh_room

    def join_and_look(_: int) -> tuple[str, dict[str, Any]]:
        token = join(room)
        return token, polling(room, f"{datamodel.COOKIE_NAME}={token}")

    with ThreadPoolExecutor(8) as pool:
        joined = list(pool.map(join_and_look, range(VISITORS)))
    tokens = [token for token, _ in joined]
    ids = {datamodel.Token.parse(t).id for t in tokens}  # type: ignore[union-attr]
    assert len(ids) == VISITORS

    # A visitor who has just joined waits, and sees a place and an estimated wait (however
    # slowly this machine answers the joins: a visitor asks at once, before a consumer's slot
    # lets it in). The place is a true one: never more than the visitors there are.
    waiting = [answer for _, answer in joined if answer.get("state") == "waiting"]
    assert waiting, "no visitor saw a place in line"
    for answer in waiting:
        assert answer["allow"] is False and 1 <= answer["position"] <= VISITORS, answer
        # The wait of a place in a room admitting RATE a minute (core/polling.py's formula).
        assert answer["eta_seconds"] == eta_seconds(answer["position"], RATE), answer

    minutes_needed = -(-VISITORS // RATE)
    pending = set(tokens)

    def all_admitted() -> bool:
        with ThreadPoolExecutor(8) as pool:
            allowed = list(pool.map(lambda t: (t, client_allows(room, t)), list(pending)))
        pending.difference_update(t for t, ok in allowed if ok)
        return not pending

    assert wait_until(all_admitted, timeout=(minutes_needed + 4) * MINUTE_SECONDS + 10, interval=1)

    admitted_items = scan(room, "v#")
    assert len(admitted_items) == VISITORS
    assert {item["pk"]["S"][2:] for item in admitted_items} == ids
    counter = room.client("dynamodb").get_item(
        TableName=room.record["TableName"], Key={"pk": {"S": datamodel.ADMITTED_COUNTER_KEY}}
    )["Item"]
    assert int(counter["n"]["N"]) == VISITORS  # admitted once each: duplicates never counted

    per_minute = sorted(
        (int(m["pk"]["S"].split("#")[1]), int(m.get("admitted", {"N": "0"})["N"]))
        for m in scan(room, "minute#")
    )
    busy = [count for _, count in per_minute if count]
    assert sum(busy) == VISITORS
    assert max(busy) <= RATE
    assert len(busy) >= minutes_needed

    sqs = room.client("sqs")
    for queue in (room.record["QueueUrl"], room.record["DeadLetterQueueUrl"]):
        attributes = sqs.get_queue_attributes(
            QueueUrl=queue,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        assert attributes == {
            "ApproximateNumberOfMessages": "0",
            "ApproximateNumberOfMessagesNotVisible": "0",
        }

    # The page's redirect carries the token and the signed ticket; the demo shop verifies the
    # ticket offline, redeems it once and keeps the visitor by its own session.
    answer = polling(room, f"{datamodel.COOKIE_NAME}={tokens[0]}")
    assert answer["allow"] is True
    prefix = datamodel.origin_url_with_token(room.urls["demo shop"], tokens[0])
    assert answer["origin"].startswith(f"{prefix}&{datamodel.ORIGIN_TICKET_PARAMETER}=")
    arrival, shop = enter_shop(answer["origin"])
    assert arrival.status == 303 and arrival.header("Location") == "/"
    assert shop.status == 200
    assert "You're in" in shop.text and "verified your admission ticket offline" in shop.text
    again, _ = enter_shop(answer["origin"])
    assert again.status == 403 and "already used" in again.text


def _random_id() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()


@pytest.mark.parametrize(
    "cookie",
    [
        None,
        "",
        f"{datamodel.COOKIE_NAME}=",
        f"{datamodel.COOKIE_NAME}=not-a-token",
        f"{datamodel.COOKIE_NAME}={'A' * 22}.1%0A",
        f'{datamodel.COOKIE_NAME}={"A" * 21}".1',
        f'{datamodel.COOKIE_NAME}={"A" * 22}.1"}}],"x":[{{"pk":{{"S":"config"',
        f"{datamodel.COOKIE_NAME}={'A' * 22}.1234567890123",
        # A random id, named by a fixed one: a parallel run's workers must collect the same tests.
        pytest.param(
            f"x{datamodel.COOKIE_NAME}={_random_id()}.5", id=f"x{datamodel.COOKIE_NAME}=RANDOM.5"
        ),
        "FORGED",  # replaced below by a well-formed token nobody was given
    ],
)
def test_forged_and_malformed_cookies_never_get_allow(
    room: LocalProcess, cookie: str | None
) -> None:
    forged = cookie == "FORGED"
    if forged:
        cookie = f"{datamodel.COOKIE_NAME}={_random_id()}.1"
    answer = polling(room, cookie)
    assert answer["allow"] is False
    # A well-formed token nobody was given is indistinguishable from one still in the queue
    # (neither has an admitted item), so it may be told "waiting"; it is never let in.
    assert answer["state"] in ({"unknown", "waiting"} if forged else {"no_token", "malformed"})
    if cookie:
        token = cookie.split("=", 1)[1]
        assert client_allows(room, token) is False


def admitted_directly(room: LocalProcess, *, expires_in: int, ordinal: int) -> str:
    """A token with an admission item written straight into the room's table."""
    token_id = _random_id()
    now = int(time.time())
    room.client("dynamodb").put_item(
        TableName=room.record["TableName"],
        Item={
            "pk": {"S": datamodel.visitor_key(token_id)},
            "admitted_at": {"N": str(now + expires_in - 3600)},
            "expires_at": {"N": str(now + expires_in)},
            "ordinal": {"N": str(ordinal)},
            "ttl": {"N": str(now + 86400)},
        },
    )
    return f"{token_id}.{ordinal}"


def test_an_expired_admission_never_gets_allow(room: LocalProcess) -> None:
    token = admitted_directly(room, expires_in=-1, ordinal=3)
    answer = polling(room, f"{datamodel.COOKIE_NAME}={token}")
    assert answer == {"allow": False, "state": "expired"}
    assert client_allows(room, token) is False


def test_off_lets_a_new_visitor_into_the_shop_with_a_ticket_within_10_s(
    room: LocalProcess,
) -> None:
    """Off, the room lets everyone in: a new visitor takes a place (no work) and /polling
    answers the admission with a ticket, the shop's check unchanged (issue 35 point 3)."""
    switch_room(room, enabled=False)
    try:
        token: list[str] = []

        def placed() -> bool:
            answer = get(room.urls["marketing URL"])
            location = answer.header("Location") or ""
            found = cookie_value(answer.header("Set-Cookie") or "", datamodel.COOKIE_NAME)
            if answer.status == 302 and location.startswith("room#turn=") and found:
                token.append(found)
                return True
            return False

        assert wait_until(placed, timeout=10.5)

        def let_in() -> bool:
            answer = polling(room, f"{datamodel.COOKIE_NAME}={token[0]}")
            return bool(answer.get("allow")) and "beekeeper_ticket=" in str(answer.get("origin"))

        assert wait_until(let_in, timeout=10.5)
    finally:
        switch_room(room, enabled=True)
        # Left as found: the producers see the room on again (their config is up to 5 s old),
        # so a new visitor is asked for the work again (a challenge: it joins nobody).
        json_answer = {"Accept": "application/json"}
        assert wait_until(
            lambda: get(room.urls["marketing URL"], headers=json_answer).json()["state"] == "work",
            timeout=10.5,
        )


def operator(room: LocalProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """The operator CLI against the running room, on a machine with no AWS credentials."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["BEEKEEPER_CONFIG_DIR"] = str(room.config_dir)
    env["AWS_CONFIG_FILE"] = env["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    return subprocess.run(
        [BEEKEEPER, *args, room.name], env=env, capture_output=True, text=True, timeout=60
    )


def switch_room(room: LocalProcess, *, enabled: bool) -> None:
    """`beekeeper off` / `on`, as the operator types them."""
    result = operator(room, "on" if enabled else "off")
    assert result.returncode == 0, result.stderr


def test_browsers_share_the_edges_challenge_and_each_own_solution_gets_its_own_place(
    fresh_room: LocalProcess,
) -> None:
    """The bare link's challenge comes from the local edge's copy, as from CloudFront's, for
    SHARED_SECONDS: browsers arriving together get the same one, and each solves it with a
    nonce of its own for a place of its own; the same solution again gets no place."""
    marketing = fresh_room.urls["marketing URL"]
    browser = {"Accept": "text/html,application/xhtml+xml"}
    for _ in range(3):  # a window boundary may fall between two asks: one of two pairs shares
        first, second = get(marketing, headers=browser), get(marketing, headers=browser)
        if first.header("Location") == second.header("Location"):
            break
    assert second.header("X-Cache") == "Hit from the local edge", second.headers
    location = second.header("Location") or ""
    assert location == first.header("Location") and second.header("Set-Cookie") is None
    challenge = Challenge.parse(location.removeprefix("work#"))
    assert challenge is not None
    tokens = []
    for visitor in ("A" * 22, "B" * 22, "A" * 22):
        solution = quote(str(solve(challenge, visitor)), safe="")
        joined = get(f"{marketing}?{WORK_PARAMETER}={solution}", headers=browser)
        assert joined.status == 302, joined.text
        tokens.append(cookie_value(joined.header("Set-Cookie") or "", datamodel.COOKIE_NAME))
    assert tokens[0] and tokens[1] and tokens[0] != tokens[1]
    assert tokens[2] is None  # the first visitor's solution again: a fresh challenge instead
    # An app's challenge is its own: never the edge's copy.
    app = [get(marketing, headers={"Accept": "application/json"}) for _ in range(2)]
    assert app[0].json()["challenge"] != app[1].json()["challenge"]


def test_the_demo_shows_how_an_app_joins_and_the_command_answers_json(
    room: LocalProcess,
) -> None:
    marketing = room.urls["marketing URL"]
    shown = f"  an app joins:     curl -s -H 'Accept: application/json' {marketing}"
    (line,) = [line for line in room.output().splitlines() if line.startswith(shown)]
    assert "docs/apps.md" in line
    # What that command asks: the room's challenge, as JSON.
    answer = get(marketing, headers={"Accept": "application/json"})
    assert answer.status == 200 and answer.json()["state"] == "work"


def test_status_reports_the_running_room(room: LocalProcess) -> None:
    result = operator(room, "status")
    assert result.returncode == 0, result.stderr
    assert room.name in result.stdout
    assert "ON" in result.stdout


def test_keys_rotate_and_retire_reach_the_running_room(room: LocalProcess) -> None:
    """`beekeeper keys` on a local room, through its endpoint: the room's secret and its
    published keys change together, and a refusal is one sentence."""
    before = [key["kid"] for key in get(room.urls["JWKS URL"]).json()["keys"]]
    assert len(before) == 1  # the key the room made at start
    rotated = operator(room, "keys", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert "published now, signing from" in rotated.stdout
    after = [key["kid"] for key in get(room.urls["JWKS URL"]).json()["keys"]]
    assert after[0] == before[0] and len(after) == 2
    assert after[1] in rotated.stdout
    refused = operator(room, "keys", "retire")
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error: Nothing changed: no key is due to retire: key ")
    assert "Traceback" not in refused.stderr


def test_ctrl_c_stops_everything_and_removes_the_record(tmp_path: Path) -> None:
    """A room of its own: Ctrl-C ends it as the operator ends a rehearsal."""
    room = start_local(["--demo", "--demo-port", "0", "--rate", str(RATE)], tmp_path, "ctrl-c")
    record = room.record_path
    assert record.exists()
    marketing = room.urls["marketing URL"]
    assert room.interrupt() == 0
    assert "Stopped." in room.output()
    assert "Traceback" not in room.output()
    assert not record.exists()
    with pytest.raises(OSError):
        get(marketing)


def test_concurrent_redeems_over_http_admit_exactly_one(room: LocalProcess) -> None:
    """Eight shops' servers redeem the same admitted token at once: one is let in."""
    token = admitted_directly(room, expires_in=600, ordinal=4)
    url = (
        f"{room.urls['client check URL']}?token={quote(token)}"
        f"&{datamodel.CLIENT_REDEEM_PARAMETER}={datamodel.CLIENT_REDEEM_VALUE}"
    )
    racers = 8
    start = threading.Barrier(racers)

    def redeem(_: int) -> tuple[int, Any]:
        start.wait()
        answer = get(url)
        return answer.status, answer.json()

    with ThreadPoolExecutor(racers) as pool:
        answers = list(pool.map(redeem, range(racers)))
    assert answers.count((200, {"allow": True})) == 1, answers
    assert answers.count((200, {"allow": False, "state": "redeemed"})) == racers - 1, answers
    # A plain check is unaffected by the redeem.
    assert client_allows(room, token) is True
