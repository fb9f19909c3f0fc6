"""Hold, close, off and a rate change reach every waiting page of a local room within 10 s:
bench/propagation.py (the real room code behind the in-process edge, pages fetching the shared
state as a visible page does, the change made as the CLI makes it), run as it is documented."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "propagation.py"


def test_every_change_reaches_every_page_within_10_seconds() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--pages", "20", "--json"],
        capture_output=True,
        text=True,
        timeout=400,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    measured = json.loads(result.stdout)
    assert [m["change"] for m in measured] == ["hold", "close", "off", "rate"]
    for m in measured:
        assert m["reached"] == m["pages"] == 20, m
        assert m["longest_seconds"] <= 10, m
        # The pages' fetches stay at the edge: the origin sees about one document request per
        # cache lifetime, not one per page.
        assert m["origin_requests_per_second"] < 1 < m["edge_requests_per_second"], m
