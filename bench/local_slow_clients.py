"""A visitor's latency at a local room while one client holds many slow connections.

    .venv/bin/python bench/local_slow_clients.py [--connections 1100 2000] [--seconds 20]
        [--source 127.0.0.1] [--visitor-timeout 10]

Starts `beekeeper local` (the `beekeeper` beside this Python), then for each count: a client
(tests/support/slow_clients.py) opens that many connections from --source, each sending a
request line and then one header byte every 2 s, never finishing its head, and opening again
every connection the room closes; meanwhile a visitor asks the room twice a second, alternately
for the page (`/room`, from the edge's cache) and for its place (`/polling`, through the
gateway's template), each on a new connection, and the script prints the visitor's latencies
(p50, p95, max) and how many requests went unanswered within --visitor-timeout. A first row
holds no slow connection. Bounded: every phase lasts --seconds; everything targets loopback.

The script raises its own soft limit of open files (ulimit -n) to hold the connections.
Run it with another checkout's Python to measure that checkout's room.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import local_room

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.slow_clients import (  # noqa: E402
    SlowClients,
    holding,
    raise_open_files_limit,
)


def visit(port: int, path: str, timeout: float) -> float | None:
    """Seconds until the answer's last byte, or None when none came within `timeout`."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
    except OSError:
        return None
    finally:
        connection.close()
    return time.perf_counter() - started


def measure(port: int, seconds: float, timeout: float) -> tuple[list[float], int]:
    """The visitor's latencies over `seconds`, and how many requests went unanswered."""
    latencies: list[float] = []
    unanswered = 0
    deadline = time.monotonic() + seconds
    paths = ("/room", "/polling")
    turn = 0
    while time.monotonic() < deadline:
        took = visit(port, paths[turn % 2], timeout)
        turn += 1
        if took is None:
            unanswered += 1
        else:
            latencies.append(took)
        time.sleep(0.5)
    return latencies, unanswered


def row(label: str, latencies: list[float], unanswered: int, extra: str = "") -> str:
    if latencies:
        ordered = sorted(latencies)
        p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
        figures = (
            f"p50 {statistics.median(ordered) * 1000:7.1f} ms, p95 {p95 * 1000:7.1f} ms, "
            f"max {ordered[-1] * 1000:7.1f} ms"
        )
    else:
        figures = "no answer at all"
    answered = f"{len(latencies)} answered, {unanswered} unanswered"
    return f"{label:>24}: {figures}; {answered}{extra}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, nargs="+", default=[1_100, 2_000])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--source", default="127.0.0.1")
    parser.add_argument("--visitor-timeout", type=float, default=10.0)
    args = parser.parse_args()
    soft = raise_open_files_limit(max(args.connections) + 1_024)
    print(f"open files allowed to this process: {soft}")
    with (
        tempfile.TemporaryDirectory() as config,
        local_room.running_room("slowclients", ["--rate", "60"], config) as room,
    ):
        port = urlsplit(room.base).port
        assert port is not None
        latencies, unanswered = measure(port, args.seconds, args.visitor_timeout)
        print(row("no slow connections", latencies, unanswered))
        for count in args.connections:
            clients = SlowClients(port, count, source=args.source)
            with holding(clients):
                latencies, unanswered = measure(port, args.seconds, args.visitor_timeout)
                extra = (
                    f"; the slow client opened {clients.opened} connections, "
                    f"{clients.closed_by_server} of them closed by the room"
                )
            print(row(f"{count:,} slow connections", latencies, unanswered, extra))
            # Let the room close what the client left behind before the next phase.
            time.sleep(2)


if __name__ == "__main__":
    main()
