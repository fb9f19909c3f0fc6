"""Local mode answers as the deployed stack does: routes, methods, status codes and headers.

Each test reads what the synthesized stack configures (the very template CloudFormation gets)
and asks local mode's gateway, running the real room code against its store, the same
question. Both sides are built from one definition, stacks/rest_api.py (from core/headers.py,
core/gateway_answers.py, core/routes.py and vtl/methods.py); this holds that what local mode
answers is what that definition makes API Gateway answer.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from beekeeper.core.datamodel import COOKIE_NAME, Token
from beekeeper.core.join_work import WORK_PARAMETER, Challenge, solve
from beekeeper.core.local_room import LOCAL_REGION
from beekeeper.local.emulator import Emulator
from beekeeper.local.gateway import Gateway
from beekeeper.local.room_code import load_room_code
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

Answer = tuple[int, dict[str, list[str]], bytes]
VERBS = ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH")


class LocalGateway:
    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def ask(self, method: str, path: str, headers: dict[str, str] | None = None) -> Answer:
        """One request straight into the WSGI app, with the environ waitress would build."""
        path, _, query = path.partition("?")
        environ: dict[str, Any] = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.input": io.BytesIO(b""),
        }
        for name, value in (headers or {}).items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        started: list[Any] = []
        body = b"".join(self._gateway(environ, lambda s, h: started.extend((s, h))))
        status, header_list = started
        grouped: dict[str, list[str]] = {}
        for name, value in header_list:
            grouped.setdefault(name, []).append(value)
        return int(status.split()[0]), grouped, body

    def join(self) -> Answer:
        """A new place at the marketing link, the room's challenge solved on the way."""
        challenged = self.ask("GET", "/beekeeper")
        (location,) = challenged[1]["Location"]
        challenge = Challenge.parse(location.removeprefix("work#"))
        assert challenged[0] == 302 and challenge is not None, location
        solution = quote(str(solve(challenge)), safe="")
        return self.ask("GET", f"/beekeeper?{WORK_PARAMETER}={solution}")


@pytest.fixture(scope="module")
def local(synthesized: Synthesized) -> Iterator[LocalGateway]:
    settings = synthesized.settings.replace(region=LOCAL_REGION)
    emulator = Emulator()
    emulator.start()
    try:
        resources = emulator.create_room_resources(settings.name)
        code = load_room_code(settings, resources, emulator.client, minute_seconds=60)
        yield LocalGateway(
            Gateway(
                code=code,
                settings=settings,
                dynamodb=emulator.template_target(),
                table_name=resources.table_name,
                host="127.0.0.1:8080",
            )
        )
    finally:
        emulator.stop()


def _paths(synthesized: Synthesized) -> dict[str, str]:
    """Resource logical id -> its path (the room's resources hang off the API's root)."""
    return {
        logical_id: "/" + resource["Properties"]["PathPart"]
        for logical_id, resource in synthesized.resources("AWS::ApiGateway::Resource").items()
    }


def _methods(synthesized: Synthesized) -> dict[tuple[str, str], dict[str, Any]]:
    paths = _paths(synthesized)
    return {
        (paths[m["Properties"]["ResourceId"]["Ref"]], m["Properties"]["HttpMethod"]): m[
            "Properties"
        ]
        for m in synthesized.resources("AWS::ApiGateway::Method").values()
        if "Ref" in m["Properties"]["ResourceId"]
    }


def _unquoted(parameters: dict[str, str]) -> dict[str, str]:
    """API Gateway's 'method.response.header.X': "'value'" -> {"X": "value"}."""
    return {
        name.removeprefix("method.response.header."): value[1:-1]
        for name, value in parameters.items()
    }


def _headers(answer: Answer) -> dict[str, str]:
    return {name: values[-1] for name, values in answer[1].items() if name != "Content-Length"}


def test_every_route_and_method_is_answered_as_the_stack_routes_it(
    synthesized: Synthesized, local: LocalGateway
) -> None:
    deployed = set(_methods(synthesized))
    for path in sorted({p for p, _ in deployed} | {"/", "/nothing"}):
        for verb in VERBS:
            status = local.ask(verb, path)[0]
            if (path, verb) in deployed:
                assert status != 403, (path, verb)
            else:
                assert status == 403, (path, verb)


