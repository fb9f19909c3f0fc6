"""The route registry (core/routes.py) is the one description of the templated routes: docs/vtl.md's
route table, the gateway answers' routes and methods, and the template files all follow it."""

from __future__ import annotations

from beekeeper.core.gateway_answers import CORS_ROUTES, OTHER_ROUTES, route_method, route_methods
from beekeeper.core.paths import PACKAGE_ROOT
from beekeeper.core.routes import CAPACITY, MODES, RATE, REGISTRY, Route, routes, template_files
from beekeeper.vtl import template_names

DOCS = PACKAGE_ROOT / "docs" / "vtl.md"


def _code(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def _request_templates(route: Route) -> str:
    templates = {route.request_template(mode) for mode in route.modes}
    if len(templates) == 1:
        return _code(sorted(templates))
    return "; ".join(f"{mode}: `{route.request_template(mode)}`" for mode in route.modes)


def _response(route: Route) -> str:
    suffix = " (302 for every status)" if route.redirect else ""
    return f"`{route.response_template}`{suffix}"


def _refused(route: Route) -> str:
    if route.refusal_template:
        return f"`{route.refusal_template}`"
    if route.redirect:
        return f"`{route.response_template}`"
    return "503 unavailable"


def registry_rows() -> list[str]:
    """docs/vtl.md's route table, as the registry says it."""
    return [
        f"| `/{route.name}` | {route.method} | {', '.join(route.modes)} | `{route.action}` "
        f"| {_request_templates(route)} | {_response(route)} | {_refused(route)} "
        f"| {_code(list(route.request_content_types))} | {'yes' if route.cors else 'no'} |"
        for route in REGISTRY
    ]


def test_the_docs_route_table_is_the_registry() -> None:
    text = DOCS.read_text(encoding="utf-8")
    table = text.split("<!-- route-registry -->\n", 1)[1].split("<!-- /route-registry -->", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `/")]
    assert rows == registry_rows()


def test_every_template_file_is_a_routes_and_every_route_has_its_files() -> None:
    assert template_names() == sorted(template_files())


def test_the_modes_have_the_routes_the_rooms_answer() -> None:
    assert list(routes(RATE)) == ["polling", "client", "state", "jwks.json"]
    assert list(routes(CAPACITY)) == [
        "polling", "client", "enter", "presence", "state", "jwks.json"
    ]  # fmt: skip
    for route in REGISTRY:
        assert set(route.modes) <= set(MODES) and route.modes
        # Every route answers from DynamoDB: an "unavailable" answer, or a redirect whose one
        # template answers whatever DynamoDB said.
        assert (route.error_body is None) == route.redirect


def test_the_gateway_answers_read_the_registry() -> None:
    assert CORS_ROUTES == ("client", "presence", "leave")
    assert route_method("leave") == "POST" and route_method("enter") == "GET"
    assert route_method("presence") == "POST"
    assert route_methods(CAPACITY) == {
        **{f"/{name}": ("GET",) for name in OTHER_ROUTES},
        "/presence.js": ("GET",),
        "/polling": ("GET",),
        "/client": ("GET", "OPTIONS"),
        "/enter": ("GET",),
        "/leave": ("POST", "OPTIONS"),
        "/presence": ("POST", "OPTIONS"),
        "/state": ("GET",),
        "/jwks.json": ("GET",),
    }
    # Rate mode has no places to keep: neither the heartbeat nor the script.
    assert "/presence" not in route_methods(RATE) and "/presence.js" not in route_methods(RATE)
