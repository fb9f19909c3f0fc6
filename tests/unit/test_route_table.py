"""The route table (core/routes.py) is the one description of the room's public paths: no other
product module spells a path, the docs' route tables list exactly its routes, and what is
derived from it (the API, the edge, the page) follows a record without a case of its own."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from beekeeper.core.edge import CORS_METHODS, GET_METHODS, behaviors
from beekeeper.core.gateway_answers import route_methods
from beekeeper.core.paths import PACKAGE_ROOT
from beekeeper.core.routes import (
    CAPACITY,
    MODES,
    NOT_KEPT,
    PUSH_CHANNEL,
    RATE,
    TABLE,
    Caller,
    External,
    Kind,
    Route,
    Vtl,
    called_by,
    check_table,
    served,
    template_files,
    templated,
)
from beekeeper.stacks.rest_api import definition, local_references
from beekeeper.vtl import template_names
from beekeeper.waiting_room_site import connect_sources
from tests.support.sample_room import sample_room
from tests.support.spelled_paths import Paths, spellings

DOCS = PACKAGE_ROOT / "docs"
AT_ROOM = tuple(found for found in TABLE if found.at_room)
CAPACITY_ONLY = {found.path for found in AT_ROOM if found.modes == (CAPACITY,)}

# The room's public interface: every path, what it answers, in which modes, and who calls it.
# A change here is a change of what shops, apps and visitors' bookmarks rely on.
PUBLIC = {
    "/beekeeper": (("GET",), ("rate", "capacity"), "producer"),
    "/room": (("GET",), ("rate", "capacity"), "page"),
    "/work": (("GET",), ("rate", "capacity"), "page"),
    "/presence.js": (("GET",), ("capacity",), "script"),
    "/polling": (("GET",), ("rate", "capacity"), "template"),
    "/client": (("GET", "OPTIONS"), ("rate", "capacity"), "template"),
    "/enter": (("GET",), ("capacity",), "template"),
    "/presence": (("POST", "OPTIONS"), ("capacity",), "template"),
    "/state": (("GET",), ("rate", "capacity"), "template"),
    "/jwks.json": (("GET",), ("rate", "capacity"), "template"),
    "/leave": (("POST", "OPTIONS"), ("capacity",), "producer"),
}


def test_the_table_is_the_rooms_public_interface() -> None:
    assert {
        found.path: (found.api_methods, found.modes, str(found.kind)) for found in AT_ROOM
    } == PUBLIC
    # CORS (and its preflight) only where the shop's pages call.
    assert [found.path for found in TABLE if found.cors] == ["/client", "/presence", "/leave"]
    for found in TABLE:
        assert found.callers, found.name


def test_no_product_module_spells_a_path_outside_the_table() -> None:
    """A path is taken from core/routes.py (`ROUTE.path`, `.relative`), never written out:
    Python modules, the page's and the presence script's JavaScript, the pages' HTML."""
    found = spellings(PACKAGE_ROOT, Paths(route.path for route in AT_ROOM))
    assert [str(spelling) for spelling in found] == []


@pytest.mark.parametrize(
    ("text", "as_url", "spelled"),
    [
        ("/polling", False, True),
        ("/beekeeper/GET", False, True),
        ("https://room.example/prod/jwks.json", False, True),
        ("polling", False, True),
        ("presence?token=", False, True),
        ("room", True, True),  # assigned to a *_URL, *_PATH, *_LOCATION ...
        ("room", False, False),  # a claim's name, a context key
        ("work#", False, False),  # a table key's prefix
        ("work", True, True),
        ("see /polling and /client", False, False),  # a sentence
        ("/beekeeper-token", False, False),
        ("beekeeper.local", False, False),
        ("/presence.jsx", False, False),
    ],
)
def test_what_counts_as_spelling_a_path(text: str, as_url: bool, spelled: bool) -> None:
    assert Paths(route.path for route in AT_ROOM).spelled(text, as_url=as_url) is spelled


