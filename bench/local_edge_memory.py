"""A local room's memory while clients ask the marketing link with ever new cache keys.

    .venv/bin/python bench/local_edge_memory.py [--big 400] [--big-bytes 100000] [--keys 10000]
        [--key-bytes 1000]

Starts `beekeeper local` (the `beekeeper` beside this Python) and prints the room process's
resident memory (VmRSS) and what the edge answered:
1. at rest;
2. after --big requests to /beekeeper, each with a distinct Accept header of --big-bytes;
3. after --keys requests, each with a distinct Accept header of --key-bytes: each a key of
   its own for the edge's cache, whose copies live 2 s;
4. 5 s later, after one more request, once those copies have expired;
then 3 and 4 again for each further --rounds (new keys each time): memory the first round
freed is used again, so a room's memory stays where the first round left it.
Every request goes over one keep-alive connection to loopback. Run it with another checkout's
Python to measure that checkout's room.
"""

from __future__ import annotations

import argparse
import http.client
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import local_room


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def ask_all(port: int, accepts: list[str]) -> Counter[int]:
    statuses: Counter[int] = Counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for accept in accepts:
            try:
                connection.request("GET", "/beekeeper", headers={"Accept": accept})
                response = connection.getresponse()
                response.read()
                statuses[response.status] += 1
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
            except (OSError, http.client.HTTPException):
                statuses[0] += 1  # no answer: the connection was closed
                connection.close()
    finally:
        connection.close()
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", type=int, default=400)
    parser.add_argument("--big-bytes", type=int, default=100_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--key-bytes", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as config,
        local_room.running_room("edgememory", ["--rate", "60"], config) as room,
    ):
        port = urlsplit(room.base).port
        assert port is not None
        ask_all(port, ["text/html"])
        print(f"at rest: {rss_mib(room.pid):.1f} MiB")
        big = [f"text/html;q={i}".ljust(args.big_bytes, "a") for i in range(args.big)]
        statuses = ask_all(port, big)
        print(f"after {args.big} x {args.big_bytes:,} B Accept: {rss_mib(room.pid):.1f} MiB, "
              f"answers {dict(statuses)}")  # fmt: skip
        for round_ in range(1, args.rounds + 1):
            keys = [
                f"text/html;r={round_};k={i}".ljust(args.key_bytes, "a") for i in range(args.keys)
            ]
            statuses = ask_all(port, keys)
            print(f"round {round_}: after {args.keys:,} distinct keys of {args.key_bytes:,} B: "
                  f"{rss_mib(room.pid):.1f} MiB, answers {dict(statuses)}")  # fmt: skip
            time.sleep(5)
            ask_all(port, ["text/html"])
            print(f"round {round_}: 5 s later, the keys expired: {rss_mib(room.pid):.1f} MiB")


if __name__ == "__main__":
    main()
