"""The room's REST API: the marketing link, the page and the templated routes on one origin.

Regional REST API (VTL mapping templates need the REST flavour). One stage, named after the
room, so the visitor's URLs read https://<api>/<room>/beekeeper and .../room.

Every method and gateway response is deployed from the one definition (stacks/rest_api.py: the
producer's proxy, the page's MOCK, the registry's DynamoDB routes and their preflights), which
local mode's gateway loads too. The definition is checked first (beekeeper.apigateway.model):
a method API Gateway would not keep as written (two integration responses of one status, a
status without a method response, a header the method response does not declare) stops the
synth with a sentence that names the route.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aws_cdk import RemovalPolicy, Size, Stack
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from aws_cdk.aws_dynamodb import ITable
from constructs import Construct

from beekeeper.apigateway.model import InvalidApi, check
from beekeeper.core.edge import ORIGIN_HEADER
from beekeeper.core.routes import MARKETING_LINK
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import capacity, permissions, rest_api
from beekeeper.stacks.functions import RETENTION
from beekeeper.stacks.page import deploy_page_channel
from beekeeper.waiting_room_site import render_page

# The construct id of each gateway response (kept: they name the CloudFormation resources).
GATEWAY_RESPONSE_IDS = {
    "DEFAULT_4XX": "Default4xx",
    "DEFAULT_5XX": "Default5xx",
    "THROTTLED": "Throttled",
}

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
        origin_secret: str,
        page_values: Mapping[str, str],
        define: Callable[..., rest_api.RestApiDefinition] = rest_api.definition,
    ) -> None:
        """`page_values`: what the page says that exists only at deploy (the push channel's,
        stacks/channel.py); `define` is stacks/rest_api.definition (a test hands in another to
        see a broken definition refused)."""
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
                    f"{MARKETING_LINK.path}/{MARKETING_LINK.method}": apigw.MethodDeploymentOptions(
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

        integration_role = iam.Role(
            self,
            "TableReadRole",
            assumed_by=iam.ServicePrincipal("apigateway.amazonaws.com"),
            description="API Gateway reads visitors and status for /polling and /client",
        )
        integration_role.add_to_policy(
            iam.PolicyStatement(
                actions=list(permissions.api_table_actions(settings.mode)),
                resources=[table.table_arn],
            )
        )
        refs = rest_api.ApiReferences(
            table_name=table.table_name,
            integration_role_arn=integration_role.role_arn,
            producer_arn=producer.function_arn,
            region=Stack.of(self).region,
            partition=Stack.of(self).partition,
            page_values=page_values,
        )
        page = render_page(settings, channel=deploy_page_channel(settings))
        self.definition = define(settings, refs, page_html=page)
        try:
            check(self.definition.methods, self.definition.gateway_responses)
        except InvalidApi as error:
            raise InvalidApi(f"The room's API can not be synthesized: {error}") from None
        self._methods(self.definition, producer, integration_role)
        self._gateway_responses(self.definition)
        self.origin_lock = self._origin_lock(origin_secret)

    # -- routes ------------------------------------------------------------------------

    def _methods(
        self,
        definition: rest_api.RestApiDefinition,
        producer: lambda_.IFunction,
        role: iam.IRole,
    ) -> None:
        """Each method of the definition, with exactly its properties."""
        resources: dict[str, apigw.IResource] = {}
        for (path, verb), properties in definition.methods.items():
            if path not in resources:
                resources[path] = self.api.root.add_resource(path.removeprefix("/"))
            integration = properties["Integration"]
            if integration["Type"] == "AWS_PROXY":
                # The producer: LambdaIntegration also grants API Gateway the invoke.
                resources[path].add_method(
                    verb, apigw.LambdaIntegration(producer, proxy=True, allow_test_invoke=False)
                )
                continue
            resources[path].add_method(
                verb,
                _integration(integration, role),
                method_responses=[
                    apigw.MethodResponse(
                        status_code=response["StatusCode"],
                        response_parameters=response.get("ResponseParameters"),
                    )
                    for response in properties.get("MethodResponses", [])
                ],
            )

    def _gateway_responses(self, definition: rest_api.RestApiDefinition) -> None:
        """API Gateway's own errors (throttled, WAF-blocked, missing route): JSON, not cached,
        readable by the shop's front end (core/gateway_answers.py)."""
        for kind, properties in definition.gateway_responses.items():
            self.api.add_gateway_response(
                GATEWAY_RESPONSE_IDS[kind],
                type=apigw.ResponseType.of(kind),
                response_headers={
                    name.removeprefix("gatewayresponse.header."): value
                    for name, value in properties["ResponseParameters"].items()
                },
                templates=properties["ResponseTemplates"],
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

    def _origin_lock(self, secret: str) -> wafv2.CfnWebACL:
        """The origin lock: the stage answers only requests that came through the edge, which
        adds ORIGIN_HEADER with the stack's secret to each (stacks/edge.py); anything else gets
        403 before API Gateway runs it. A per-address rule could not work here: behind
        CloudFront every request comes from CloudFront's own addresses, so the per-address
        limit is the edge's (stacks/edge_waf.py)."""
        name = f"{self.settings.stack_name}-origin-lock"
        visibility = wafv2.CfnWebACL.VisibilityConfigProperty(
            cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
        )
        acl = wafv2.CfnWebACL(
            self,
            "OriginLock",
            name=name,
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(
                block=wafv2.CfnWebACL.BlockActionProperty(
                    custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                        response_code=403, custom_response_body_key="UseThePublicAddress"
                    )
                )
            ),
            visibility_config=visibility,
            custom_response_bodies={
                "UseThePublicAddress": wafv2.CfnWebACL.CustomResponseBodyProperty(
                    content_type="APPLICATION_JSON",
                    content='{"message": "this is the room\'s origin; use its public address"}',
                )
            },
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="FromTheEdge",
                    priority=0,
                    statement=wafv2.CfnWebACL.StatementProperty(
                        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
                            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(
                                single_header={"Name": ORIGIN_HEADER}
                            ),
                            positional_constraint="EXACTLY",
                            search_string=secret,
                            text_transformations=[
                                wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")
                            ],
                        )
                    ),
                    action=wafv2.CfnWebACL.RuleActionProperty(allow={}),
                    visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                        cloud_watch_metrics_enabled=True,
                        metric_name=f"{name}-edge",
                        sampled_requests_enabled=True,
                    ),
                )
            ],
        )
        association = wafv2.CfnWebACLAssociation(
            self,
            "OriginLockAssociation",
            resource_arn=self.stage.stage_arn,
            web_acl_arn=acl.attr_arn,
        )
        association.node.add_dependency(self.stage)
        return acl

    # -- URLs ------------------------------------------------------------------------------

    def url_for(self, path: str) -> str:
        return self.stage.url_for_path(path)


def _integration(properties: dict[str, Any], role: iam.IRole) -> apigw.Integration:
    """The CDK integration whose CloudFormation is exactly `properties` (an AWS or MOCK
    integration of the definition; its Credentials are `role`'s ARN)."""
    if properties.get("Credentials") not in (None, role.role_arn):
        raise ValueError("an integration's credentials must be the API's integration role")
    passthrough = properties.get("PassthroughBehavior")
    return apigw.Integration(
        type=apigw.IntegrationType(properties["Type"]),
        integration_http_method=properties.get("IntegrationHttpMethod"),
        uri=properties.get("Uri"),
        options=apigw.IntegrationOptions(
            credentials_role=role if properties.get("Credentials") else None,
            passthrough_behavior=apigw.PassthroughBehavior(passthrough) if passthrough else None,
            request_parameters=properties.get("RequestParameters"),
            request_templates=properties.get("RequestTemplates"),
            integration_responses=[
                apigw.IntegrationResponse(
                    status_code=response["StatusCode"],
                    selection_pattern=response.get("SelectionPattern"),
                    response_parameters=response.get("ResponseParameters"),
                    response_templates=response.get("ResponseTemplates"),
                )
                for response in properties.get("IntegrationResponses", [])
            ],
        ),
    )
