"""Local mode's edge (local/edge.py): the stack's cache policy honoured, per-visitor routes
never cached and forwarding only what the distribution forwards, a stale document served while
the origin fails. The origin is a WSGI double recording what reached it."""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from beekeeper.core.datamodel import COOKIE_NAME
from beekeeper.core.edge import behaviors
from beekeeper.core.headers import MARKETING_LINK_HEADERS, PAGE_HEADERS, SHARED_CHALLENGE_HEADERS
from beekeeper.core.join_work import SHARED_SECONDS
from beekeeper.core.routes import PAGE_EDGE_SECONDS
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS
from beekeeper.local.edge import METHOD_REFUSED_BODY, Edge


@dataclass
class Origin:
    """Answers every path with `status` and `headers`; records each request's environ."""

    status: str = "200 OK"
    headers: dict[str, str] = field(default_factory=lambda: {"Cache-Control": "public, max-age=2"})
    seen: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        self.seen.append(dict(environ))
        start_response(self.status, [*self.headers.items(), ("Set-Cookie", "x=1")])
        return [f"answer {len(self.seen)}".encode()]


@dataclass
class Clock:
    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def ask(
    edge: Edge, path: str, *, method: str = "GET", query: str = "", **headers: str
) -> tuple[str, dict[str, str], bytes]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8080",
        "wsgi.input": io.BytesIO(b""),
        "HTTP_HOST": "127.0.0.1:8080",
        "HTTP_X_FORWARDED_PROTO": "https",
    }
    for name, value in headers.items():
        key = "CONTENT_TYPE" if name == "Content_Type" else "HTTP_" + name.upper()
        environ[key] = value
    answered: dict[str, Any] = {}

    def start(status: str, response_headers: list[tuple[str, str]]) -> None:
        answered["status"], answered["headers"] = status, dict(response_headers)

    body = b"".join(edge(environ, start))
    return answered["status"], answered["headers"], body


def test_the_shared_state_is_kept_exactly_as_long_as_its_cache_control_says() -> None:
    origin, clock = Origin(), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    assert ask(edge, "/state")[2] == b"answer 1"
    for age in (0.5, 1.0, 1.999):
        clock.now = 1_800_000_000.0 + age
        status, headers, body = ask(edge, "/state", Cookie=f"{COOKIE_NAME}=x")
        assert (status, body, headers["Age"]) == ("200 OK", b"answer 1", str(int(age)))
        assert headers["X-Cache"] == "Hit from the local edge"
    clock.now = 1_800_000_000.0 + STATE_MAX_AGE_SECONDS
    assert ask(edge, "/state")[2] == b"answer 2"
    assert len(origin.seen) == 2
    assert edge.counts.edge["/state"] == 5 and edge.counts.origin["/state"] == 2
    # Nothing of the request is in the key or forwarded; no cookie is set from a shared copy.
    assert "HTTP_COOKIE" not in origin.seen[-1] and origin.seen[-1]["QUERY_STRING"] == ""
    assert "Set-Cookie" not in ask(edge, "/state")[1]


@pytest.mark.parametrize(
    ("cache_control", "kept"),
    [
        ("public, max-age=2", 2),
        ("public, max-age=3600", STATE_MAX_AGE_SECONDS),  # never beyond the policy's maximum
        ("no-store", 0),
        ("public, max-age=60, no-cache", 0),
        (None, 0),  # the default TTL is 0
    ],
)
def test_the_policy_s_maximum_bounds_what_the_origin_asks(
    cache_control: str | None, kept: int
) -> None:
    origin, clock = (
        Origin(headers={"Cache-Control": cache_control} if cache_control else {}),
        Clock(),
    )
    edge = Edge(origin, mode="rate", clock=clock)
    ask(edge, "/state")
    clock.now += kept - 0.01 if kept else 0
    ask(edge, "/state")
    assert len(origin.seen) == (1 if kept else 2)


def test_the_page_is_kept_a_minute_by_its_own_headers() -> None:
    origin, clock = Origin(headers=dict(PAGE_HEADERS)), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    ask(edge, "/room")
    clock.now += PAGE_EDGE_SECONDS - 1
    ask(edge, "/room")
    clock.now += 1
    ask(edge, "/room")
    assert len(origin.seen) == 2


