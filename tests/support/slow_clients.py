"""A client holding many slow connections to a server on this machine, for the slow-client test
(tests/integration/test_slow_clients.py) and its benchmark (bench/local_slow_clients.py).

Each connection sends a request line, then one byte of a header line every `beat_seconds`, and
never finishes its head. A connection the server closes is opened again at the next beat, so
the client keeps trying to hold `count` of them. Only loopback addresses are ever a target, and
the client stops when told to (or when the block that started it ends).
"""

from __future__ import annotations

import ipaddress
import resource
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

REQUEST_LINE = b"GET /state HTTP/1.1\r\nHost: 127.0.0.1\r\n"
HEADER_BYTES = b"X-Slow: a\r\n"


def raise_open_files_limit(wanted: int) -> int:
    """Raises this process's soft limit of open files (ulimit -n) to `wanted`, within the hard
    limit; returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


@dataclass
class _Slot:
    sock: socket.socket | None = None
    sent: int = 0  # bytes of HEADER_BYTES sent after the request line


@dataclass
class SlowClients:
    port: int
    count: int
    source: str = "127.0.0.1"  # the address the connections come from
    beat_seconds: float = 2.0
    opened: int = 0  # connections opened, reopened ones included
    closed_by_server: int = 0
    _slots: list[_Slot] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if not ipaddress.ip_address(self.source).is_loopback:
            raise ValueError("slow clients only ever connect from and to loopback addresses")
        self._slots = [_Slot() for _ in range(self.count)]

    def open_now(self) -> int:
        """Opens every connection not open, at once; returns how many are open."""
        for slot in self._slots:
            if slot.sock is None:
                self._open(slot)
        return sum(1 for slot in self._slots if slot.sock is not None)

    def _open(self, slot: _Slot) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.bind((self.source, 0))
            sock.connect_ex(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            return
        slot.sock, slot.sent = sock, -1  # -1: the request line is still to be sent
        self.opened += 1

    def _beat(self, slot: _Slot) -> None:
        if slot.sock is None:
            self._open(slot)
            return
        data = REQUEST_LINE if slot.sent < 0 else HEADER_BYTES[slot.sent % len(HEADER_BYTES) :][:1]
        try:
            slot.sock.send(data)
        except BlockingIOError:
            return  # still connecting: the next beat
        except OSError:
            self.closed_by_server += 1
            slot.sock.close()
            slot.sock = None
            return
        slot.sent += 1

    def run(self) -> None:
        while not self._stop.is_set():
            for slot in self._slots:
                self._beat(slot)
            self._stop.wait(self.beat_seconds)

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        for slot in self._slots:
            if slot.sock is not None:
                slot.sock.close()
                slot.sock = None


@contextmanager
def holding(clients: SlowClients) -> Iterator[SlowClients]:
    """The clients beating in a thread of their own until the block ends."""
    clients.open_now()
    thread = threading.Thread(target=clients.run, name="slow-clients", daemon=True)
    thread.start()
    try:
        yield clients
    finally:
        clients.stop()
        thread.join(timeout=30)
        clients.close()
