"""Which connection gives way when an address at its share opens one more
(local/connection_guard.py): the server's loop is not run, so the test decides exactly what
the server has read (a busy machine's late loop, made on purpose)."""

from __future__ import annotations

import socket
from collections.abc import Iterable, Iterator

import pytest

from beekeeper.local.connection_guard import ConnectionLimits
from beekeeper.local.http_server import ServerThread

REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def answer(environ: dict[str, object], start_response: object) -> Iterable[bytes]:
    raise AssertionError("the server's loop is never run here")


@pytest.fixture
def server() -> Iterator[ServerThread]:
    # Two connections from one address at most; never started: accepts happen when the test
    # calls them.
    idle = ServerThread(
        answer, port=0, threads=1, what="test server", limits=ConnectionLimits(16, 2)
    )
    try:
        yield idle
    finally:
        idle.stop()


def connect(server: ServerThread, sending: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    if sending:
        sock.sendall(sending)
    server._server.handle_accept()  # accepted (and room made) as the loop would
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.2)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False  # still held, nothing said
    except ConnectionResetError:
        return True


def test_a_request_that_arrived_unread_keeps_its_place_and_a_silent_one_gives_way(
    server: ServerThread,
) -> None:
    visitor = connect(server, REQUEST)  # the oldest: its request arrived, the loop is late
    silent = connect(server)
    assert server.connections_from("127.0.0.1") == 2
    newcomer = connect(server)
    assert closed_by_server(silent)
    assert not closed_by_server(visitor)
    assert not closed_by_server(newcomer)
    assert server.connections_from("127.0.0.1") == 2
    for sock in (visitor, silent, newcomer):
        sock.close()


def test_when_every_connection_of_the_address_has_spoken_the_newcomer_is_closed(
    server: ServerThread,
) -> None:
    first, second = connect(server, REQUEST), connect(server, REQUEST)
    newcomer = connect(server)
    assert closed_by_server(newcomer)
    assert not closed_by_server(first)
    assert not closed_by_server(second)
    for sock in (first, second, newcomer):
        sock.close()


def test_the_oldest_silent_connection_gives_way(server: ServerThread) -> None:
    oldest, younger = connect(server), connect(server)
    newcomer = connect(server)
    assert closed_by_server(oldest)
    assert not closed_by_server(younger)
    assert not closed_by_server(newcomer)
    for sock in (oldest, younger, newcomer):
        sock.close()
