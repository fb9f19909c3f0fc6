"""Throughput of a local room (`beekeeper local`) on this machine, over loopback HTTP.

    .venv/bin/python bench/local_throughput.py [--visitors 10000] [--poll-seconds 10]
        [--admit-rate 3000 [--minute-seconds 60] [--admit-minutes 2]]

Starts `beekeeper local` (rate 1/minute, so the queue only grows; `--join-work 0`), then:
1. joins --visitors new visitors at /beekeeper from --workers keep-alive connections and prints
   the arrival rate per slice of 1,000 (how it holds up as the queue grows) and overall;
2. with all of them queued, polls /polling with their cookies for --poll-seconds and prints the
   poll rate;
3. with --admit-rate R: sets the room's rate to R live (`beekeeper rate`) and prints the
   visitors admitted in each full (possibly shortened) minute that began after the change
   with at least R visitors still queued, from the minute's own `admitted` counter, against
   R; the polls go on meanwhile, as a waiting crowd's pages do.
Bounded: the whole run stops after --max-seconds. `--url http://127.0.0.1:PORT` measures a room
that is already running instead (phases 1 and 2). Goal: >= 300 visitors/s and >= 1,000
polls/s with 10,000 queued, and every full minute within 1% of the rate (2% for 10 s minutes).
"""

from __future__ import annotations

import argparse
import heapq
import http.client
import json
import os
import random
import re
import subprocess
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import local_room

COOKIE = re.compile(r"beekeeper_token=([^;]+)")


def cpu_seconds(pid: int | None) -> float:
    """CPU time (user + system) the room's process has used: the figure a shared machine's
    load does not distort, unlike requests per wall-clock second."""
    if pid is None:
        return float("nan")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


BEEKEEPER = local_room.BEEKEEPER
ROOM = "bench"


@contextmanager
def running_room(
    extra: list[str], config: str, log_path: str | None = None
) -> Iterator[tuple[str, int | None]]:
    """`beekeeper local` in a subprocess; yields the gateway's base URL and the pid."""
    args = ["--origin", "http://localhost:9/", "--rate", "1"]
    # The room's own throughput: a place costs no work here (the work and what it costs a
    # visitor and a bot are bench/join_work.py's); `--join-work MS` in the extra arguments wins.
    args += ["--join-work", "0", *extra]
    with local_room.running_room(ROOM, args, config, log_path) as room:
        yield room.base, room.pid


class Worker(threading.Thread):
    """One keep-alive connection issuing requests until its share is done or time is up."""

    def __init__(
        self,
        base: str,
        path: str,
        count: int,
        cookies: list[str],
        deadline: float,
        stop: threading.Event | None = None,
    ) -> None:
        super().__init__(daemon=True)
        parts = urlsplit(base)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._path, self._count = path, count
        self._cookies, self._deadline, self._halt = cookies, deadline, stop
        self.done: list[float] = []
        self.tokens: list[str] = []
        self.errors = 0
        # Every 50th answer's state, so the figures are known to count real answers.
        self.states: Counter[str] = Counter()

    def run(self) -> None:
        connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
        for index in range(self._count):
            if time.monotonic() > self._deadline or (self._halt and self._halt.is_set()):
                break
            headers = {}
            if self._cookies:
                headers["Cookie"] = f"beekeeper_token={self._cookies[index % len(self._cookies)]}"
            try:
                connection.request("GET", self._path, headers=headers)
                response = connection.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException):
                self.errors += 1
                connection.close()
                connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
                continue
            if response.status >= 500:
                self.errors += 1
                continue
            self.done.append(time.monotonic())
            if index % 50 == 0:
                self.states[_state(response.status, body)] += 1
            found = COOKIE.search(response.getheader("Set-Cookie") or "")
            if found:
                self.tokens.append(found.group(1))
        connection.close()


