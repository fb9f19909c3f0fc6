"""Benchmark: `off` lets a waiting line into the shop, and `resume` admits at once.

    .venv/bin/python bench/off_and_resume.py [--visitors 40] [--json]

Runs a local room (`beekeeper local --demo`'s LocalRoom: the real producer, trigger, consumers,
templates and edge, and the demo shop, which verifies every ticket offline against the room's
/jwks.json and accepts it once) and measures, on the real clock:

- **off**: a line of visitors waits at a slow rate, each visitor a page that fetches the shared
  state as a visible page does (every DOCUMENT_EVERY_SECONDS from its own moment) and, once the
  document says `off`, asks its own /polling every OWN_POLL_EVERY_SECONDS until it is let in,
  then follows the admission to the shop (core/serving.py's rule, as waiting_room_site/room.js
  applies it). `beekeeper off` is switched at a random moment, as the CLI switches it
  (RoomControl), and a newcomer follows the marketing link a moment later. Reported: the time
  from `off` to the last waiting visitor the shop let in (the goal: 10 s), its median, the
  newcomer's, and that every visitor came with a ticket the shop accepted, once.
- **resume**: the room is held (`beekeeper hold`, which takes effect HOLD_NOTICE_SECONDS later)
  with visitors waiting; once the hold has come, `beekeeper resume`; then the same after a
  restart of the held room (stopped and started again with its saved line). Reported: the time
  from `resume` to the first admission (the goal: 5 s).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from beekeeper.cli.room_control import RoomControl
from beekeeper.core.datamodel import ADMITTED_COUNTER_KEY, COOKIE_NAME
from beekeeper.core.retry import Pauses
from beekeeper.core.serving import (
    DOCUMENT_EVERY_SECONDS,
    HOLD_NOTICE_SECONDS,
    OWN_POLL_EVERY_SECONDS,
)
from beekeeper.local.room import LocalOptions, LocalRoom
from beekeeper.local.room import local_room as local_room_settings

OFF_GOAL_SECONDS = 10.0
RESUME_GOAL_SECONDS = 5.0
RATE = 6  # a minute: a slow line, so that nobody is let in by the rate meanwhile
WARM_UP_SECONDS = DOCUMENT_EVERY_SECONDS + 2.0


def request(url: str, cookie: str = "") -> tuple[int, dict[str, str], bytes]:
    """One GET, redirects not followed: (status, headers, body)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


@dataclass
class Visitor:
    """A waiting page over HTTP, by the page's rule (core/serving.py, room.js)."""

    room_base: str  # the room's address: .../beekeeper, /state, /polling under it
    cookie: str = ""
    in_shop_at: float | None = None
    ticketed: bool = False
    refused: list[str] = field(default_factory=list)

    def join(self) -> None:
        status, headers, _ = request(f"{self.room_base}/beekeeper")
        assert status == 302, status
        self.cookie = headers["set-cookie"].split(";")[0]
        assert self.cookie.startswith(f"{COOKIE_NAME}=")

    def state(self) -> dict[str, Any]:
        status, _, body = request(f"{self.room_base}/state")
        return json.loads(body) if status == 200 else {}

    def wait(self, phase: float, stop: threading.Event) -> None:
        """Fetch the document every DOCUMENT_EVERY_SECONDS; once it says off, ask /polling
        every OWN_POLL_EVERY_SECONDS until let in, then go to the shop."""
        stop.wait(phase)
        while not stop.is_set() and self.state().get("state") != "off":
            stop.wait(DOCUMENT_EVERY_SECONDS)
        while not stop.is_set():
            status, _, body = request(f"{self.room_base}/polling", self.cookie)
            answer = json.loads(body) if status == 200 else {}
            if answer.get("allow") is True:
                return self.shop(answer["origin"])
            stop.wait(OWN_POLL_EVERY_SECONDS)

    def shop(self, url: str) -> None:
        self.ticketed = "beekeeper_ticket=" in url
        status, _, body = request(url)
        if status == 303:  # the demo shop verified the ticket, redeemed it, gave a session
            self.in_shop_at = time.time()
        else:
            self.refused.append(body.decode("utf-8", "replace")[:200])
        # The same admission link a second time is refused: the ticket was accepted once.
        if request(url)[0] == 303:
            self.refused.append("the same ticket was accepted twice")


def local_room(name: str, config: str, *, save_line: bool = False) -> LocalRoom:
    os.environ["BEEKEEPER_CONFIG_DIR"] = config
    room = LocalRoom(
        local_room_settings(rate=RATE, name=name, join_work=0),
        LocalOptions(
            demo=True,
            demo_port=0,
            origin_is_demo=True,
            port=0,
            operator_port=0,
            save_line=save_line,
        ),
    )
    room.start()
    return room


def control(room: LocalRoom) -> RoomControl:
    assert room.emulator and room.resources and room.settings
    return RoomControl(
        room.emulator.client("dynamodb"),
        room.resources.table_name,
        room.settings,
        clock=time.time,
        pauses=Pauses(sleep=time.sleep, random=random.random),
        minute_seconds=room.options.minute_seconds,
    )


