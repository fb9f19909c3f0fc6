"""A flood of fake leaves against a local capacity-mode room (issue 27.3), over loopback HTTP.

    .venv/bin/python bench/fake_leaves.py [--rate 1000] [--seconds 10] [--senders 8]

Starts `beekeeper local` with one place in the shop (`--max-inside 1`, `--join-work 0`: the
work a place costs is bench/join_work.py's), lets visitor A in (admitted, arrived through
/enter) and puts visitor B in line behind the full shop. Then one client sends `POST
/leave?token=<a random well-formed token>` at --rate a second for --seconds (from --senders
keep-alive connections, paced), and halfway through visitor A leaves for real (`POST
/leave?token=A`, as a shop's server does). Printed: the fake leaves sent and answered (by
answer, and any 5xx), how long after A's leave B's /polling said allow (goal: within 2 s), and
what the table holds afterwards: the items of the fake tokens (goal: none) and every item by
kind.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import secrets
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

import boto3
import local_room

ROOM = "bench-leaves"
COOKIE = "beekeeper_token"


@contextmanager
def running_room(config: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """`beekeeper local` with one place; yields the gateway's base URL and the room's outputs."""
    args = ["--origin", "http://localhost:9/", "--rate", "600", "--max-inside", "1"]
    args += ["--session-minutes", "5", "--claim-minutes", "5", "--join-work", "0"]
    with local_room.running_room(ROOM, args, config) as room:
        yield room.base, room.outputs


class Client:
    """One keep-alive connection to the room."""

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self._address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._connection = http.client.HTTPConnection(*self._address, timeout=30)

    def ask(
        self, method: str, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        try:
            self._connection.request(method, path, headers=headers or {})
            response = self._connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        except (OSError, http.client.HTTPException):
            self._connection.close()
            self._connection = http.client.HTTPConnection(*self._address, timeout=30)
            raise


def join(client: Client) -> str:
    status, headers, _ = client.ask("GET", "/beekeeper")
    cookie = headers.get("Set-Cookie", "")
    if status != 302 or not cookie.startswith(f"{COOKIE}="):
        raise SystemExit(f"the marketing link answered {status} without a place")
    return cookie.split(";", 1)[0].split("=", 1)[1]


def polling(client: Client, token: str) -> dict[str, Any]:
    _, _, body = client.ask("GET", "/polling", {"Cookie": f"{COOKIE}={token}"})
    answer: dict[str, Any] = json.loads(body)
    return answer


def until(check: Any, seconds: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return False


def fake_token() -> str:
    raw = secrets.token_bytes(16)
    return f"{base64.urlsafe_b64encode(raw).rstrip(b'=').decode()}.{secrets.randbelow(10**6)}"


class Sender(threading.Thread):
    """Fake leaves at `rate` a second until `end` (monotonic), paced."""

    def __init__(self, base: str, rate: float, start: float, end: float) -> None:
        super().__init__(daemon=True)
        self._client = Client(base)
        self._interval, self._start, self._end = 1.0 / rate, start, end
        self.tokens: list[str] = []
        self.answers: Counter[str] = Counter()

    def run(self) -> None:
        due = self._start
        while due < self._end:
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            token = fake_token()
            self.tokens.append(token)
            try:
                status, _, body = self._client.ask("POST", f"/leave?token={token}")
                self.answers[f"{status} {body.decode().strip()}"] += 1
            except (OSError, http.client.HTTPException):
                self.answers["connection error"] += 1
            due += self._interval


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=1000.0, help="fake leaves a second")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--senders", type=int, default=8, help="keep-alive connections")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as config, running_room(config) as (base, outputs):
        client = Client(base)
        first = join(client)
        if not until(lambda: polling(client, first).get("allow") is True, 30):
            raise SystemExit("visitor A was not admitted")
        client.ask("GET", "/enter", {"Cookie": f"{COOKIE}={first}"})  # A arrives at the shop
        second = join(client)
        time.sleep(2)
        if polling(client, second).get("state") != "waiting":
            raise SystemExit(f"visitor B is not waiting: {polling(client, second)}")

        start = time.monotonic() + 0.5
        end = start + args.seconds
        senders = [Sender(base, args.rate / args.senders, start, end) for _ in range(args.senders)]
        for sender in senders:
            sender.start()
        time.sleep(max(0.0, start + args.seconds / 2 - time.monotonic()))
        left_at = time.monotonic()
        status, _, body = client.ask("POST", f"/leave?token={first}")
        admitted = until(lambda: polling(client, second).get("allow") is True, 30, step=0.02)
        took = time.monotonic() - left_at
        for sender in senders:
            sender.join()
        elapsed = time.monotonic() - start

        answers = sum((s.answers for s in senders), Counter())
        sent = sum(answers.values())
        print(f"fake leaves: {sent:,} in {elapsed:.1f} s ({sent / elapsed:,.0f} a second)")
        for answer, count in answers.most_common():
            print(f"  {count:>7,}  {answer}")
        print(f"visitor A's leave: {status} {body.decode().strip()}")
        verdict = "within" if admitted and took <= 2.0 else "NOT within"
        print(f"visitor B admitted {took:.2f} s after A left ({verdict} the 2 s goal)")

        dynamodb = boto3.client(
            "dynamodb",
            endpoint_url=outputs["EndpointUrl"],
            region_name="us-east-1",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
        )
        pks: list[str] = []
        request: dict[str, Any] = {"TableName": outputs["TableName"]}
        while True:
            page = dynamodb.scan(**request)
            pks += [item["pk"]["S"] for item in page["Items"]]
            if "LastEvaluatedKey" not in page:
                break
            request["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        fakes = {f"v#{token.split('.')[0]}" for s in senders for token in s.tokens}
        print(f"table afterwards: {len(pks)} items, {len(fakes & set(pks))} of them a fake token's")
        kinds = Counter(pk.split("#")[0] for pk in pks)
        print("  by kind: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))


if __name__ == "__main__":
    main()