class PagePoller(threading.Thread):
    """Waiting room pages: each token polls when its last answer's `poll_after` says."""

    def __init__(self, base: str, tokens: list[str], stop: threading.Event) -> None:
        super().__init__(daemon=True)
        parts = urlsplit(base)
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        now = time.monotonic()
        # A page's first poll: spread over the first 5 s.
        self._due = sorted((now + random.uniform(0, 5), token) for token in tokens)
        self._halt = stop
        self.polls = 0

    def run(self) -> None:
        connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
        while self._due and not self._halt.is_set():
            when, token = heapq.heappop(self._due)
            if when > time.monotonic():
                self._halt.wait(when - time.monotonic())
            try:
                connection.request(
                    "GET", "/polling", headers={"Cookie": f"beekeeper_token={token}"}
                )
                answer = json.loads(connection.getresponse().read())
            except (OSError, http.client.HTTPException, ValueError):
                connection.close()
                connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
                continue
            self.polls += 1
            if answer.get("allow") is not True:
                after = float(answer.get("poll_after", 5))
                heapq.heappush(self._due, (time.monotonic() + after, token))
        connection.close()


def _state(status: int, body: bytes) -> str:
    if status != 200:
        return f"HTTP {status}"
    try:
        answer = json.loads(body)
    except ValueError:
        return "not JSON"
    return "admitted" if answer.get("allow") is True else str(answer.get("state"))


def run_phase(
    base: str,
    path: str,
    total: int,
    workers: int,
    cookies: list[str],
    deadline: float,
    stop: threading.Event | None = None,
) -> tuple[list[float], list[str], int, float, Counter[str]]:
    pool = [
        Worker(
            base,
            path,
            total // workers + (1 if i < total % workers else 0),
            cookies[i::workers] or cookies,
            deadline,
            stop,
        )
        for i in range(workers)
    ]
    started = time.monotonic()
    for worker in pool:
        worker.start()
    for worker in pool:
        worker.join()
    times = sorted(t for worker in pool for t in worker.done)
    tokens = [token for worker in pool for token in worker.tokens]
    states = sum((worker.states for worker in pool), Counter())
    return times, tokens, sum(w.errors for w in pool), started, states


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--visitors", type=int, default=10_000)
    parser.add_argument("--poll-seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--url", help="measure a running room at this base URL")
    parser.add_argument("--pid", type=int, help="the running room's process id (CPU figures)")
    parser.add_argument("--room-log", help="write the room's log to this file")
    parser.add_argument("--admit-rate", type=int, help="phase 3: the rate to admit at")
    parser.add_argument("--minute-seconds", type=float, default=60.0)
    parser.add_argument("--admit-minutes", type=int, default=2, help="full minutes to measure")
    parser.add_argument("room_args", nargs="*", help="extra `beekeeper local` arguments")
    args = parser.parse_args()
    deadline = time.monotonic() + args.max_seconds
    with tempfile.TemporaryDirectory() as config:
        extra = [*args.room_args, "--minute-seconds", str(args.minute_seconds)]
        context = (
            running_room(extra, config, args.room_log)
            if not args.url
            else _given(args.url, args.pid)
        )
        with context as (base, pid):
            measure(args, base, pid, config, deadline)


