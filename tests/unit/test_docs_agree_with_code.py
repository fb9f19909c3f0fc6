"""Facts the documents state about the code, held to the code: each function's timeout and
memory (docs/stack.md's table is stacks/functions.py's, and no other document repeats it), the
keys of every /polling answer (docs/data-model.md names each key the template writes), the
cookie's path (room/cookies.py), and which POST routes pick their template by Content-Type
(docs/vtl.md names each of the registry's)."""

from __future__ import annotations

import re
from pathlib import Path

from beekeeper.core.routes import TABLE
from beekeeper.room.cookies import COOKIE_PATH
from beekeeper.stacks.functions import SPECS

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
POLLING_TEMPLATE = REPO / "vtl" / "polling-response.vtl"
FUNCTION_ROW = re.compile(r"^\s*\| (producer|trigger|consumer|governor) \| (\d+) s \| (\d+) MB \|")


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(document: str, heading: str) -> str:
    return document.split(heading, 1)[1].split("\n## ", 1)[0]


def test_the_stack_doc_gives_each_function_its_timeout_and_memory() -> None:
    rows = {
        found[1]: (int(found[2]), int(found[3]))
        for line in text("stack.md").splitlines()
        if (found := FUNCTION_ROW.match(line))
    }
    assert rows == {role: (s.timeout_seconds, s.memory_mb) for role, s in SPECS.items()}


def test_no_other_document_repeats_the_functions_table() -> None:
    for doc in sorted(DOCS.glob("*.md")):
        if doc.name != "stack.md":
            lines = doc.read_text(encoding="utf-8").splitlines()
            assert not [line for line in lines if FUNCTION_ROW.match(line)], doc.name


def polling_answers() -> dict[str, set[str]]:
    """The keys each literal state of the /polling template's answers carries."""
    answers: dict[str, set[str]] = {}
    for line in POLLING_TEMPLATE.read_text(encoding="utf-8").splitlines():
        state = re.match(r'\{"allow": false, "state": "([a-z_]+)"', line)
        if state:
            answers.setdefault(state[1], set()).update(re.findall(r'"([a-z_]+)": ', line))
    return answers


def test_the_data_model_names_every_key_of_each_polling_answer() -> None:
    answers = polling_answers()
    assert {"waiting", "paused", "prequeue", "closed", "room_off"} <= set(answers)
    rows = section(text("data-model.md"), "## /polling and /client answers").splitlines()
    for state, keys in answers.items():
        documented = " ".join(row for row in rows if row.startswith("|") and f'"{state}"' in row)
        missing = {key for key in keys if f'"{key}"' not in documented}
        assert not missing, f"the {state!r} answer's rows leave out {sorted(missing)}"


def test_the_data_model_gives_the_cookies_path() -> None:
    (row,) = [line for line in text("data-model.md").splitlines() if line.startswith("| cookie |")]
    assert f"`Path={COOKIE_PATH}`" in row


def test_the_vtl_doc_names_each_post_route_that_picks_its_template_by_content_type() -> None:
    (row,) = [
        line
        for line in text("vtl.md").splitlines()
        if line.startswith("| Which request template does a request select?")
    ]
    posts = [
        r
        for r in TABLE
        if r.vtl is not None and r.method == "POST" and len(r.vtl.request_content_types) > 1
    ]
    assert posts, "the route table has a POST route with templates by Content-Type"
    for route in posts:
        assert f"`POST {route.path}`" in row
        assert all(f"`{kind}`" in row for kind in route.vtl.request_content_types)
