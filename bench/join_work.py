"""What a place costs a bot and what it costs a visitor (issue 27.1), on this machine.

    .venv/bin/python bench/join_work.py [--work-ms 1000] [--places 30] [--visitors 30]

1. A native solver: core/join_work.solve (hashlib's C SHA-256 in a Python loop) solves
   --places challenges of the room's difficulty; printed: the CPU seconds each took and the
   places one core takes a second (goal at the default: at most 10). For the bound a C solver
   reaches, OpenSSL's own SHA-256 speed on 64-byte messages (`openssl speed`, when installed)
   is turned into places per core-second too.
2. A visitor's browser: headless Chromium (/usr/bin/chromium, driven by playwright) follows the
   marketing link of `beekeeper local --join-work MS` as --visitors new visitors, each in a
   fresh context, and the page's own solver does the work; printed: the time from the work
   page's load to its request with the solution (median, p95, longest; goals at the default:
   1 s and 2 s), and from the link to the waiting room page. Also the page solver's tries a
   second on one thread in this Chromium, against the typical phone core the difficulty is set
   for (core/join_work.PHONE_TRIES_PER_SECOND).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import secrets
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import local_room

from beekeeper.core.join_work import (
    DEFAULT_JOIN_WORK_MS,
    PHONE_TRIES_PER_SECOND,
    SUBPUZZLES,
    JoinKeys,
    issue,
    phone_seconds,
    solve,
    target_for,
)
from beekeeper.core.paths import SITE_DIR

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(fraction * len(ordered))) - 1]


def native(work_ms: float, places: int) -> None:
    keys = JoinKeys.from_secret(secrets.token_urlsafe(48))
    target = target_for(work_ms)
    print(
        f"difficulty at join_work {work_ms:g} ms: {SUBPUZZLES} sub-puzzles below {target:,} "
        f"(2^32 / {2**32 / target:,.0f}), {SUBPUZZLES * 2**32 / target:,.0f} tries expected; "
        f"a typical phone core {phone_seconds(target):.2f} s"
    )
    spent = []
    for _ in range(places):
        challenge = issue(keys, "bench", now=time.time(), work_ms=work_ms, token_bytes=os.urandom)
        started = time.process_time()
        solve(challenge)
        spent.append(time.process_time() - started)
    total = sum(spent)
    print(
        f"native solver (hashlib): {places} places in {total:.1f} CPU s: "
        f"{places / total:.2f} places per core-second (goal: at most 10); per place median "
        f"{statistics.median(spent):.3f} s, p95 {percentile(spent, 0.95):.3f} s"
    )
    openssl = shutil.which("openssl")
    if openssl:
        output = subprocess.run(
            [openssl, "speed", "-seconds", "2", "-bytes", "64", "-evp", "sha256"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        found = re.search(r"^sha256\s+([\d.]+)k", output, re.MULTILINE)
        if found:
            tries = float(found.group(1)) * 1000 / 64
            per_place = SUBPUZZLES * 2**32 / target / tries
            print(
                f"a C solver's bound (OpenSSL SHA-256 on 64-byte messages, one core): "
                f"{tries / 1e6:.1f} million tries a second, {1 / per_place:.0f} places per "
                "core-second"
            )


@contextmanager
def running_room(work_ms: float) -> Iterator[str]:
    """`beekeeper local --join-work MS`; yields its marketing URL."""
    args = ["--origin", "http://localhost:9/", "--rate", "60", "--join-work", str(int(work_ms))]
    with (
        tempfile.TemporaryDirectory() as config,
        local_room.running_room("bench-work", args, config) as room,
    ):
        yield room.marketing_url


def solver_script() -> str:
    """The page's solver as a classic script (its `export` keywords dropped)."""
    source = (SITE_DIR / "work" / "solver.js").read_text(encoding="utf-8")
    return re.sub(r"^export\s+", "", source, flags=re.MULTILINE)


def browser(work_ms: float, visitors: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright, running_room(work_ms) as marketing:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page_url = marketing.rsplit("/beekeeper", 1)[0] + "/room"
        solving, joining, workers = [], [], []
        for _ in range(visitors):
            context = launched.new_context()
            page = context.new_page()
            marks: dict[str, float] = {}
            started = time.monotonic()

            def seen(request: object, marks: dict[str, float] = marks) -> None:
                if "?work=" in request.url and "sent" not in marks:  # type: ignore[attr-defined]
                    marks["sent"] = time.monotonic()

            page.on("request", seen)
            page.on("load", lambda _page, marks=marks: marks.setdefault("work", time.monotonic()))
            page.on("worker", lambda worker, found=workers: found.append(worker))
            page.goto(marketing)
            page.wait_for_url(page_url, timeout=60_000)
            joining.append(time.monotonic() - started)
            solving.append(marks["sent"] - marks["work"])
            context.close()
        # The page's solver on one thread: tries a second in this Chromium.
        page = launched.new_page()
        page.add_script_tag(content=solver_script())
        rate = page.evaluate(
            """() => {
                const seed = challengeSeed("bench");
                const started = performance.now();
                searchCounters(seed, 0, 1, 0, 2000000);
                return 2000000 / ((performance.now() - started) / 1000);
            }"""
        )
        launched.close()
    print(
        f"headless Chromium ({visitors} visitors, join_work {work_ms:g} ms, "
        f"{len(workers) / visitors:.1f} workers each): solving median "
        f"{statistics.median(solving):.2f} s, p95 {percentile(solving, 0.95):.2f} s, longest "
        f"{max(solving):.2f} s (goals: 1 s, 2 s); link to the waiting room page median "
        f"{statistics.median(joining):.2f} s, p95 {percentile(joining, 0.95):.2f} s"
    )
    print(
        f"the page's solver on one thread here: {rate / 1e6:.2f} million tries a second "
        f"({rate / PHONE_TRIES_PER_SECOND:.1f} x the typical phone core the difficulty assumes)"
    )
    print(json.dumps({"solving": [round(s, 3) for s in solving]}))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--work-ms", type=float, default=DEFAULT_JOIN_WORK_MS)
    parser.add_argument("--places", type=int, default=30)
    parser.add_argument("--visitors", type=int, default=30)
    parser.add_argument("--skip-browser", action="store_true")
    args = parser.parse_args()
    native(args.work_ms, args.places)
    if not args.skip_browser:
        browser(args.work_ms, args.visitors)


if __name__ == "__main__":
    main()
