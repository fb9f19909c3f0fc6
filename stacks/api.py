"""The room's REST API: the marketing link, the page, /polling and /client on one origin.

Regional REST API (VTL mapping templates need the REST flavour). One stage, named after the
room, so the visitor's URLs read https://<api>/<room>/beekeeper and .../room.

- GET /beekeeper  producer Lambda, proxy integration.
- GET /room       the waiting room page from a MOCK integration (stacks/page.py).
- GET /polling    DynamoDB BatchGetItem, templates from beekeeper.vtl.
- GET /client     DynamoDB GetItem, templates from beekeeper.vtl, CORS for the shop's origin.

A DynamoDB error never reaches the visitor as an AWS error document: the integration responses
come from beekeeper.vtl.integration.integration_settings, the same table local mode answers
with (a 503 JSON answer with Retry-After that the page retries, and the API 5xx alarm).
"""

from __future__ import annotations

from collections.abc import Iterable

from aws_cdk import RemovalPolicy, Size
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from aws_cdk.aws_dynamodb import ITable
from constructs import Construct

from beekeeper import vtl
from beekeeper.core.gateway_answers import (
    CORS_ROUTES,
    GATEWAY_ERROR_TEMPLATE,
    PREFLIGHT_STATUS,
    gateway_error_headers,
    preflight_headers,
    route_method,
)
from beekeeper.core.headers import PAGE_HEADERS
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity, page, permissions
from beekeeper.stacks.functions import RETENTION
from beekeeper.vtl.integration import (
    IntegrationResponseSetting,
    integration_settings,
    request_content_types,
)
from beekeeper.waiting_room_site import render_page

# Seconds a client should wait after API Gateway itself throttles it.
RETRY_AFTER_SECONDS = 2

# The access log: one JSON line per request. No query string and no headers: /client?token=
# and the cookie carry a visitor's admission secret.
ACCESS_LOG_FORMAT = (
    '{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",'
    '"time":"$context.requestTime","method":"$context.httpMethod",'
    '"resource":"$context.resourcePath","status":"$context.status",'
    '"length":"$context.responseLength","latencyMs":"$context.responseLatency",'
    '"integrationStatus":"$context.integration.status",'
    '"integrationLatencyMs":"$context.integration.latency",'
    '"integrationError":"$context.integration.error",'
    '"error":"$context.error.message","errorType":"$context.error.responseType",'
    '"waf":"$context.waf.error"}'
)


def _quoted(headers: dict[str, str]) -> dict[str, str]:
    """Static header mappings, as API Gateway writes them: 'value'."""
    return {f"method.response.header.{name}": f"'{value}'" for name, value in headers.items()}


def _declared(*header_sets: Iterable[str]) -> dict[str, bool]:
    return {f"method.response.header.{name}": True for headers in header_sets for name in headers}


class RoomApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        table: ITable,
        producer: lambda_.IFunction,
        logging_enabled: bool,
    ) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.stage_name = settings.name
        throttle = capacity.stage_throttle(settings)

        access_logs = None
        if logging_enabled:
            access_logs = logs.LogGroup(
                self,
                "AccessLogs",
                retention=RETENTION[settings.log_retention_days],
                removal_policy=RemovalPolicy.DESTROY,
            )
        self.api = apigw.RestApi(
            self,
            "Api",
            rest_api_name=settings.stack_name,
            description=f"Beekeeper waiting room {settings.name}",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # The account-wide logging role is not this stack's to create or delete.
            cloud_watch_role=False,
            # Gzip the page (and any answer over 1 KiB) for clients that accept it.
            min_compression_size=Size.kibibytes(1),
            deploy_options=apigw.StageOptions(
                stage_name=self.stage_name,
                throttling_rate_limit=throttle.rate_limit,
                throttling_burst_limit=throttle.burst_limit,
                method_options={
                    # The marketing link alone never takes more than the counters absorb.
                    "/beekeeper/GET": apigw.MethodDeploymentOptions(
                        throttling_rate_limit=throttle.arrivals_rate_limit,
                        throttling_burst_limit=min(
                            throttle.arrivals_rate_limit, throttle.burst_limit
                        ),
                    )
                },
                logging_level=(
                    apigw.MethodLoggingLevel.ERROR
                    if logging_enabled
                    else apigw.MethodLoggingLevel.OFF
                ),
                # Request and response bodies would put visitors' tokens in the logs.
                data_trace_enabled=False,
                access_log_destination=(
                    apigw.LogGroupLogDestination(access_logs) if access_logs else None
                ),
                access_log_format=(
                    apigw.AccessLogFormat.custom(ACCESS_LOG_FORMAT) if access_logs else None
                ),
            ),
        )
        self.stage = self.api.deployment_stage
        # The stack's outputs are exactly docs/data-model.md's; RestApi's own is left out.
        self.api.node.try_remove_child("Endpoint")
        if logging_enabled:
            self._own_execution_log_group()

        self._marketing_link(producer)
        self._page()
        integration_role = iam.Role(
            self,
            "TableReadRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            description="API Gateway reads visitors and status for /polling and /client",
        )
        capacity_mode = settings.max_inside > 0
        session_seconds = settings.session_seconds if capacity_mode else 0
        integration_role.add_to_policy(
            iam.PolicyStatement(
                actions=list(permissions.api_table_actions(capacity=capacity_mode)),
                resources=[table.table_arn],
            )
        )
        values = vtl.template_values(
            table_name=table.table_name, origin=settings.origin, session_seconds=session_seconds
        )
        for route, (request_template, _response, action) in vtl.routes(
            capacity=capacity_mode
        ).items():
            resource = self.api.root.add_resource(route)
            method = route_method(route)
            self._dynamodb_route(
                resource,
                method=method,
                action=action,
                role=integration_role,
                request_templates=dict.fromkeys(
                    request_content_types(route), vtl.load_template(request_template, values)
                ),
                responses=integration_settings(
                    route,
                    table_name=table.table_name,
                    origin=settings.origin,
                    session_seconds=session_seconds,
                ),
            )
            if route in CORS_ROUTES:
                # The shop's own pages may call these with the visitor's cookie.
                self._preflight(resource, method)
        self._gateway_responses()
        self.web_acl = (
            self._waf(settings.waf_requests_per_5_minutes)
            if settings.waf_requests_per_5_minutes
            else None
        )

    # -- routes --------------------------------------------------------------------------

    def _marketing_link(self, producer: lambda_.IFunction) -> None:
        self.api.root.add_resource("beekeeper").add_method(
            "GET", apigw.LambdaIntegration(producer, proxy=True, allow_test_invoke=False)
        )

    def _page(self) -> None:
        html = render_page(self.settings)
        static, overridden = page.split_headers(PAGE_HEADERS)
        template = page.page_response_template(html, overridden)
        integration = apigw.MockIntegration(
            passthrough_behavior=apigw.PassthroughBehavior.NEVER,
            request_templates={"application/json": '{"statusCode": 200}'},
            integration_responses=[
                apigw.IntegrationResponse(
                    status_code="200",
                    response_parameters=_quoted(static),
                    # Chosen by the Accept header; a browser asks for text/html, a script
                    # may ask for anything: both get the page.
                    response_templates={"text/html": template, "application/json": template},
                )
            ],
        )
        self.api.root.add_resource("room").add_method(
            "GET",
            integration,
            method_responses=[
                apigw.MethodResponse(
                    status_code="200", response_parameters=_declared(static, overridden)
                )
            ],
        )

    def _dynamodb_route(
        self,
        resource: apigw.Resource,
        *,
        method: str,
        action: str,
        role: iam.IRole,
        request_templates: dict[str, str],
        responses: tuple[IntegrationResponseSetting, ...],
    ) -> None:
        integration = apigw.AwsIntegration(
            service="dynamodb",
            action=action,
            integration_http_method="POST",
            options=apigw.IntegrationOptions(
                credentials_role=role,
                # Never forward a request the templates do not shape (an unexpected
                # Content-Type gets 415, not a raw body sent to DynamoDB).
                passthrough_behavior=apigw.PassthroughBehavior.NEVER,
                request_templates=request_templates,
                integration_responses=[
                    apigw.IntegrationResponse(
                        status_code=str(response.status_code),
                        selection_pattern=response.selection_pattern,
                        response_parameters=_quoted(dict(response.header_values)),
                        response_templates={"application/json": response.response_template},
                    )
                    for response in responses
                ],
            ),
        )
        # One method response per status code (a code may serve several integration
        # responses), declaring every header any of them sets.
        declared: dict[str, dict[str, bool]] = {}
        for response in responses:
            headers = declared.setdefault(str(response.status_code), {})
            headers |= _declared(dict(response.header_values), response.overridden_headers)
        resource.add_method(
            method,
            integration,
            method_responses=[
                apigw.MethodResponse(status_code=code, response_parameters=parameters)
                for code, parameters in declared.items()
            ],
        )

    def _preflight(self, resource: apigw.Resource, method: str) -> None:
        """OPTIONS: the CORS preflight the shop's pages may send, answered by API Gateway."""
        headers = preflight_headers(self.settings.origin, method)
        resource.add_method(
            "OPTIONS",
            apigw.MockIntegration(
                passthrough_behavior=apigw.PassthroughBehavior.NEVER,
                request_templates={"application/json": f'{{"statusCode": {PREFLIGHT_STATUS}}}'},
                integration_responses=[
                    apigw.IntegrationResponse(
                        status_code=str(PREFLIGHT_STATUS), response_parameters=_quoted(headers)
                    )
                ],
            ),
            method_responses=[
                apigw.MethodResponse(
                    status_code=str(PREFLIGHT_STATUS), response_parameters=_declared(headers)
                )
            ],
        )

    def _gateway_responses(self) -> None:
        """API Gateway's own errors (throttled, WAF-blocked, missing route): JSON, not cached,
        readable by the shop's front end."""
        headers = gateway_error_headers(self.settings.origin)
        quoted = {name: f"'{value}'" for name, value in headers.items()}
        body = {"application/json": GATEWAY_ERROR_TEMPLATE}
        self.api.add_gateway_response(
            "Default4xx",
            type=apigw.ResponseType.DEFAULT_4_XX,
            response_headers=quoted,
            templates=body,
        )
        self.api.add_gateway_response(
            "Default5xx",
            type=apigw.ResponseType.DEFAULT_5_XX,
            response_headers=quoted,
            templates=body,
        )
        self.api.add_gateway_response(
            "Throttled",
            type=apigw.ResponseType.THROTTLED,
            response_headers={**quoted, "Retry-After": f"'{RETRY_AFTER_SECONDS}'"},
            templates=body,
        )

    # -- logging and protection ----------------------------------------------------------

    def _own_execution_log_group(self) -> None:
        """API Gateway would create the execution log group itself, without a retention, and
        it would outlive the stack; the stack creates it first under the very same name."""
        group = logs.LogGroup(
            self,
            "ExecutionLogs",
            log_group_name=f"API-Gateway-Execution-Logs_{self.api.rest_api_id}/{self.stage_name}",
            retention=RETENTION[self.settings.log_retention_days],
            removal_policy=RemovalPolicy.DESTROY,
        )
        self.stage.node.add_dependency(group)

    def _waf(self, limit: int) -> wafv2.CfnWebACL:
        """A per-IP rate-based rule: more than `limit` requests in 5 minutes from one address
        get 429 with Retry-After until the address slows down."""
        name = f"{self.settings.stack_name}-per-ip"
        acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            name=name,
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name=name,
                sampled_requests_enabled=True,
            ),
            custom_response_bodies={
                "TooManyRequests": wafv2.CfnWebACL.CustomResponseBodyProperty(
                    content_type="APPLICATION_JSON",
                    content='{"error": "too many requests from this address"}',
                )
            },
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="PerIpRate",
                    priority=0,
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=limit, aggregate_key_type="IP", evaluation_window_sec=300
                        )
                    ),
                    action=wafv2.CfnWebACL.RuleActionProperty(
                        block=wafv2.CfnWebACL.BlockActionProperty(
                            custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                                response_code=429,
                                custom_response_body_key="TooManyRequests",
                                response_headers=[
                                    wafv2.CfnWebACL.CustomHTTPHeaderProperty(
                                        name="Retry-After", value="60"
                                    )
                                ],
                            )
                        )
                    ),
                    visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                        cloud_watch_metrics_enabled=True,
                        metric_name=f"{name}-rate",
                        sampled_requests_enabled=True,
                    ),
                )
            ],
        )
        association = wafv2.CfnWebACLAssociation(
            self, "WebAclAssociation", resource_arn=self.stage.stage_arn, web_acl_arn=acl.attr_arn
        )
        association.node.add_dependency(self.stage)
        return acl

    # -- URLs ------------------------------------------------------------------------------

    def url_for(self, path: str) -> str:
        return self.stage.url_for_path(path)