def measure(
    args: argparse.Namespace, base: str, pid: int | None, config: str, deadline: float
) -> None:
    cpu_before = cpu_seconds(pid)
    times, tokens, errors, started, _states = run_phase(
        base, "/beekeeper", args.visitors, args.workers, [], deadline
    )
    cpu_used = cpu_seconds(pid) - cpu_before
    print(f"new visitors at /beekeeper: {len(times)} joined, {errors} errors")
    for first in range(0, len(times) - 999, 1000):
        window = times[first + 999] - (times[first - 1] if first else started)
        print(f"  visitors {first + 1:>6}-{first + 1000:<6} {1000 / window:8.0f} /s")
    if times:
        print(f"  overall {len(times) / (times[-1] - started):.0f} /s")
        print(
            f"  room process CPU: {1000 * cpu_used / len(times):.2f} ms per visitor "
            f"(= {len(times) / cpu_used:.0f} /s per core it has to itself)"
        )
    if not tokens:
        return
    random.shuffle(tokens)
    poll_deadline = min(deadline, time.monotonic() + args.poll_seconds)
    cpu_before = cpu_seconds(pid)
    polls, _, errors, started, states = run_phase(
        base, "/polling", 10_000_000, args.workers, tokens, poll_deadline
    )
    cpu_used = cpu_seconds(pid) - cpu_before
    elapsed = (polls[-1] - started) if polls else 1.0
    print(
        f"polls at /polling with {len(tokens)} queued: {len(polls)} in {elapsed:.1f} s, "
        f"{len(polls) / elapsed:.0f} /s, {errors} errors"
    )
    if polls:
        print(
            f"  room process CPU: {1000 * cpu_used / len(polls):.2f} ms per poll "
            f"(= {len(polls) / cpu_used:.0f} /s per core it has to itself)"
        )
        sampled = ", ".join(f"{state} {count}" for state, count in states.most_common())
        print(f"  answers (every 50th): {sampled}")
    if args.admit_rate and not args.url:
        stop_polling = threading.Event()
        pollers = threading.Thread(
            target=lambda: run_phase(
                base, "/polling", 10_000_000, 4, tokens, deadline, stop_polling
            ),
            daemon=True,
        )
        pollers.start()
        try:
            admissions(config, len(tokens), args, deadline)
        finally:
            stop_polling.set()
            pollers.join(30)


def _local_table(config: str) -> tuple[object, str]:
    """A boto3 client of the room's store (its operator endpoint) and its table's name."""
    import boto3

    record = json.loads((Path(config) / "rooms" / f"{ROOM}.local.json").read_text())["outputs"]
    client = boto3.client(
        "dynamodb",
        endpoint_url=record["EndpointUrl"],
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    )
    return client, record["TableName"]


def _number(client: object, table: str, pk: str, attribute: str) -> int:
    item = client.get_item(TableName=table, Key={"pk": {"S": pk}}, ConsistentRead=True)  # type: ignore[attr-defined]
    value = item.get("Item", {}).get(attribute)
    return int(value["N"]) if value else 0


def admissions(config: str, queued: int, args: argparse.Namespace, deadline: float) -> None:
    """Phase 3: the rate set live, then the admissions of each full minute."""
    rate, seconds = args.admit_rate, args.minute_seconds
    env = {**os.environ, "BEEKEEPER_CONFIG_DIR": config}
    # Just before a minute starts, so the trigger plans that minute at the new rate.
    next_start = (time.time() // seconds + 1) * seconds
    if next_start - time.time() < 2.0:
        next_start += seconds
    time.sleep(max(0.0, next_start - 1.5 - time.time()))
    subprocess.run(
        [str(BEEKEEPER), "rate", ROOM, str(rate), "--local"], env=env, check=True,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    client, table = _local_table(config)
    print(f"admissions at {rate:,} per {seconds:g} s minute, {queued:,} visitors queued:")
    minute = round(next_start / seconds)
    measured: list[int] = []
    while len(measured) < args.admit_minutes and time.monotonic() < deadline:
        start = minute * seconds
        time.sleep(max(0.0, start - time.time()))
        # The trigger's plan for the minute: the demand it found (the queue's depth plus the
        # last minute's arrivals).
        time.sleep(max(0.0, start + 1.0 - time.time()))
        backlog = _number(client, table, f"minute#{minute}", "demand")
        if backlog < rate:
            print(f"  minute {minute}: a demand of only {backlog:,} at its start; stopping")
            break
        # The minute's consumers finish their last batch (and long poll) just after its end.
        time.sleep(max(0.0, start + seconds + 3 - time.time()))
        admitted = _number(client, table, f"minute#{minute}", "admitted")
        measured.append(admitted)
        print(
            f"  minute {minute}: {admitted:,} admitted ({100 * (admitted - rate) / rate:+.2f}% of "
            f"the rate), demand {backlog:,} at its start"
        )
        minute += 1
    if measured:
        worst = max(abs(a - rate) / rate for a in measured)
        print(f"  {len(measured)} full minutes, the furthest {100 * worst:.2f}% from the rate")


@contextmanager
def _given(url: str, pid: int | None) -> Iterator[tuple[str, int | None]]:
    yield url.rstrip("/"), pid


if __name__ == "__main__":
    main()
