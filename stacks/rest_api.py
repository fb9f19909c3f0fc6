"""The room's REST API in CloudFormation's own shape: every method's AWS::ApiGateway::Method
properties (RestApiId and ResourceId aside) by (path, method), and the gateway responses'.

The one definition of the API: stacks/api.py deploys exactly these (and checks them with
beekeeper.apigateway.model at synth), local mode's gateway loads the very same properties as
API Gateway stores them (beekeeper.local.gateway), and tests/stack/test_rest_api_model.py holds
the synthesized template equal to them. Pure functions, no CDK: the CloudFormation values the
definition names but does not own (the table's name, the integration role, the producer, the
region) come in as `ApiReferences`, tokens in the stack and plain names locally.

Every path of the route table (core/routes.py) that a room of its mode has, in the table's
order, by the route's kind:

| kind | integration |
|---|---|
| producer | the producer Lambda, proxy (AWS_PROXY): the marketing link, capacity mode's /leave |
| page | MOCK: the page's HTML (the waiting room page, the work page: stacks/page.py) |
| script | MOCK: the presence script (waiting_room_site/presence.py) |
| template | AWS: DynamoDB through the route's templates (vtl/methods.py) |
| a CORS route's OPTIONS | MOCK: the preflight |
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from beekeeper.core.gateway_answers import gateway_responses
from beekeeper.core.headers import PAGE_HEADERS, PRESENCE_SCRIPT_HEADERS
from beekeeper.core.local_room import (
    LOCAL_INTEGRATION_ROLE,
    LOCAL_PARTITION,
    LOCAL_PRODUCER,
    LOCAL_REGION,
)
from beekeeper.core.presence import Presence
from beekeeper.core.routes import (
    PRESENCE_SCRIPT,
    ROOM_PAGE,
    TABLE,
    WORK_PAGE,
    Kind,
    Route,
    served,
)
from beekeeper.core.settings import Mode, RoomSettings
from beekeeper.stacks import page
from beekeeper.vtl.methods import (
    declared_headers,
    preflight_for,
    route_method,
    static_headers,
)
from beekeeper.waiting_room_site.presence import script_bytes
from beekeeper.waiting_room_site.work_page import render_work_page

MethodKey = tuple[str, str]


@dataclass(frozen=True)
class ApiReferences:
    """What the definition names but does not own."""

    table_name: str
    integration_role_arn: str  # the role API Gateway reads and writes the table with
    producer_arn: str  # the producer Lambda's ARN
    region: str
    partition: str
    # What the page holds a stand-in for until CloudFormation knows it (stacks/page.py
    # `deploy_value`): the push channel's hosts and key; none locally (the page has them).
    page_values: Mapping[str, str] = field(default_factory=dict)


def local_references(table_name: str) -> ApiReferences:
    """What a room on this machine names instead (core/local_room.py)."""
    return ApiReferences(
        table_name=table_name,
        integration_role_arn=LOCAL_INTEGRATION_ROLE,
        producer_arn=LOCAL_PRODUCER,
        region=LOCAL_REGION,
        partition=LOCAL_PARTITION,
    )


@dataclass(frozen=True)
class RestApiDefinition:
    methods: dict[MethodKey, dict[str, Any]]
    gateway_responses: dict[str, dict[str, Any]]


def producer_method(refs: ApiReferences, http_method: str = "GET") -> dict[str, Any]:
    """A producer route (the marketing link, capacity mode's POST /leave): the producer
    Lambda through a proxy integration."""
    uri = (
        f"arn:{refs.partition}:apigateway:{refs.region}:lambda:path/2015-03-31/functions/"
        f"{refs.producer_arn}/invocations"
    )
    return {
        "HttpMethod": http_method,
        "AuthorizationType": "NONE",
        "Integration": {"Type": "AWS_PROXY", "IntegrationHttpMethod": "POST", "Uri": uri},
    }


def page_method(html: str, deploy_values: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A page (the waiting room page, the work page) from a MOCK integration, with the page's
    headers; `deploy_values` are written into the page at deploy (stacks/page.py)."""
    return _static_method(
        html, PAGE_HEADERS, accept=("text/html", "application/json"), deploy_values=deploy_values
    )


def script_method() -> dict[str, Any]:
    """The presence script, its bytes exactly (waiting_room_site/presence.py:
    the shop's integrity hash is of them; the file is ASCII, which base64 decodes unchanged)."""
    return _static_method(
        script_bytes().decode("ascii"), PRESENCE_SCRIPT_HEADERS, accept=("application/json",)
    )


def _static_method(
    body: str,
    headers: dict[str, str],
    *,
    accept: tuple[str, ...],
    deploy_values: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A GET answered by a MOCK integration with `body` and `headers`, whatever the Accept
    header asks for (a response template under each of `accept`, the first for the rest)."""
    static, overridden = page.split_headers(headers)
    template = page.page_response_template(body, overridden, deploy_values)
    return {
        "HttpMethod": "GET",
        "AuthorizationType": "NONE",
        "Integration": {
            "Type": "MOCK",
            "PassthroughBehavior": "NEVER",
            "RequestTemplates": {"application/json": '{"statusCode": 200}'},
            "IntegrationResponses": [
                {
                    "StatusCode": "200",
                    "ResponseParameters": static_headers(static),
                    # Chosen by the Accept header: a browser asks for text/html (the page) or
                    # */* (a script), a script may ask for anything: every one gets the body.
                    "ResponseTemplates": dict.fromkeys(accept, template),
                }
            ],
        },
        "MethodResponses": [
            {
                "StatusCode": "200",
                "ResponseParameters": declared_headers(*static, *overridden),
            }
        ],
    }


def definition(
    settings: RoomSettings,
    refs: ApiReferences,
    *,
    page_html: str,
    work_html: str | None = None,
    table: tuple[Route, ...] = TABLE,
) -> RestApiDefinition:
    """The room's whole API; `page_html` is the rendered page (render_page(settings)),
    `work_html` the work page (render_work_page(settings), rendered here when not given)."""
    if work_html is None:
        work_html = render_work_page(settings)
    mode = settings.mode
    capacity = mode is Mode.CAPACITY
    session_seconds = settings.session_seconds if capacity else 0
    # What each page and script of the table is: its body, rendered for this room.
    static = {
        ROOM_PAGE.name: lambda: page_method(page_html, refs.page_values),
        WORK_PAGE.name: lambda: page_method(work_html),
        PRESENCE_SCRIPT.name: script_method,
    }
    methods: dict[MethodKey, dict[str, Any]] = {}
    for found in served(mode, table):
        for verb in found.methods:
            if found.kind is Kind.PRODUCER:
                methods[(found.path, verb)] = producer_method(refs, verb)
            elif found.kind is Kind.TEMPLATE:
                methods[(found.path, verb)] = route_method(
                    found,
                    mode=mode,
                    table_name=refs.table_name,
                    origin=settings.origin,
                    session_seconds=session_seconds,
                    presence=Presence.of(settings),
                    credentials=refs.integration_role_arn,
                    region=refs.region,
                    partition=refs.partition,
                )
            elif found.name in static:  # a page or a script: GET only (core/routes.py)
                methods[(found.path, verb)] = static[found.name]()
            else:
                raise ValueError(f"the API has no body for the {found.kind} {found.name}")
        if found.cors:
            methods[(found.path, "OPTIONS")] = preflight_for(found.method, settings.origin)
    return RestApiDefinition(methods, gateway_responses(settings.origin))


__all__ = [
    "ApiReferences",
    "RestApiDefinition",
    "definition",
    "local_references",
    "page_method",
    "producer_method",
    "script_method",
]
