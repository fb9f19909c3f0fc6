"""A capacity-mode room (max_inside > 0): /client renews sessions, /enter and /leave exist, and
the functions and the API may do exactly what the places take (room/places.py)."""

from __future__ import annotations

import base64
import re
from typing import Any

import pytest

from beekeeper import vtl
from beekeeper.core.headers import browser_origin
from beekeeper.core.presence import Presence
from beekeeper.core.routes import CAPACITY, templated
from beekeeper.core.settings import Mode
from beekeeper.stacks import permissions
from beekeeper.vtl.methods import route_method
from beekeeper.waiting_room_site import presence as presence_script
from tests.support.stack_testkit import Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def _method(synthesized: Synthesized, path_part: str, verb: str) -> dict[str, Any]:
    (resource_id,) = (
        logical_id
        for logical_id, resource in synthesized.resources("AWS::ApiGateway::Resource").items()
        if resource["Properties"]["PathPart"] == path_part
    )
    (found,) = (
        method["Properties"]
        for method in synthesized.resources("AWS::ApiGateway::Method").values()
        if method["Properties"]["ResourceId"] == {"Ref": resource_id}
        and method["Properties"]["HttpMethod"] == verb
    )
    return found


def _actions(statement: dict[str, Any]) -> set[str]:
    actions = statement["Action"]
    return set(actions if isinstance(actions, list) else [actions])


def _granted(synthesized: Synthesized, role_id: str) -> dict[str, set[str]]:
    granted: dict[str, set[str]] = {}
    for statement in synthesized.statements_of_role(role_id):
        resources = statement["Resource"]
        for resource in resources if isinstance(resources, list) else [resources]:
            granted.setdefault(flatten(resource), set()).update(_actions(statement))
    return granted


def test_the_changed_room_is_a_capacity_room(synthesized_changed: Synthesized) -> None:
    assert synthesized_changed.settings.max_inside > 0
    paths = {
        resource["Properties"]["PathPart"]
        for resource in synthesized_changed.resources("AWS::ApiGateway::Resource").values()
    }
    assert {"enter", "leave"} <= paths


def test_a_rate_room_has_no_enter_or_leave(synthesized: Synthesized) -> None:
    assert synthesized.settings.max_inside == 0
    paths = {
        resource["Properties"]["PathPart"]
        for resource in synthesized.resources("AWS::ApiGateway::Resource").values()
    }
    assert not {"enter", "leave"} & paths


@pytest.mark.parametrize("route", sorted(templated(CAPACITY)))
def test_capacity_routes_use_their_templates_and_responses(
    synthesized_changed: Synthesized, route: str
) -> None:
    settings = synthesized_changed.settings
    found = templated(CAPACITY)[route]
    table_id, _ = synthesized_changed.only("AWS::DynamoDB::Table")
    values = vtl.template_values(
        table_name=f"<Ref:{table_id}>",
        origin=settings.origin,
        mode=settings.mode,
        session_seconds=settings.session_seconds,
        presence=Presence.of(settings),
    )
    method = _method(synthesized_changed, found.relative, found.method)
    integration = method["Integration"]
    assert flatten(integration["Uri"]).endswith(f":dynamodb:action/{found.vtl.action}")
    assert integration["PassthroughBehavior"] == "NEVER"
    # /leave takes sendBeacon's text/plain and a form post as well as JSON: one template.
    templates = {kind: flatten(text) for kind, text in integration["RequestTemplates"].items()}
    assert set(templates) == set(found.vtl.request_content_types)
    assert set(templates.values()) == {
        vtl.load_template(found.vtl.request_template(CAPACITY), values)
    }

    expected = route_method(
        found,
        mode=CAPACITY,
        table_name=f"<Ref:{table_id}>",
        origin=settings.origin,
        session_seconds=settings.session_seconds,
        presence=Presence.of(settings),
        credentials="",
        region="",
        partition="",
    )
    deployed = {r["StatusCode"]: r for r in integration["IntegrationResponses"]}
    # One integration response per status code, as API Gateway keeps them.
    assert len(deployed) == len(integration["IntegrationResponses"])
    for setting in expected["Integration"]["IntegrationResponses"]:
        response = deployed[setting["StatusCode"]]
        assert response.get("SelectionPattern") == setting.get("SelectionPattern")
        assert (
            flatten(response["ResponseTemplates"]["application/json"])
            == (setting["ResponseTemplates"]["application/json"])
        )
    declared = {r["StatusCode"]: r.get("ResponseParameters", {}) for r in method["MethodResponses"]}
    assert set(deployed) <= set(declared)
    if found.vtl.redirect:
        # One default integration response catches every DynamoDB status: 302, with the
        # Location the template sets, which the method response declares.
        (only,) = deployed.values()
        assert only["StatusCode"] == "302" and "SelectionPattern" not in only
        assert declared["302"]["method.response.header.Location"] is True