def test_the_scan_finds_a_path_in_each_kind_of_file(tmp_path: Path) -> None:
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "links.py").write_text(
        '"""Docs may name /polling."""\nLINK_URL = "room"\nPOLL = f"{BASE}/polling"\n',
        encoding="utf-8",
    )
    (tmp_path / "waiting_room_site").mkdir()
    (tmp_path / "waiting_room_site" / "page.js").write_text(
        '// comments may name /polling\nconst a = `${base}/state`;\nconst b = "x";\n',
        encoding="utf-8",
    )
    (tmp_path / "waiting_room_site" / "index.html").write_text(
        '<p><a href="beekeeper">again</a></p>\n', encoding="utf-8"
    )
    found = spellings(tmp_path, Paths(route.path for route in AT_ROOM))
    assert [(s.file, s.line, s.text) for s in found] == [
        ("core/links.py", 2, "room"),
        ("core/links.py", 3, "/polling"),
        ("waiting_room_site/index.html", 1, "beekeeper"),
        ("waiting_room_site/page.js", 2, "/state"),
    ]


# -- the docs' route tables -------------------------------------------------------------------

_CELL_ROUTE = re.compile(r"`(?:(GET|POST|OPTIONS) )?(/[\w.]+)`")


def _tables(name: str, header: str) -> list[list[list[str]]]:
    """Every table of docs/`name` whose header row starts with `header`: its rows' cells."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] | None = None
    for line in (DOCS / name).read_text(encoding="utf-8").splitlines():
        if line.startswith(header):
            rows = []
            tables.append(rows)
        elif rows is not None and line.startswith("|"):
            if not line.startswith("|---"):
                cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
                rows.append([cell.strip() for cell in cells])
        else:
            rows = None
    return tables


def _only_table(name: str, header: str) -> list[list[str]]:
    (table,) = _tables(name, header)
    assert table, f"docs/{name}: the table under {header!r} is empty"
    return table


def _methods_by_path(table: list[list[str]]) -> dict[str, set[str]]:
    """The methods each row's first cell names for its paths (`GET /x` (+ `OPTIONS`))."""
    found: dict[str, set[str]] = {}
    for row in table:
        for method, path in _CELL_ROUTE.findall(row[0]):
            methods = found.setdefault(path, set())
            methods.add(method)
            if "(+ `OPTIONS`)" in row[0]:
                methods.add("OPTIONS")
    return found


def _capacity_rows(table: list[list[str]]) -> set[str]:
    """The paths of the rows whose description says they are capacity mode's."""
    return {
        path
        for row in table
        if row[1].startswith("capacity mode")
        for _, path in _CELL_ROUTE.findall(row[0])
    }


@pytest.mark.parametrize(
    ("doc", "header", "preflights"),
    [
        ("stack.md", "| route | integration |", True),
        ("data-model.md", "| route | answered by |", False),
        ("local.md", "| request | answer (stack and local) |", True),
    ],
)
def test_the_docs_route_tables_list_every_path_and_method_of_the_table(
    doc: str, header: str, preflights: bool
) -> None:
    """Each path and method of the API once (the preflights where the table lists them),
    the capacity-mode ones said to be."""
    table = _only_table(doc, header)
    assert _methods_by_path(table) == {
        found.path: set(found.api_methods if preflights else found.methods) for found in AT_ROOM
    }
    assert _capacity_rows(table) == CAPACITY_ONLY


def test_docs_edge_table_groups_the_paths_by_their_edge_rule() -> None:
    """docs/stack.md's edge table: every path once, each row's paths alike at the edge."""
    table = _only_table("stack.md", "| path | the edge keeps it |")
    rows = [[path for _, path in _CELL_ROUTE.findall(row[0])] for row in table]
    listed = [path for row in rows for path in row]
    assert sorted(listed) == sorted(found.path for found in AT_ROOM)
    rule = {found.path: found.edge for found in AT_ROOM}
    for row in rows:
        assert len({rule[path] for path in row}) == 1, row
    assert len(rows) == len(set(rule.values()))


