"""README.md is read in minutes: at most 200 lines, and its table of the shop owner's commands
names every command the CLI has (cli/main.py, COMMANDS), so a new command gets its line."""

from __future__ import annotations

import re
from pathlib import Path

from beekeeper.cli.main import COMMANDS
from tests.support.doc_numbers import stated_number

README = Path(__file__).resolve().parents[2] / "README.md"
MOST_LINES = 200


def command_rows() -> list[str]:
    """The first word after `beekeeper` in each table row of the README that starts with one."""
    text = README.read_text(encoding="utf-8")
    return re.findall(r"^\| `beekeeper ([a-z-]+)[ `]", text, flags=re.MULTILINE)


def test_the_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MOST_LINES, f"README.md has {len(lines)} lines; at most {MOST_LINES}"


def test_the_readme_names_every_command_once() -> None:
    named = command_rows()
    assert sorted(set(named)) == sorted(COMMANDS)
    assert len(named) == len(set(named)), "a command has two rows"


def stated(pattern: str) -> int:
    """The number the README states where `pattern` (one group of digits) matches."""
    return int(stated_number("README.md", pattern))


def test_the_readmes_timings_and_ports_are_the_codes() -> None:
    from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS, SHARED_SECONDS
    from beekeeper.core.local_room import DEFAULT_OPERATOR_PORT, DEFAULT_PORT, FLAGS_ONLY_RATE
    from beekeeper.core.serving import DOCUMENT_EVERY_SECONDS, OWN_POLL_EVERY_SECONDS
    from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS

    assert stated(r"the edge's copy shared for (\d+) s") == SHARED_SECONDS
    assert stated(r"loop every (\d+) s while the tab is watched") == DOCUMENT_EVERY_SECONDS
    assert stated(r"kept (\d+) s by the edge") == STATE_MAX_AGE_SECONDS
    assert stated(r"at the predicted turn, then every (\d+) s") == OWN_POLL_EVERY_SECONDS
    assert stated(r"the demo shop \((\d+) visitors a minute\)") == FLAGS_ONLY_RATE
    assert stated(r"http://127\.0\.0\.1:(\d+)/beekeeper") == DEFAULT_PORT
    assert (
        stated(r"http://127\.0\.0\.1:(\d+)/ is the operator's live view") == DEFAULT_OPERATOR_PORT
    )
    # "about a second of a phone's time": the work a place costs by default.
    assert "about a second of a phone's time" in README.read_text(encoding="utf-8")
    assert DEFAULT_JOIN_WORK_MS == 1_000
