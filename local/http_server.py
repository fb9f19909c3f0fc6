"""waitress, run in a thread we can stop: the local gateway's and the demo shop's server.

waitress binds its socket when the server is created, so a busy port is found before the room
starts anything else; `stop()` ends the loop from its own thread and closes every connection.
"""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Callable
from typing import Any

from waitress import wasyncore
from waitress.server import create_server

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


class ServerThread:
    def __init__(self, app: WsgiApp, *, port: int, threads: int, what: str) -> None:
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
        try:
            self._server: Any = create_server(
                app,
                sockets=[listener],
                threads=threads,
                ident="beekeeper-local",
                # Many load-generator connections at once; waitress' default is 100.
                connection_limit=1000,
                channel_timeout=30,
                clear_untrusted_proxy_headers=True,
            )
        except BaseException:
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
