"""A local room's server keeps answering visitors while one client holds thousands of slow or
idle connections (local/connection_guard.py, in local/http_server.py's ServerThread).

2,000 connections each send a header byte every 2 s and never finish their head; the client
opens again every one the server closes. A visitor's requests are answered meanwhile, from
the client's own address (the server gives the visitor the place of the client's connection
that waited longest) and from another one (one address holds at most its share). Every wait
is for a condition, bounded by the server's own timeouts, never by a fixed time: before the
guard, the visitor waited for a free connection that never came.

The test process holds the 2,000 client sockets and the server's connections: it raises its
soft limit of open files (ulimit -n) to 8,192 when it is lower, within the hard limit.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from beekeeper.local.connection_guard import HEAD_SECONDS, IDLE_SECONDS, SWEEP_SECONDS
from beekeeper.local.http_server import ServerThread
from tests.support.localroom.process import wait_until
from tests.support.slow_clients import SlowClients, holding, raise_open_files_limit

pytestmark = pytest.mark.slow

SLOW_CONNECTIONS = 2_000
OPEN_FILES = 8_192
# How long a visitor's request may take before the test calls it unanswered: the server's own
# idle timeout. The guard answers in milliseconds; without it the request waits for ever.
VISITOR_TIMEOUT = IDLE_SECONDS
# How long a dawdling connection may live, by the server's own deadlines: its head's, the
# sweep that finds it, and a second sweep's worth of a busy machine's slack.
DAWDLER_LIFETIME = HEAD_SECONDS + 2 * SWEEP_SECONDS + IDLE_SECONDS
# How long the client may take to hold its share again after the server closed some of its
# connections: a dawdler's lifetime, then the client's beat that opens them again (a loaded
# run once found 428 of its 500 held right after a visit).
REFILL_SECONDS = DAWDLER_LIFETIME + 2 * SlowClients.beat_seconds


def answer(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    if raise_open_files_limit(OPEN_FILES) < OPEN_FILES:
        pytest.skip(f"the hard limit of open files is below {OPEN_FILES} (ulimit -Hn)")
    running = ServerThread(answer, port=0, threads=4, what="test server")
    running.start()
    try:
        yield running
    finally:
        running.stop()


def visit(server: ServerThread, source: str) -> tuple[int, bytes]:
    """One request that asks the server to close the connection after its answer, read until
    the server has closed it: the server no longer counts the visitor's connection among its
    address's (it forgets a connection before it closes the socket), so the next visitor
    finds only the client's there, however late a busy machine runs the server's loop."""
    with socket.create_connection(
        ("127.0.0.1", server.port), timeout=VISITOR_TIMEOUT, source_address=(source, 0)
    ) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize(
    ("attacker", "visitor"),
    [("127.0.0.1", "127.0.0.1"), ("127.0.0.2", "127.0.0.1")],
    ids=["the visitor's own address", "another address"],
)
def test_visitors_are_answered_while_one_client_holds_thousands_of_slow_connections(
    server: ServerThread, attacker: str, visitor: str
) -> None:
    share = server.limits.per_address
    clients = SlowClients(server.port, SLOW_CONNECTIONS, source=attacker)
    with holding(clients):
        # The client holds all it may: its address's share of the server's connections.
        assert wait_until(lambda: server.connections_from(attacker) >= share, timeout=30)
        assert clients.opened >= SLOW_CONNECTIONS
        for _ in range(5):
            # Each visit comes while the client holds its whole share...
            assert wait_until(lambda: server.connections_from(attacker) >= share, REFILL_SECONDS)
            assert visit(server, visitor) == (200, b"ok")
            # ... and the client keeps it (one connection at most gave its place to the
            # visitor): the connections the head's deadline closes meanwhile are opened again
            # at the client's next beat, which a busy machine runs late.
            assert wait_until(
                lambda: server.connections_from(attacker) >= share - 1, REFILL_SECONDS
            )
        # And no more than its share: other addresses always find a place.
        assert server.connections_from(attacker) <= share


def test_a_connection_that_dawdles_over_its_head_is_closed() -> None:
    """A byte a second keeps waitress' own idle timeout from ever firing; the head's deadline
    closes it."""
    running = ServerThread(answer, port=0, threads=1, what="test server")
    running.start()
    try:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.settimeout(0.5)
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            deadline = time.monotonic() + DAWDLER_LIFETIME
            closed = False
            while time.monotonic() < deadline and not closed:
                try:
                    sock.sendall(b"X")
                    closed = sock.recv(1) == b""
                except TimeoutError:
                    continue
                except OSError:
                    closed = True
            assert closed
    finally:
        running.stop()


def test_an_idle_connection_is_closed() -> None:
    running = ServerThread(answer, port=0, threads=1, what="test server")
    running.start()
    try:
        with socket.create_connection(("127.0.0.1", running.port)) as sock:
            sock.settimeout(DAWDLER_LIFETIME)
            assert sock.recv(1) == b""  # closed by the server, never answered
    finally:
        running.stop()