@pytest.mark.parametrize("mode", ["rate", "capacity"])
def test_every_per_visitor_route_reaches_the_origin_with_only_what_it_reads(mode: str) -> None:
    origin = Origin(headers={"Cache-Control": "no-store"})
    edge = Edge(origin, mode=mode, clock=Clock())  # type: ignore[arg-type]
    visitor = [b for b in behaviors(mode) if b.cookies]  # type: ignore[arg-type]
    assert {b.path for b in visitor} >= {"/beekeeper", "/polling", "/client"}
    for behavior in visitor:
        method = "POST" if "POST" in behavior.methods else "GET"
        for _ in range(2):
            status, headers, _ = ask(
                edge,
                behavior.path,
                method=method,
                query="token=t&redeem=1",
                Cookie=f"zz=1; {COOKIE_NAME}=tok; aa=2",
                Origin="https://shop.example",
                Referer="https://elsewhere.example/",
                Accept_Language="de-DE",
                Content_Type="text/plain",
            )
            assert status == "200 OK" and "Age" not in headers
        seen = origin.seen[-1]
        assert seen["HTTP_COOKIE"] == f"{COOKIE_NAME}=tok"
        assert seen["QUERY_STRING"] == "token=t&redeem=1"
        assert seen["HTTP_ORIGIN"] == "https://shop.example"
        assert seen["HTTP_ACCEPT_LANGUAGE"] == "de-DE"
        assert seen["CONTENT_TYPE"] == "text/plain"
        # What the distribution does not forward: the viewer's Host, Referer, X-Forwarded-Proto.
        assert {"HTTP_HOST", "HTTP_REFERER", "HTTP_X_FORWARDED_PROTO"}.isdisjoint(seen)
    assert len(origin.seen) == 2 * len(visitor)


def test_a_method_the_path_does_not_allow_is_refused_at_the_edge() -> None:
    origin = Origin()
    edge = Edge(origin, mode="rate", clock=Clock())
    for path, method in (("/room", "POST"), ("/polling", "DELETE"), ("/state", "OPTIONS")):
        status, _, body = ask(edge, path, method=method)
        assert (status, body) == ("403 Forbidden", METHOD_REFUSED_BODY)
    assert origin.seen == []


def test_a_stale_document_is_served_while_the_origin_fails_and_errors_are_never_kept() -> None:
    origin, clock = Origin(), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    ask(edge, "/state")
    origin.status = "503 Service Unavailable"
    origin.headers = {"Cache-Control": "no-store", "Retry-After": "5"}
    clock.now += 30
    status, headers, body = ask(edge, "/state")
    # The copy the pages had, 30 s old: they extrapolate from its history meanwhile.
    assert (status, body, headers["Age"]) == ("200 OK", b"answer 1", "30")
    # A visitor's error is never someone else's answer.
    assert ask(edge, "/polling")[0] == ask(edge, "/polling")[0] == "503 Service Unavailable"
    assert len(origin.seen) == 4


def test_the_marketing_links_shared_answer_is_kept_under_the_visitors_key() -> None:
    """One copy for every browser that follows the bare link; a cookie, a token header, another
    Accept or a solution is a key of its own (core.routes.MARKETING_LINK_KEY)."""
    origin, clock = Origin(status="302 Found", headers=dict(SHARED_CHALLENGE_HEADERS)), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    browser = "text/html,application/xhtml+xml"
    first = ask(edge, "/beekeeper", query="utm_source=mail&id=1", Accept=browser)
    assert (first[0], first[2]) == ("302 Found", b"answer 1")
    # Another recipient's tracking parameters are not in the key: the same copy.
    again = ask(edge, "/beekeeper", query="utm_source=mail&id=2", Accept=browser)
    assert (again[2], again[1]["Age"]) == (b"answer 1", "0")
    assert len(origin.seen) == 1
    for different in (
        {"Cookie": f"{COOKIE_NAME}=tok"},
        {"Beekeeper_Token": "tok"},
        {"Accept": "application/json"},
    ):
        ask(edge, "/beekeeper", **{"Accept": browser, **different})
    ask(edge, "/beekeeper", query="work=solution", Accept=browser)
    assert len(origin.seen) == 5
    # Each of those is kept under its own key for the lifetime, and no longer.
    ask(edge, "/beekeeper", Accept=browser, Cookie=f"aa=1; {COOKIE_NAME}=tok")
    assert len(origin.seen) == 5
    clock.now += SHARED_SECONDS
    assert ask(edge, "/beekeeper", Accept=browser)[2] == b"answer 6"


def test_the_marketing_links_answers_about_one_visitor_are_never_kept() -> None:
    origin = Origin(status="302 Found", headers=dict(MARKETING_LINK_HEADERS))
    edge = Edge(origin, mode="rate", clock=Clock())
    for _ in range(3):
        ask(edge, "/beekeeper", Accept="text/html")
    assert len(origin.seen) == 3
