"""The page's timing has one owner, core/page_timing.py: the page gets it written in by
render_page, page.js's own literals (what the node tests run) equal it, and the simulator and
bench/ model the page with it."""

from __future__ import annotations

import json
import re

import pytest

from beekeeper.core import page_timing, polling, schedule
from beekeeper.core.page_timing import PAGE_CONSTANTS
from beekeeper.core.paths import SITE_DIR
from beekeeper.waiting_room_site import bundle_script

_DECLARATION = re.compile(r"^export const ([A-Z_]+) = ([0-9_.]+);$", re.MULTILINE)


def page_js_literals() -> dict[str, float]:
    source = (SITE_DIR / "page.js").read_text(encoding="utf-8")
    return {name: float(text.replace("_", "")) for name, text in _DECLARATION.findall(source)}


def test_page_js_declares_cores_values() -> None:
    literals = page_js_literals()
    assert {name: literals.get(name) for name in PAGE_CONSTANTS} == PAGE_CONSTANTS


def test_the_poll_bounds_and_the_start_jitter_are_the_rules_own() -> None:
    assert PAGE_CONSTANTS["MIN_POLL_SECONDS"] == polling.POLL_AFTER_MIN_SECONDS
    assert PAGE_CONSTANTS["MAX_POLL_SECONDS"] == polling.POLL_AFTER_MAX_SECONDS
    assert PAGE_CONSTANTS["START_JITTER_SECONDS"] == schedule.START_JITTER_SECONDS


def test_render_page_writes_cores_values_into_the_script() -> None:
    script = bundle_script()
    for name, value in PAGE_CONSTANTS.items():
        assert f"const {name} = {json.dumps(value)};" in script
    # A change in core reaches the page without touching page.js.
    changed = bundle_script(constants={**PAGE_CONSTANTS, "MIN_POLL_SECONDS": 3, "POLL_JITTER": 0.5})
    assert "const MIN_POLL_SECONDS = 3;" in changed
    assert "const POLL_JITTER = 0.5;" in changed
    assert "const MIN_POLL_SECONDS = 2;" not in changed


def test_a_value_the_script_does_not_declare_is_a_loud_error() -> None:
    with pytest.raises(ValueError, match="declares NO_SUCH_CONSTANT 0 times"):
        bundle_script(constants={"NO_SUCH_CONSTANT": 1})


def test_the_simulator_models_the_page_with_its_timing() -> None:
    # The waiting pages follow the shared state by core/serving.py (simulator/pages.py); the
    # capacity crowd's leavers plan from the page's first look at the line.
    from beekeeper.simulator import capacity

    assert capacity.FIRST_POLL_AFTER_JOIN_SECONDS == page_timing.FIRST_POLL_AFTER_JOIN_SECONDS
    assert pytest.approx(1 + page_timing.POLL_JITTER / 2) == page_timing.MEAN_POLL_STRETCH
