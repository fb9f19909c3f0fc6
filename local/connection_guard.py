"""What a local room's servers allow a connection: waitress, with a guard on its connections.

waitress alone lets one client lock every visitor out: it holds at most `connection_limit`
connections and stops accepting beyond them, closes a connection only after `channel_timeout`
seconds without a byte (so a client sending a header line every few seconds keeps it for
ever), and lets one address hold them all. About a thousand such connections kept every
visitor of a local room waiting. The guard (a subclass of waitress' server, its channel and
its request parser) keeps waitress' HTTP and adds:

- **A request's head arrives within HEAD_SECONDS of its first byte**, and the whole request
  (its body too) within REQUEST_SECONDS; a connection that dawdles is closed however often it
  sends a byte. A connection with nothing to say is closed after IDLE_SECONDS (waitress'
  `channel_timeout`: the wait before a request's first byte, and between requests).
- **One address holds at most `per_address` connections**: the one past it takes the place of
  that address's oldest connection that waits for a request (one whose request has arrived,
  read or not, does not wait).
- **A new connection always finds a place**: when all `limit` are held, it takes the place of
  the oldest waiting connection of the address that holds the most. A connection whose request
  is being served, or whose answer is being sent, is never closed for another; only when every
  one is, the new connection is closed at once.

So a client holding thousands of slow or idle connections holds at most `per_address` of them,
each for seconds, and a visitor's request is answered meanwhile (bench/local_slow_clients.py
measures it; tests/integration/test_slow_clients.py holds it). A head larger than
MAX_HEAD_BYTES is answered 431 by waitress (`max_request_header_size`), so a slow connection
holds little memory either.

It reads waitress' internals (its server's `active_channels` and `maintenance`, a channel's
`requests`, `request`, `total_outbufs_len` and `addr`, a parser's `headers_finished` and
`completed`), so the `local` extra pins waitress to the range tested here.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import TcpWSGIServer

log = logging.getLogger("beekeeper.local.http")

HEAD_SECONDS = 5
REQUEST_SECONDS = 30
IDLE_SECONDS = 10
# A request line and headers longer than this are refused (431) before they are kept whole:
# the edge takes no more than CloudFront's 20,480 bytes anyway (core.edge.MAX_REQUEST_BYTES).
MAX_HEAD_BYTES = 32 * 1024
# How often the guard looks for connections past their deadlines (waitress' cleanup_interval).
SWEEP_SECONDS = 1
# Connections accepted in one pass of the server's loop, at most.
ACCEPT_BATCH = 256


@dataclass(frozen=True)
class ConnectionLimits:
    limit: int = 1_000  # connections one server holds at once
    per_address: int = 500  # of them from one address

    def __post_init__(self) -> None:
        if not 0 < self.per_address <= self.limit:
            raise ValueError("per_address must be between 1 and the limit")

    def within(self, descriptors: int) -> ConnectionLimits:
        """These limits, made to fit `descriptors` open files (at least 16 connections)."""
        limit = max(16, min(self.limit, descriptors))
        share = max(1, limit * self.per_address // self.limit)
        return ConnectionLimits(limit, min(self.per_address, share))


# What every server of a local room holds.
DEFAULT_LIMITS = ConnectionLimits()


class TimedRequestParser(HTTPRequestParser):
    """waitress' parser, which also knows when its request's first byte came."""

    def __init__(self, adj: Any) -> None:
        super().__init__(adj)
        self.started = time.time()  # waitress' own clock: maintenance() is handed time.time()


class GuardedChannel(HTTPChannel):
    parser_class = TimedRequestParser
    counted = False  # whether the server's count by address holds this connection

    def __init__(self, server: Any, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        super().__init__(server, sock, addr, adj, map)
        if self.connected and self._fileno in server.active_channels:
            server.by_address[self.address] += 1
            server.arrivals.setdefault(self.address, deque()).append(self)
            self.counted = True

    @property
    def address(self) -> str:
        return str(self.addr[0])

    def del_channel(self, map: Any = None) -> None:
        super().del_channel(map)
        if self.counted:
            self.counted = False
            self.server.by_address[self.address] -= 1
            if self.server.by_address[self.address] <= 0:
                del self.server.by_address[self.address]
                self.server.arrivals.pop(self.address, None)

    @property
    def waiting(self) -> bool:
        """Neither a request in service, nor an answer being sent, nor bytes that arrived and
        are still to be read: it waits for a request."""
        return not self.requests and not self.total_outbufs_len and not self._unread()

    def _unread(self) -> bool:
        """Whether the client has sent bytes this server has not read yet. A busy machine runs
        the server's loop late: a visitor whose request has arrived is not the one to give way,
        however many connections its address opened since."""
        try:
            return bool(self.socket.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except OSError:  # nothing arrived (EAGAIN), or the client reset it: nothing to keep
            return False


class GuardedServer(TcpWSGIServer):
    channel_class = GuardedChannel

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        self.limits = limits
        self.by_address: Counter[str] = Counter()
        # Each address's connections, oldest first (closed ones are dropped when met): the one
        # to give way is found without looking at every connection, however many arrive.
        self.arrivals: dict[str, deque[GuardedChannel]] = {}
        super().__init__(*args, **kwargs)

    def handle_accept(self) -> None:
        # Every connection waiting to be accepted, up to ACCEPT_BATCH: one a loop would leave a
        # visitor behind a burst of thousands, each a pass over every connection held.
        for _ in range(ACCEPT_BATCH):
            try:
                pair = self.accept()
            except OSError:
                return  # out of open files, say: the loop comes back when one is free
            if pair is None:
                return  # none waiting
            connection, address = pair
            try:
                self.set_socket_options(connection)
            except OSError:
                connection.close()  # the client went away before it was accepted
                continue
            if not self._make_room(str(address[0])):
                log.warning("every connection is being served: a new one was closed at once")
                connection.close()
                continue
            self.channel_class(self, connection, self.fix_addr(address), self.adj, map=self._map)

    def _make_room(self, address: str) -> bool:
        """Whether a connection from `address` may be held, closing one that waits if needed."""
        if self.by_address[address] >= self.limits.per_address:
            return self._close_oldest_waiting([address])
        if len(self.active_channels) >= self.limits.limit:
            crowded = [found for found, _ in self.by_address.most_common()]
            return self._close_oldest_waiting(crowded)
        return True

    def _close_oldest_waiting(self, addresses: list[str]) -> bool:
        """Closes the oldest waiting connection of the first of `addresses` that has one."""
        for address in addresses:
            arrivals = self.arrivals.get(address, deque())
            for _ in range(len(arrivals)):
                channel = arrivals.popleft()
                if not channel.counted:
                    continue  # closed already
                if channel.waiting:
                    channel.handle_close()
                    return True
                arrivals.append(channel)  # being served: it keeps its place
        return False

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # waitress: closes what has been idle for channel_timeout
        for address, arrivals in self.arrivals.items():
            self.arrivals[address] = deque(channel for channel in arrivals if channel.counted)
        for channel in list(self.active_channels.values()):
            request = channel.request
            if request is None or channel.requests:
                continue  # no request arriving, or one being served (a pipelined next one)
            age = now - request.started
            if age > REQUEST_SECONDS or (age > HEAD_SECONDS and not request.headers_finished):
                channel.will_close = True


def adjustments(limits: ConnectionLimits) -> dict[str, Any]:
    """The waitress adjustments the guard's server runs with."""
    return {
        # The guard holds its own limit; waitress' (counting its listening socket and trigger
        # too) must never stop the accepting that makes room.
        "connection_limit": limits.limit + 16,
        "channel_timeout": IDLE_SECONDS,
        "cleanup_interval": SWEEP_SECONDS,
        "max_request_header_size": MAX_HEAD_BYTES,
    }
