"""A loopback double of the room's HTTP interface for driving the page in a real browser.

It serves what the stack and local mode serve on one origin, at the root as local mode does
and under /prod as an API Gateway stage does: the page at /room (render_page),
/polling answering from a script of answers given by the test (the last one repeats), the
shared state /state from a script of documents (each a dict, or a function of the time asked;
without one /state answers a body the page can not use, so the page falls back to /polling as
it does when the room's state can not be read), the marketing link /beekeeper and a stand-in
shop at /shop; and capacity mode's /enter (a redirect to /shop) and POST /leave (answers
{"left": true}). Every /polling, /enter and /leave request is recorded with its Cookie header,
and every /state request with its time, so a test can check what the page sent and how often.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from beekeeper.core.settings import RoomSettings
from beekeeper.waiting_room_site import render_page

STAGE_PREFIX = "/prod"

# An answer is a JSON body (a dict) or an HTTP status code standing for a failed request.
Answer = dict[str, object] | int


def waiting(
    position: int,
    eta_seconds: int,
    *,
    poll_after: int = 20,
    rate: int = 100,
    slowed: bool = False,
    updated_at: int = 1_790_000_000,
) -> dict[str, object]:
    """A /polling answer for a waiting visitor (docs/data-model.md)."""
    return {
        "allow": False,
        "state": "waiting",
        "position": position,
        "eta_seconds": eta_seconds,
        "poll_after": poll_after,
        "rate": rate,
        "slowed": slowed,
        "updated_at": updated_at,
    }


def waiting_for_places(
    position: int,
    eta_seconds: int,
    *,
    max_inside: int = 500,
    inside: int = 500,
    turnover: int = 4,
    **others: Any,
) -> dict[str, object]:
    """A capacity-mode room's /polling answer: `waiting` plus how full the shop is."""
    return {
        **waiting(position, eta_seconds, **others),
        "max_inside": max_inside,
        "inside": inside,
        "turnover": turnover,
        "full": inside >= max_inside,
    }


@dataclass(frozen=True)
class Visit:
    """A request to /enter or /leave: its path, Cookie header, Content-Type and body."""

    path: str
    cookie: str | None
    content_type: str | None = None
    body: bytes = b""


@dataclass
class PollingDouble:
    settings: RoomSettings
    answers: list[Answer] = field(default_factory=list)
    polls: list[str | None] = field(default_factory=list)  # each poll's Cookie header
    poll_paths: list[str] = field(default_factory=list)
    enters: list[Visit] = field(default_factory=list)
    leaves: list[Visit] = field(default_factory=list)
    # The shared state: documents (or functions of the epoch time asked), the last repeating.
    documents: list[dict[str, object] | Callable[[float], dict[str, object]]] = field(
        default_factory=list
    )
    document_requests: list[float] = field(default_factory=list)
    clock: Callable[[], float] = time.time
    base_url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *answers: Answer) -> None:
        with self._lock:
            self.answers = list(answers)
            self.polls.clear()
            self.poll_paths.clear()
            self.enters.clear()
            self.leaves.clear()

    def next_answer(self, path: str, cookie: str | None) -> Answer:
        with self._lock:
            self.polls.append(cookie)
            self.poll_paths.append(path)
            if not self.answers:
                return 503
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]

    def next_document(self) -> dict[str, object]:
        with self._lock:
            now = self.clock()
            self.document_requests.append(now)
            if not self.documents:
                return {}
            found = self.documents.pop(0) if len(self.documents) > 1 else self.documents[0]
        body = found(now) if callable(found) else dict(found)
        return {"now": round(now * 1000), **body}

    def url(self, path: str) -> str:
        return self.base_url + path


def _handler(double: PollingDouble) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            full_path = urlsplit(self.path).path
            # Everything may sit under a stage prefix, as in API Gateway: /prod/room.
            path = full_path.removeprefix(STAGE_PREFIX)
            if path == "/room":
                self._send(200, "text/html; charset=utf-8", render_page(double.settings))
            elif path == "/polling":
                answer = double.next_answer(full_path, self.headers.get("Cookie"))
                if isinstance(answer, int):
                    self._send(answer, "text/plain", "unavailable")
                else:
                    self._send(200, "application/json", json.dumps(answer))
            elif path == "/state":
                self._send(200, "application/json", json.dumps(double.next_document()))
            elif path == "/enter":
                double.enters.append(Visit(full_path, self.headers.get("Cookie")))
                # Like the room's /enter: on to the shop, with the token (any will do here).
                self._redirect(full_path.removesuffix("/enter") + "/shop?beekeeper_token=entered")
            elif path in ("/beekeeper", "/shop"):
                title = "Marketing link" if path == "/beekeeper" else "The shop"
                body = f'<!doctype html><html lang="en"><title>{title}</title><h1>{title}</h1>'
                self._send(200, "text/html; charset=utf-8", body)
            else:
                self._send(404, "text/plain", "not found")

        def do_POST(self) -> None:
            full_path = urlsplit(self.path).path
            if full_path.removeprefix(STAGE_PREFIX) != "/leave":
                self._send(404, "text/plain", "not found")
                return
            length = int(self.headers.get("Content-Length") or 0)
            visit = Visit(
                full_path,
                self.headers.get("Cookie"),
                self.headers.get("Content-Type"),
                self.rfile.read(length),
            )
            double.leaves.append(visit)
            answer = {"left": len(double.leaves) == 1}
            self._send(200, "application/json", json.dumps(answer))

        def _redirect(self, location: str) -> None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()

        def _send(self, status: int, content_type: str, body: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the tests assert on what was served, not on a log."""

    return Handler


@contextmanager
def serve(settings: RoomSettings) -> Iterator[PollingDouble]:
    double = PollingDouble(settings=settings)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(double))
    host, port = server.server_address[:2]
    double.base_url = f"http://{host!s}:{port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield double
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