def test_session_length_reaches_the_templates(synthesized_changed: Synthesized) -> None:
    request = _method(synthesized_changed, "client", "GET")["Integration"]["RequestTemplates"]
    text = flatten(request["application/json"])
    assert f"#set($holdSeconds = {synthesized_changed.settings.session_seconds})" in text
    assert "#set($until = $now + $holdSeconds)" in text
    assert synthesized_changed.settings.session_seconds == 900


def test_a_heartbeat_holds_the_place_for_the_grace(synthesized_changed: Synthesized) -> None:
    settings = synthesized_changed.settings
    method = _method(synthesized_changed, "presence", "POST")
    text = flatten(method["Integration"]["RequestTemplates"]["text/plain"])
    assert f"#set($holdSeconds = {settings.presence_grace_seconds})" in text
    answers = {r["StatusCode"]: r for r in method["Integration"]["IntegrationResponses"]}
    body = flatten(answers["200"]["ResponseTemplates"]["application/json"])
    assert f'"beat_seconds": {settings.presence_grace_seconds // 3}' in body
    assert f'"idle_seconds": {settings.presence_idle_seconds}' in body


def test_the_presence_script_is_served_byte_for_byte(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    method = _method(synthesized_changed, "presence.js", "GET")
    assert method["Integration"]["Type"] == "MOCK"
    (response,) = method["Integration"]["IntegrationResponses"]
    (template,) = response["ResponseTemplates"].values()
    encoded = re.fullmatch(r'\$util\.base64Decode\("([A-Za-z0-9+/=]+)"\)', template)
    assert encoded is not None
    served = base64.b64decode(encoded.group(1))
    assert served == presence_script.script_bytes()
    headers = response["ResponseParameters"]
    assert headers["method.response.header.Access-Control-Allow-Origin"] == "'*'"
    assert headers["method.response.header.Content-Type"] == "'text/javascript; charset=utf-8'"
    # A rate-mode room keeps no places: no script, no heartbeats.
    paths = {
        resource["Properties"]["PathPart"]
        for resource in synthesized.resources("AWS::ApiGateway::Resource").values()
    }
    assert not {"presence", "presence.js"} & paths


def test_leave_preflight_allows_the_shop_origin_to_post(synthesized_changed: Synthesized) -> None:
    method = _method(synthesized_changed, "leave", "OPTIONS")
    (response,) = method["Integration"]["IntegrationResponses"]
    headers = response["ResponseParameters"]
    origin = browser_origin(synthesized_changed.settings.origin)
    assert headers["method.response.header.Access-Control-Allow-Origin"] == f"'{origin}'"
    assert headers["method.response.header.Access-Control-Allow-Credentials"] == "'true'"
    assert "POST" in headers["method.response.header.Access-Control-Allow-Methods"]
    assert "Content-Type" in headers["method.response.header.Access-Control-Allow-Headers"]


def test_the_api_may_only_read_polls_and_keys_and_update_visitors(
    synthesized_changed: Synthesized,
) -> None:
    table_id, _ = synthesized_changed.only("AWS::DynamoDB::Table")
    (role_id,) = (
        logical_id
        for logical_id, role in synthesized_changed.resources("AWS::IAM::Role").items()
        if role["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
        == {"Service": "apigateway.amazonaws.com"}
    )
    assert _granted(synthesized_changed, role_id) == {
        # /polling, /jwks.json (GetItem of the keys), /client, /enter and /leave.
        f"<GetAtt:{table_id}.Arn>": {
            "dynamodb:BatchGetItem",
            "dynamodb:GetItem",
            "dynamodb:UpdateItem",
        }
    }


@pytest.mark.parametrize("role", ["consumer", "trigger"])
def test_the_wardens_may_query_only_the_leaving_index(
    synthesized_changed: Synthesized, role: str
) -> None:
    table_id, _ = synthesized_changed.only("AWS::DynamoDB::Table")
    _, function = synthesized_changed.function(role)
    granted = _granted(synthesized_changed, function["Properties"]["Role"]["Fn::GetAtt"][0])
    table = f"<GetAtt:{table_id}.Arn>"
    assert granted[table] == set(permissions.table_actions(role, Mode.CAPACITY))
    assert granted[table + "/index/leaving"] == {"dynamodb:Query"}
    assert "dynamodb:Query" not in granted[table]