def _code(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _request_templates(route: Route) -> str:
    vtl = route.templates()
    templates = {vtl.request_template(mode) for mode in route.modes}
    if len(templates) == 1:
        return _code(sorted(templates))
    return "; ".join(f"{mode}: `{vtl.request_template(mode)}`" for mode in route.modes)


def _response(route: Route) -> str:
    vtl = route.templates()
    suffix = " (302 for every status)" if vtl.redirect else ""
    return f"`{vtl.response_template}`{suffix}"


def _refused(route: Route) -> str:
    vtl = route.templates()
    if vtl.refusal_template:
        return f"`{vtl.refusal_template}`"
    if vtl.redirect:
        return f"`{vtl.response_template}`"
    return "503 unavailable"


def registry_rows() -> list[str]:
    """docs/vtl.md's table of the templated routes, as the route table says it."""
    return [
        f"| `{route.path}` | {route.method} | {', '.join(route.modes)} "
        f"| `{route.templates().action}` "
        f"| {_request_templates(route)} | {_response(route)} | {_refused(route)} "
        f"| {_code(list(route.templates().request_content_types))} "
        f"| {'yes' if route.cors else 'no'} |"
        for route in TABLE
        if route.kind is Kind.TEMPLATE
    ]


def test_docs_vtl_route_table_is_the_templated_routes() -> None:
    text = (DOCS / "vtl.md").read_text(encoding="utf-8")
    table = text.split("<!-- route-registry -->\n", 1)[1].split("<!-- /route-registry -->", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `/")]
    assert rows == registry_rows()


def test_docs_vtl_integration_responses_name_each_templated_route_by_its_answers() -> None:
    table = _only_table("vtl.md", "| route | DynamoDB's status (selection pattern) |")
    by_pattern = {row[1]: {path for _, path in _CELL_ROUTE.findall(row[0])} for row in table}
    routes = [found for found in TABLE if found.vtl is not None]
    assert by_pattern["`400`"] == {r.path for r in routes if r.templates().refusal_template}
    assert by_pattern[r"`4(0[1-9]\|[1-9]\d)\|5\d{2}`"] == by_pattern["`400`"]
    assert by_pattern[r"`[45]\d{2}`"] == {
        r.path for r in routes if not r.templates().refusal_template and not r.templates().redirect
    }
    assert by_pattern["any (the default, alone)"] == {
        r.path for r in routes if r.templates().redirect
    }


# -- the records ------------------------------------------------------------------------------


def test_every_template_file_is_a_routes_and_every_route_has_its_files() -> None:
    assert template_names() == sorted(template_files())


def test_the_modes_have_the_routes_the_rooms_answer() -> None:
    assert list(templated(RATE)) == ["polling", "client", "state", "jwks"]
    assert list(templated(CAPACITY)) == [
        "polling", "client", "enter", "presence", "state", "jwks"
    ]  # fmt: skip
    for route in TABLE:
        assert set(route.modes) <= set(MODES) and route.modes
        if route.vtl is not None:
            # Every route answers from DynamoDB: an "unavailable" answer, or a redirect whose
            # one template answers whatever DynamoDB said.
            assert (route.vtl.error_body is None) == route.vtl.redirect


def test_the_gateway_answers_every_path_of_its_mode_and_no_other() -> None:
    assert route_methods(CAPACITY) == {
        "/beekeeper": ("GET",),
        "/room": ("GET",),
        "/work": ("GET",),
        "/presence.js": ("GET",),
        "/polling": ("GET",),
        "/client": ("GET", "OPTIONS"),
        "/enter": ("GET",),
        "/presence": ("POST", "OPTIONS"),
        "/state": ("GET",),
        "/jwks.json": ("GET",),
        "/leave": ("POST", "OPTIONS"),
    }
    # Rate mode has no places to keep: neither the heartbeat nor the script, nor a leave.
    assert set(route_methods(RATE)) == set(route_methods(CAPACITY)) - CAPACITY_ONLY


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"modes": ()}, "modes must be"),
        ({"vtl": None}, "has its templates"),
        ({"methods": ("GET", "POST")}, "answers one method"),
        ({"cors": True, "callers": (Caller.SHOP_SERVER,)}, "name them among its callers"),
        ({"path": "state"}, "starts with /"),
        ({"kind": Kind.EXTERNAL, "vtl": None}, "names its source"),
        (
            {"kind": Kind.EXTERNAL, "vtl": None, "external": External("connect-src", "wss:")},
            "no path, method",
        ),
    ],
)
def test_a_record_that_contradicts_itself_is_refused(
    changes: dict[str, object], problem: str
) -> None:
    fields = {
        "name": "state",
        "path": "/state",
        "kind": Kind.TEMPLATE,
        "methods": ("GET",),
        "modes": (RATE,),
        "callers": (Caller.ROOM_PAGE,),
        "vtl": Vtl("GetItem", {RATE: "state-request.vtl"}, "state-response.vtl", error_body="{}"),
    }
    with pytest.raises(ValueError, match=problem):
        Route(**{**fields, **changes})  # type: ignore[arg-type]


def test_two_routes_of_one_path_are_refused() -> None:
    (polling,) = (found for found in TABLE if found.name == "polling")
    again = Route("again", polling.path, Kind.PRODUCER, ("GET",), (RATE,), (Caller.VISITOR,))
    with pytest.raises(ValueError, match="two routes of the path /polling"):
        check_table((*TABLE, again))


# -- an endpoint outside the room's address -----------------------------------------------------

# The push channel the page subscribes to (its address is the service's own, not a path of the
# room): one record, and everything derived from the table treats it as what it is.
WITHOUT_PUSH = tuple(found for found in TABLE if found is not PUSH_CHANNEL)
AWS_CHANNEL = "wss://abcdefghijklmnopqrstuvwxyz.appsync-realtime-api.eu-west-1.amazonaws.com"


def test_an_external_endpoint_is_a_record_without_a_path_of_the_room() -> None:
    assert PUSH_CHANNEL in TABLE
    assert not PUSH_CHANNEL.at_room
    assert PUSH_CHANNEL.edge == NOT_KEPT and PUSH_CHANNEL.api_methods == ()
    assert PUSH_CHANNEL in called_by(Caller.ROOM_PAGE)
    for mode in MODES:
        assert served(mode) == served(mode, WITHOUT_PUSH)
        assert behaviors(mode) == behaviors(mode, WITHOUT_PUSH)
        assert route_methods(mode) == route_methods(mode, WITHOUT_PUSH)


def test_the_page_connects_to_the_channel_at_the_address_the_room_gives() -> None:
    assert connect_sources({}) == "'self'"
    assert connect_sources({PUSH_CHANNEL.name: AWS_CHANNEL}) == f"'self' {AWS_CHANNEL}"
    # The record says where AWS's endpoint lies; the room's own is one of those hosts.
    host = AWS_CHANNEL.split("://", 1)[1]
    pattern = PUSH_CHANNEL.external.source_for("eu-west-1").split("://", 1)[1]  # type: ignore[union-attr]
    assert fnmatch.fnmatchcase(host, pattern)
    with pytest.raises(ValueError, match="no endpoint named elsewhere"):
        connect_sources({"elsewhere": "wss://example.com"})


def test_the_api_has_a_method_for_every_path_and_none_for_an_external_endpoint() -> None:
    room = sample_room()
    api = definition(room, local_references("t"), page_html="<p>page</p>")
    mode = room.mode
    assert {(path, verb) for path, verb in api.methods} == {
        (found.path, verb) for found in served(mode) for verb in found.api_methods
    }
    assert all(path for path, _verb in api.methods)


def test_the_edge_allows_the_methods_the_api_has() -> None:
    for mode in MODES:
        for behavior, found in zip(behaviors(mode), served(mode), strict=True):
            assert behavior.path == found.path
            assert set(found.api_methods) <= set(behavior.methods)
            if set(found.api_methods) <= {"GET"}:
                assert behavior.methods == GET_METHODS
            elif set(found.api_methods) <= {"GET", "OPTIONS"}:
                assert behavior.methods == CORS_METHODS
