"""What a waiting page does with its push channel, by core/push.py's figures: the fallback's
and the socket's delays, a hidden page's fetches, and the page's own copy of the rule
(waiting_room_site/channel.js) giving the same answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from beekeeper.core import push
from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS, HIDDEN_DOCUMENT_MAX_SECONDS

SITE = Path(__file__).resolve().parents[2] / "waiting_room_site"


def test_the_fallback_fetches_at_most_every_30_s_and_is_jittered() -> None:
    assert push.fallback_delay(0.0) == 30.0
    assert push.fallback_delay(1.0) == 22.5
    assert all(22.5 <= push.fallback_delay(r / 10) <= 30.0 for r in range(11))


def test_the_socket_backs_off_exponentially_with_full_jitter_to_two_minutes() -> None:
    ceilings = [push.socket_retry_delay(n, 1.0) for n in range(1, 10)]
    assert ceilings == [2, 4, 8, 16, 32, 64, 120, 120, 120]
    assert push.socket_retry_delay(4, 0.5) == 8.0
    assert push.socket_retry_delay(1, 0.0) == 0.0


def test_a_hidden_page_fetches_a_minute_before_its_turn_and_at_least_every_15_minutes() -> None:
    # A turn 30 minutes ahead: 15 minutes on, then a minute before it, then not before it.
    assert push.hidden_document_delay(now=60, own_poll_at=1_800) == 900
    assert push.hidden_document_delay(now=960, own_poll_at=1_800) == 780
    assert push.hidden_document_delay(now=1_740, own_poll_at=1_800) == 120
    # Nothing predicted: every 5 minutes, as the shared rule's hidden page.
    assert push.hidden_document_delay(now=0, own_poll_at=None) == HIDDEN_DOCUMENT_MAX_SECONDS
    # Capacity mode: within half the claim window; never sooner than a visible page's interval.
    assert push.hidden_document_delay(now=0, own_poll_at=1_800, claim_seconds=120) == 60
    assert push.hidden_document_delay(now=0, own_poll_at=-500) == DOCUMENT_EVERY_SECONDS


CASES = [
    {"now": 60, "ownPollAt": 1_800},
    {"now": 960, "ownPollAt": 1_800},
    {"now": 1_740, "ownPollAt": 1_800},
    {"now": 0, "ownPollAt": None},
    {"now": 0, "ownPollAt": 1_800, "claimSeconds": 120},
    {"now": 0, "ownPollAt": -500},
    {"now": 100, "ownPollAt": 161.5},
]


def test_the_page_applies_the_same_hidden_rule(tmp_path: Path) -> None:
    from beekeeper.waiting_room_site import page_timing

    script = tmp_path / "eval.mjs"
    script.write_text(
        f'import {{ hiddenDelay }} from "{SITE / "channel.js"}";\n'
        f"const timing = {json.dumps(page_timing())};\n"
        f"const cases = {json.dumps(CASES)};\n"
        "console.log(JSON.stringify(cases.map((c) => hiddenDelay(c, timing))));\n",
        encoding="utf-8",
    )
    try:
        done = subprocess.run(["node", str(script)], capture_output=True, text=True, check=True)
    except FileNotFoundError:
        pytest.skip("node is not installed")
    expected = [
        push.hidden_document_delay(
            now=c["now"], own_poll_at=c["ownPollAt"], claim_seconds=c.get("claimSeconds", 0)
        )
        for c in CASES
    ]
    assert json.loads(done.stdout) == pytest.approx(expected)
