"""Local mode's edge keeps a bounded cache (local/edge_cache.py, local/edge.py): requests longer
than CloudFront takes are refused, a visitor's keyed copy leaves when it expires, and the
copies held are bounded in number and bytes. Memory is measured with tracemalloc and the
cache's own byte count, never with a clock of the wall."""

from __future__ import annotations

import gc
import io
import tracemalloc
from collections.abc import Iterable
from typing import Any

import pytest

from beekeeper.core.edge import MAX_REQUEST_BYTES, MAX_URL_BYTES
from beekeeper.core.headers import SHARED_CHALLENGE_HEADERS
from beekeeper.core.join_work import SHARED_SECONDS
from beekeeper.local.edge import MAX_KEPT_BYTES, Edge
from beekeeper.local.edge_cache import ENTRY_OVERHEAD_BYTES, EdgeCache, Kept, kept_bytes

START = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


class SharedChallenge:
    """The marketing link's shared answer (kept SHARED_SECONDS), counting what reaches it and
    keeping nothing of the requests."""

    def __init__(self) -> None:
        self.asked = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        self.asked += 1
        start_response("302 Found", [*SHARED_CHALLENGE_HEADERS.items(), ("Location", "work#c")])
        return [b""]


def ask(edge: Edge, path: str = "/beekeeper", *, query: str = "", **headers: str) -> str:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "wsgi.input": io.BytesIO(b""),
        "HTTP_HOST": "127.0.0.1:8080",
    }
    environ.update({"HTTP_" + name.upper(): value for name, value in headers.items()})
    answered: dict[str, str] = {}

    def start(status: str, _headers: list[tuple[str, str]]) -> None:
        answered["status"] = status

    b"".join(edge(environ, start))
    return answered["status"]


def test_a_request_longer_than_cloudfront_takes_is_refused_and_nothing_is_kept() -> None:
    origin = SharedChallenge()
    edge = Edge(origin, mode="rate", clock=Clock())
    assert ask(edge, Accept="a" * 100_000).startswith("431 ")
    assert ask(edge, query="work=" + "w" * MAX_URL_BYTES).startswith("414 ")
    assert (origin.asked, len(edge.cache), edge.cache.bytes) == (0, 0, 0)
    # Within the bounds: answered and kept.
    assert ask(edge, Accept="a" * (MAX_REQUEST_BYTES - 200)) == "302 Found"
    assert (origin.asked, len(edge.cache)) == (1, 1)
    assert edge.counts.edge["/beekeeper"] == 3 and edge.counts.origin["/beekeeper"] == 1


def test_a_visitors_copy_leaves_when_it_expires() -> None:
    origin, clock = SharedChallenge(), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    for i in range(50):
        ask(edge, Accept=f"text/html;v={i}")
    assert len(edge.cache) == 50 and edge.cache.bytes > 50 * ENTRY_OVERHEAD_BYTES
    clock.now += SHARED_SECONDS
    ask(edge, path="/no-such-path")  # any request: the expired copies leave
    assert (len(edge.cache), edge.cache.bytes) == (0, 0)


def test_the_shared_copy_of_a_path_stays_expired_to_be_served_while_the_origin_fails() -> None:
    cache = EdgeCache(max_entries=10, max_bytes=1_000_000, keyed=lambda key: len(key) > 1)
    cache.put(("/state",), Kept("200 OK", [], b"doc", START, START + 2), START)
    cache.put(("/beekeeper", "x"), Kept("302 Found", [], b"", START, START + 2), START)
    assert cache.get(("/state",), START + 60) is not None
    assert cache.get(("/beekeeper", "x"), START + 60) is None
    assert len(cache) == 1


def test_the_copies_held_are_bounded_in_number_and_bytes_the_least_recently_used_leaving() -> None:
    keyed = EdgeCache(max_entries=3, max_bytes=1_000_000, keyed=lambda key: True)
    for name in "abc":
        keyed.put(("/p", name), Kept("200 OK", [], b"x", START, START + 60), START)
    assert keyed.get(("/p", "a"), START) is not None  # a is used again: b is now the oldest
    keyed.put(("/p", "d"), Kept("200 OK", [], b"x", START, START + 60), START)
    assert [keyed.get(("/p", n), START) is not None for n in "abcd"] == [True, False, True, True]
    body = b"y" * 10_000
    one = kept_bytes(("/p", "e"), Kept("200 OK", [], body, START, START + 60))
    sized = EdgeCache(max_entries=100, max_bytes=2 * one, keyed=lambda key: True)
    for name in "efg":
        sized.put(("/p", name), Kept("200 OK", [], body, START, START + 60), START)
    assert len(sized) == 2 and sized.bytes == 2 * one
    # A copy larger than the whole budget is not kept, and takes nothing out.
    sized.put(("/p", "h"), Kept("200 OK", [], body * 3, START, START + 60), START)
    assert len(sized) == 2


@pytest.mark.slow
def test_ten_thousand_distinct_keys_leave_memory_where_it_started_once_they_expire() -> None:
    """The issue's probe in process: distinct Accept headers at the marketing link, each a key
    of its own (1 KB, and a few of CloudFront's whole 20 KB), then past their lifetime."""
    origin, clock = SharedChallenge(), Clock()
    edge = Edge(origin, mode="rate", clock=clock)
    ask(edge, Accept="warm-up")  # the first request's one-time allocations
    clock.now += SHARED_SECONDS
    ask(edge, path="/no-such-path")
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(10_000):
            size = MAX_REQUEST_BYTES - 200 if i % 100 == 0 else 1_000
            ask(edge, Accept=f"{i:06d}".ljust(size, "a"))
        held, peak = tracemalloc.get_traced_memory()
        # Bounded while they live: the cache's budget and its bookkeeping, no more.
        assert edge.cache.bytes <= MAX_KEPT_BYTES
        assert peak - before < MAX_KEPT_BYTES + 4 * 1024 * 1024, peak - before
        assert held - before > 5 * 1024 * 1024  # they were kept meanwhile
        clock.now += SHARED_SECONDS
        ask(edge, path="/no-such-path")
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert edge.counts.origin["/beekeeper"] == 10_001  # each key a miss: none was shared
    assert (len(edge.cache), edge.cache.bytes) == (0, 0)
    assert after - before < 2 * 1024 * 1024, after - before