def test_an_unrouted_request_gets_the_stacks_gateway_response(
    synthesized: Synthesized, local: LocalGateway
) -> None:
    (default_4xx,) = (
        r["Properties"]
        for r in synthesized.resources("AWS::ApiGateway::GatewayResponse").values()
        if r["Properties"]["ResponseType"] == "DEFAULT_4XX"
    )
    answer = local.ask("POST", "/room")
    assert answer[0] == 403
    expected = _unquoted(default_4xx["ResponseParameters"])
    expected = {k.removeprefix("gatewayresponse.header."): v for k, v in expected.items()}
    assert _headers(answer) == {"Content-Type": "application/json", **expected}
    template = default_4xx["ResponseTemplates"]["application/json"]
    rendered = template.replace("$context.error.messageString", '"Missing Authentication Token"')
    assert json.loads(answer[2]) == json.loads(rendered)


def test_the_client_preflight_matches_the_stacks(
    synthesized: Synthesized, local: LocalGateway
) -> None:
    method = _methods(synthesized)[("/client", "OPTIONS")]
    (response,) = method["Integration"]["IntegrationResponses"]
    answer = local.ask("OPTIONS", "/client", {"Origin": "https://xn--bcher-kva.example.com:8443"})
    assert answer[0] == int(response["StatusCode"]) == 204
    assert _headers(answer) == _unquoted(response["ResponseParameters"])
    assert answer[2] == b""


def test_the_page_carries_the_stacks_headers(synthesized: Synthesized, local: LocalGateway) -> None:
    method = _methods(synthesized)[("/room", "GET")]
    (response,) = method["Integration"]["IntegrationResponses"]
    expected = _unquoted(response["ResponseParameters"])
    # The page's template: its text with the push channel's values written in at deploy.
    template = flatten(response["ResponseTemplates"]["text/html"])
    for name, value in re.findall(
        r'#set\(\$context\.responseOverride\.header\.([A-Za-z-]+) = "((?:[^"\\]|\\.)*)"\)',
        template,
    ):
        expected[name] = value
    answer = local.ask("GET", "/room")
    assert answer[0] == 200
    assert _headers(answer) == expected
    assert "frame-ancestors 'none'" in expected["Content-Security-Policy"]
    assert expected["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("route", ["/polling", "/client", "/jwks.json"])
def test_table_answers_carry_the_stacks_headers(
    synthesized: Synthesized, local: LocalGateway, route: str
) -> None:
    method = _methods(synthesized)[(route, "GET")]
    by_pattern = {
        r.get("SelectionPattern"): r for r in method["Integration"]["IntegrationResponses"]
    }
    token = "AAAAAAAAAAAAAAAAAAAAAA.1"
    query = f"?token={token}" if route == "/client" else ""
    answer = local.ask("GET", route + query, {"Cookie": f"{COOKIE_NAME}={token}"})
    success = by_pattern[None]
    assert answer[0] == int(success["StatusCode"]) == 200
    assert _headers(answer) == _unquoted(success["ResponseParameters"])


def test_two_cookie_headers_stay_two_and_a_returning_visitor_keeps_the_place(
    local: LocalGateway,
) -> None:
    first = local.join()
    assert first[0] == 302
    (set_cookie,) = first[1]["Set-Cookie"]
    token = set_cookie.split(";", 1)[0].split("=", 1)[1]
    assert Token.parse(token) is not None
    # Two Cookie headers, the token in the second: waitress hands them over joined by ", ".
    again = local.ask("GET", "/beekeeper", {"Cookie": f"theme=dark, {COOKIE_NAME}={token}"})
    assert again[0] == 302
    assert again[1]["Location"] == [f"room#turn={Token.parse(token).ordinal}"]  # type: ignore[union-attr]
    assert "Set-Cookie" not in again[1] or all(token in value for value in again[1]["Set-Cookie"])


def test_of_several_cookie_headers_the_templates_read_the_last(local: LocalGateway) -> None:
    """A mapping template's $input.params() holds one value per header name; which one of
    several AWS does not document, so local mode keeps only the last (as the proxy event's
    `headers` does for the same request; docs/vtl.md), never more than API Gateway could."""
    first = local.join()
    (set_cookie,) = first[1]["Set-Cookie"]
    token = set_cookie.split(";", 1)[0].split("=", 1)[1]

    def polling_state(cookie_headers: str) -> str:
        answer = local.ask("GET", "/polling", {"Cookie": cookie_headers})
        assert answer[0] == 200
        return str(json.loads(answer[2])["state"])

    # Two Cookie headers (waitress joins them with ", "): the token in the last one is read.
    assert polling_state(f"theme=dark, {COOKIE_NAME}={token}") == "waiting"
    # In the first one only, it is not: the visitor has no token as far as the template sees.
    assert polling_state(f"{COOKIE_NAME}={token}, theme=dark") == "no_token"
    # One Cookie header with several cookies is read whole.
    assert polling_state(f"theme=dark; {COOKIE_NAME}={token}") == "waiting"
