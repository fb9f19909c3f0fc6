"""The room's REST API in CloudFormation's own shape: every method's AWS::ApiGateway::Method
properties (RestApiId and ResourceId aside) by (path, method), and the gateway responses'.

The one definition of the API: stacks/api.py deploys exactly these (and checks them with
beekeeper.apigateway.model at synth), local mode's gateway loads the very same properties as
API Gateway stores them (beekeeper.local.gateway), and tests/stack/test_rest_api_model.py holds
the synthesized template equal to them. Pure functions, no CDK: the CloudFormation values the
definition names but does not own (the table's name, the integration role, the producer, the
region) come in as `ApiReferences`, tokens in the stack and plain names locally.

| path | method | integration |
|---|---|---|
| /beekeeper | GET | the producer Lambda, proxy (AWS_PROXY) |
| /room | GET | MOCK: the waiting room page (stacks/page.py) |
| the registry's routes (core/routes.py) | GET, /leave POST | AWS: DynamoDB (vtl/methods.py) |
| the CORS routes | OPTIONS | MOCK: the preflight |
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from beekeeper.core.edge import PAGE_PATH, PRODUCER_PATH
from beekeeper.core.gateway_answers import gateway_responses
from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.core.local_room import (
    LOCAL_INTEGRATION_ROLE,
    LOCAL_PARTITION,
    LOCAL_PRODUCER,
    LOCAL_REGION,
)
from beekeeper.core.routes import mode_of, routes
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import page
from beekeeper.vtl.methods import declared_headers, preflight_method, route_method, static_headers

MethodKey = tuple[str, str]


@dataclass(frozen=True)
class ApiReferences:
    """What the definition names but does not own."""

    table_name: str
    integration_role_arn: str  # the role API Gateway reads and writes the table with
    producer_arn: str  # the producer Lambda's ARN
    region: str
    partition: str


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


def producer_method(refs: ApiReferences) -> dict[str, Any]:
    """GET /beekeeper: the marketing link, the producer through a Lambda proxy integration."""
    uri = (
        f"arn:{refs.partition}:apigateway:{refs.region}:lambda:path/2015-03-31/functions/"
        f"{refs.producer_arn}/invocations"
    )
    return {
        "HttpMethod": "GET",
        "AuthorizationType": "NONE",
        "Integration": {"Type": "AWS_PROXY", "IntegrationHttpMethod": "POST", "Uri": uri},
    }


def page_method(html: str) -> dict[str, Any]:
    """GET /room: the waiting room page from a MOCK integration, with the page's headers."""
    static, overridden = page.split_headers(PAGE_HEADERS)
    template = page.page_response_template(html, overridden)
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
                    # Chosen by the Accept header; a browser asks for text/html, a script may
                    # ask for anything: both get the page.
                    "ResponseTemplates": {"text/html": template, "application/json": template},
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


def definition(settings: RoomSettings, refs: ApiReferences, *, page_html: str) -> RestApiDefinition:
    """The room's whole API; `page_html` is the rendered page (render_page(settings))."""
    capacity = settings.max_inside > 0
    mode = mode_of(capacity=capacity)
    session_seconds = settings.session_seconds if capacity else 0
    methods: dict[MethodKey, dict[str, Any]] = {
        (PRODUCER_PATH, "GET"): producer_method(refs),
        (PAGE_PATH, "GET"): page_method(page_html),
    }
    for found in routes(mode).values():
        path = f"/{found.name}"
        methods[(path, found.method)] = route_method(
            found,
            mode=mode,
            table_name=refs.table_name,
            origin=settings.origin,
            session_seconds=session_seconds,
            credentials=refs.integration_role_arn,
            region=refs.region,
            partition=refs.partition,
        )
        if found.cors:
            methods[(path, "OPTIONS")] = preflight_method(found, settings.origin)
    return RestApiDefinition(methods, gateway_responses(settings.origin))


__all__ = [
    "PAGE_PATH",
    "PRODUCER_PATH",
    "ApiReferences",
    "RestApiDefinition",
    "definition",
    "local_references",
    "page_method",
    "producer_method",
]
