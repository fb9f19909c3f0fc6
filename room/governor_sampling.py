"""How the governor samples the shop: GETs spread over part of a minute, each with a timeout.

A sample is ok when the answer, after redirects are followed, is 2xx. Anything else fails,
with a short reason (`HTTP 503`, `timeout`, `connection refused`, ...) that the governor
counts and shows, so an operator can tell a wrong URL from a struggling shop. The latency is
the time to the first byte of the body.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

USER_AGENT = "beekeeper-governor"
TIMEOUT = "timeout"
# urllib follows up to 10 redirects; it gives up on a loop, on more, or on a 3xx without a
# Location header, and reports the 3xx status.
REDIRECT_FAILURE = "redirects never reached a page (loop, more than 10, or no Location)"


@dataclass(frozen=True)
class Sample:
    ok: bool
    ms: float
    failure: str = ""  # why it failed, short; empty when ok


Fetcher = Callable[[str, float], Sample]


def fetch_once(url: str, timeout: float) -> Sample:
    """One GET of `url`, following redirects; ok only for a final 2xx answer."""
    started = time.monotonic()
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - https origin
            response.read(1)
            status = response.status
        failure = "" if 200 <= status < 300 else f"HTTP {status}"
    except urllib.error.HTTPError as error:
        failure = f"HTTP {error.code}"
        if 300 <= error.code < 400:
            failure += f": {REDIRECT_FAILURE}"
    except urllib.error.URLError as error:
        failure = _connection_failure(error.reason)
    except (OSError, http.client.HTTPException, ValueError) as error:
        failure = _connection_failure(error)
    return Sample(ok=not failure, ms=(time.monotonic() - started) * 1000, failure=failure)


def _connection_failure(reason: object) -> str:
    if isinstance(reason, TimeoutError | socket.timeout):
        return TIMEOUT
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, ConnectionResetError):
        return "connection reset"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return "TLS certificate not trusted"
    if isinstance(reason, socket.gaierror):
        return "host name not found"
    return f"connection error ({type(reason).__name__})"


def sample(
    url: str,
    fetch: Fetcher,
    *,
    count: int,
    window: float,
    timeout: float,
    sleep: Callable[[float], None],
) -> list[Sample]:
    """`count` GETs started evenly over `window` seconds, each given `timeout` seconds.

    Spread rather than all at once: the governor measures what a visitor meets, not how the
    shop copes with a burst of its own requests, and the shop sees a steady trickle.
    """
    spacing = window / count if count else 0.0
    # Enough threads that one slow answer never delays the next start.
    workers = max(1, min(count, int(timeout / spacing) + 2 if spacing else count))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="governor-sample")
    futures: list[Future[Sample]] = []
    try:
        for index in range(count):
            if index:
                sleep(spacing)
            futures.append(pool.submit(fetch, url, timeout))
        # A fetch honours its own timeout; this bound only catches one that does not.
        wait(futures, timeout=timeout + 1)
        return [_result(future, timeout) for future in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _result(future: Future[Sample], timeout: float) -> Sample:
    if not future.done() or future.cancelled():
        return Sample(ok=False, ms=timeout * 1000, failure=TIMEOUT)
    error = future.exception()
    if error is not None:
        return Sample(ok=False, ms=timeout * 1000, failure=_connection_failure(error))
    return future.result()
