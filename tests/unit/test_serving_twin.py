"""The page's rule in JavaScript (waiting_room_site/page.js) is core/serving.py's: the same
answers on a few hundred cases, with the figures render_page gives the page.

The simulator measures the room with the Python rule, and visitors' browsers run the JavaScript
one, so the two must not drift apart. Runs `node` (as scripts/check's JavaScript tests do)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from beekeeper.core import serving
from beekeeper.core.shared_state import Point, extend_history, parse_history
from beekeeper.waiting_room_site import page_timing

EVALUATOR = Path(__file__).resolve().parents[1] / "js" / "serving_eval.mjs"
T0 = 1_800_000_000.0


def cases(rng: random.Random, minute_seconds: float) -> list[dict[str, Any]]:
    found = []
    for _ in range(300):
        flow = rng.choice([0, 1, 5, 37, 60, 600, 12_345, 30_000, 300_000])
        text = ""
        at_ms = int((T0 + rng.uniform(0, 600)) * 1000)
        served = rng.randrange(0, 10**6)
        for _ in range(rng.randrange(1, 12)):
            at_ms += rng.randrange(1, 8000)
            served += rng.randrange(0, 1 + flow // 10)
            line = rng.choice([None, 0, rng.randrange(0, 10 * max(1, flow))])
            joins = rng.choice([0, flow // 2, 2 * flow, rng.randrange(0, 10**6)])
            # A floor the pages keep to, and an announced hold, on some of the newer points.
            floor = (
                None if line is None else rng.choice([None, served, served + rng.randrange(0, 50)])
            )
            until = rng.choice([0, 0, at_ms + rng.randrange(0, 30_000)]) if floor is not None else 0
            point = Point(
                at_ms,
                served,
                rng.choice([flow, flow, 0]),
                waiting=line,
                joins=joins,
                floor=floor,
                until_ms=until,
            )
            text = extend_history(text, point)
        at = at_ms / 1000 + rng.uniform(-5, 90)
        found.append(
            {
                "history": text,
                "at": at,
                "flow": max(1, flow),
                "index": serving.due_by(at, max(1, flow), minute_seconds) + rng.randrange(0, 10**6),
                "turn": served + rng.randrange(-50, 3 * max(1, flow)),
                "visible": rng.random() < 0.5,
                "own_poll_at": rng.choice([None, at + rng.uniform(0, 900)]),
                "claim": rng.choice([0, 0, 120]),
                "closed": rng.random() < 0.2,
                # The page's own /polling answer: its place, and when its status was written.
                "position": rng.randrange(1, 2 * max(1, flow) + 2),
                "updated_at": rng.choice([0, int(at) - rng.randrange(0, 10), int(at_ms / 1000)]),
            }
        )
    # A turn reached just inside the extrapolation's reach, with the margin beyond it.
    edge = dict(found[0], history=extend_history("", Point(int((T0 - 2) * 1000), 1000, 58)))
    found.append(dict(edge, at=T0, turn=1071))
    return found


def python_answers(found: list[dict[str, Any]], minute_seconds: float) -> list[dict[str, Any]]:
    out = []
    for c in found:
        points = parse_history(c["history"])
        out.append(
            {
                "due_by": serving.due_by(c["at"], c["flow"], minute_seconds),
                "slot_time": serving.slot_time(c["index"], c["flow"], minute_seconds),
                "serving_now": serving.serving_at(
                    points, c["at"], delay=0, minute_seconds=minute_seconds
                ),
                "shown": serving.shown_serving(points, c["at"], minute_seconds=minute_seconds),
                "place": serving.place_shown(
                    points, c["turn"], c["at"], minute_seconds=minute_seconds
                ),
                "moment": serving.shown_moment(points, c["at"], minute_seconds=minute_seconds),
                "next_moment": serving.next_moment(points, c["at"], minute_seconds=minute_seconds),
                "first_own_poll": serving.first_own_poll(
                    points, c["turn"], c["at"], minute_seconds=minute_seconds
                ),
                "first_own_poll_loading": serving.first_own_poll(
                    points, c["turn"], c["at"], minute_seconds=minute_seconds, loading=True
                ),
                "first_own_poll_answered": serving.first_own_poll(
                    serving.with_answer(
                        points,
                        serving.answer_point(points, c["turn"], c["position"], c["updated_at"]),
                    ),
                    c["turn"],
                    c["at"],
                    minute_seconds=minute_seconds,
                ),
                "predates": serving.document_predates(points, c["turn"], c["at"]),
                "turn_due_at": serving.turn_due_at(
                    points, c["turn"], c["at"], minute_seconds=minute_seconds
                ),
                "document_delay": serving.document_delay(
                    visible=c["visible"],
                    now=c["at"],
                    own_poll_at=c["own_poll_at"],
                    claim_seconds=c["claim"],
                    closed=c["closed"],
                ),
            }
        )
    return out


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the page's JavaScript")
@pytest.mark.parametrize("minute_seconds", [60.0, 10.0])
def test_the_page_and_the_simulator_apply_the_same_rule(minute_seconds: float) -> None:
    found = cases(random.Random(int(minute_seconds)), minute_seconds)
    timing = page_timing(minute_seconds)
    result = subprocess.run(
        ["node", str(EVALUATOR)],
        input=json.dumps({"timing": timing, "cases": found}),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    javascript = json.loads(result.stdout)
    expected = python_answers(found, minute_seconds)
    assert len(javascript) == len(expected)
    for case, js, py in zip(found, javascript, expected, strict=True):
        assert js == py, case
