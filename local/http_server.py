"""waitress, run in a thread we can stop: every server of a local room (its public port, the
live view, the demo shop, the operator endpoint).

waitress binds its socket when the server is created, so a busy port is found before the room
starts anything else; `stop()` ends the loop from its own thread and closes every connection.
What a connection is allowed (deadlines, how many one address holds, who gives way when all
are held) is local/connection_guard.py's.
"""

from __future__ import annotations

import errno
import logging
import resource
import socket
import threading
from collections.abc import Callable
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.task import ThreadedTaskDispatcher

from beekeeper.local.connection_guard import (
    DEFAULT_LIMITS,
    ConnectionLimits,
    GuardedServer,
    adjustments,
)

log = logging.getLogger("beekeeper.local.http")

# The WSGI interface (PEP 3333) the room's servers and apps share.
WsgiApp = Callable[..., Any]
StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class PortInUseError(Exception):
    def __init__(self, port: int, what: str, error: OSError) -> None:
        if error.errno == errno.EADDRINUSE:
            reason = "is already in use"
        elif error.errno == errno.EACCES:
            reason = "needs privileges this user does not have"
        else:
            reason = f"can not be used ({error.strerror})"
        super().__init__(
            f"port {port} {reason}, so the {what} can not listen on it; "
            "stop what uses it or pick another port"
        )


# Open files a process keeps beside its servers' connections (its own files, the clients the
# room's code opens, the live view's readers).
SPARE_DESCRIPTORS = 256


class _Descriptors:
    """The open files this process's servers have set aside for their connections: each server
    takes what its limit needs, raising the soft limit up to the hard one when it must."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reserved = 0

    def reserve(self, wanted: int) -> int:
        """How many connections a server may hold, at most `wanted`."""
        with self._lock:
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            needed = self.reserved + wanted + SPARE_DESCRIPTORS
            if needed > soft and (hard == resource.RLIM_INFINITY or soft < hard):
                raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
                try:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                    soft = raised
                except (ValueError, OSError):
                    pass
            granted = max(0, min(wanted, soft - SPARE_DESCRIPTORS - self.reserved))
            self.reserved += granted
            return granted

    def release(self, count: int) -> None:
        with self._lock:
            self.reserved -= count


DESCRIPTORS = _Descriptors()


class ServerThread:
    def __init__(
        self,
        app: WsgiApp,
        *,
        port: int,
        threads: int,
        what: str,
        limits: ConnectionLimits = DEFAULT_LIMITS,
    ) -> None:
        # Bound here, before waitress starts its worker threads, so a busy port leaves nothing
        # running behind it.
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # A room restarted at once may bind its port again (TIME_WAIT); a listening socket
        # still refuses it.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind(("127.0.0.1", port))
            listener.listen(1024)
        except OSError as error:
            listener.close()
            raise PortInUseError(port, what, error) from error
        self._descriptors = DESCRIPTORS.reserve(limits.limit)
        if self._descriptors < limits.limit:
            log.warning(
                "the %s holds at most %d connections at once: this process may open only so "
                "many files (ulimit -n)",
                what,
                max(16, self._descriptors),
            )
        self.limits = limits.within(self._descriptors)
        try:
            adj = Adjustments(
                sockets=[listener],
                threads=threads,
                ident="beekeeper-local",
                clear_untrusted_proxy_headers=True,
                **adjustments(self.limits),
            )
            dispatcher = ThreadedTaskDispatcher()
            dispatcher.set_thread_count(threads)
            self._server: Any = GuardedServer(
                app,
                {},
                True,
                listener,
                dispatcher=dispatcher,
                adj=adj,
                bind_socket=False,
                sockinfo=(listener.family, listener.type, listener.proto, listener.getsockname()),
                limits=self.limits,
            )
        except BaseException:
            DESCRIPTORS.release(self._descriptors)
            listener.close()
            raise
        self.port: int = int(listener.getsockname()[1])
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, name=f"beekeeper-http-{what}", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def connections_from(self, address: str) -> int:
        """How many connections from `address` the server holds now."""
        return int(self._server.by_address.get(address, 0))

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        else:  # never started: just release the socket
            self._close()

    def _serve(self) -> None:
        try:
            while not self._stopping.is_set():
                wasyncore.loop(timeout=0.2, map=self._server._map, use_poll=True, count=1)
        finally:
            self._close()

    def _close(self) -> None:
        self._server.task_dispatcher.shutdown(timeout=2)
        wasyncore.close_all(self._server._map)
        DESCRIPTORS.release(self._descriptors)
        self._descriptors = 0