def base_of(room: LocalRoom) -> str:
    assert room.urls
    return room.urls.page_url.removesuffix("/room")


def measure_off(visitors: int, rng: random.Random) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as config:
        room = local_room("bench-off", config)
        try:
            # Held from the start, so nobody is let in by the rate while the line forms.
            control(room).hold()
            time.sleep(HOLD_NOTICE_SECONDS + 1)
            line = [Visitor(base_of(room)) for _ in range(visitors)]
            for visitor in line:
                visitor.join()
            stop = threading.Event()
            threads = [
                threading.Thread(
                    target=v.wait, args=(rng.uniform(0, DOCUMENT_EVERY_SECONDS), stop), daemon=True
                )
                for v in line
            ]
            for thread in threads:
                thread.start()
            time.sleep(WARM_UP_SECONDS + rng.uniform(0, DOCUMENT_EVERY_SECONDS))
            off_at = time.time()
            control(room).set_enabled(False)
            newcomer = Visitor(base_of(room))
            time.sleep(1.0)
            newcomer.join()
            joined_at = time.time()
            newcomer_thread = threading.Thread(target=newcomer.wait, args=(0.5, stop), daemon=True)
            newcomer_thread.start()
            deadline = off_at + 4 * OFF_GOAL_SECONDS
            everyone = [*line, newcomer]
            while any(v.in_shop_at is None for v in everyone) and time.time() < deadline:
                time.sleep(0.05)
            stop.set()
            for thread in [*threads, newcomer_thread]:
                thread.join(15)
            delays = sorted(v.in_shop_at - off_at for v in line if v.in_shop_at is not None)
            return {
                "visitors": visitors,
                "in_shop": len(delays),
                "last_seconds": round(delays[-1], 2) if delays else None,
                "median_seconds": round(statistics.median(delays), 2) if delays else None,
                "newcomer_seconds": (
                    round(newcomer.in_shop_at - joined_at, 2) if newcomer.in_shop_at else None
                ),
                "every_one_with_a_ticket_accepted_once": all(
                    v.ticketed and not v.refused for v in everyone
                ),
                "within_goal": len(delays) == visitors and delays[-1] <= OFF_GOAL_SECONDS,
            }
        finally:
            room.stop()


def admitted(room: LocalRoom) -> int:
    assert room.emulator and room.resources
    item = (
        room.emulator.client("dynamodb")
        .get_item(
            TableName=room.resources.table_name,
            Key={"pk": {"S": ADMITTED_COUNTER_KEY}},
            ConsistentRead=True,
        )
        .get("Item")
    )
    return int(item["n"]["N"]) if item else 0


def first_admission_after_resume(room: LocalRoom) -> float | None:
    before = admitted(room)
    resumed_at = time.time()
    control(room).resume()
    while time.time() < resumed_at + 6 * RESUME_GOAL_SECONDS:
        if admitted(room) > before:
            return time.time() - resumed_at
        time.sleep(0.02)
    return None


def measure_resume(visitors: int, rng: random.Random, *, restart: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as config:
        name = "bench-resume-restart" if restart else "bench-resume"
        room = local_room(name, config, save_line=True)
        try:
            control(room).hold()
            time.sleep(HOLD_NOTICE_SECONDS + 1)
            for _ in range(visitors):
                Visitor(base_of(room)).join()
            time.sleep(rng.uniform(1, 20))  # somewhere in the minute
            if restart:
                room.stop()
                room = local_room(name, config, save_line=True)
                time.sleep(rng.uniform(1, 5))
            seconds = first_admission_after_resume(room)
            return {
                "restart": restart,
                "first_admission_seconds": None if seconds is None else round(seconds, 2),
                "within_goal": seconds is not None and seconds <= RESUME_GOAL_SECONDS,
            }
        finally:
            room.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--visitors", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    off = measure_off(args.visitors, rng)
    resumes = [measure_resume(10, rng, restart=restart) for restart in (False, True)]
    if args.json:
        print(json.dumps({"off": off, "resume": resumes}, indent=2))
    else:
        print(
            f"off: {off['in_shop']}/{off['visitors']} waiting visitors in the shop within "
            f"{off['last_seconds']} s of `off` (median {off['median_seconds']} s); a newcomer "
            f"{off['newcomer_seconds']} s after joining; every one with a ticket the shop "
            f"accepted once: {'yes' if off['every_one_with_a_ticket_accepted_once'] else 'no'}"
        )
        for r in resumes:
            after = "after a restart of the held room" if r["restart"] else "without a restart"
            print(f"resume ({after}): first admission {r['first_admission_seconds']} s later")
    ok = off["within_goal"] and off["every_one_with_a_ticket_accepted_once"]
    return 0 if ok and all(r["within_goal"] for r in resumes) else 1


if __name__ == "__main__":
    sys.exit(main())
