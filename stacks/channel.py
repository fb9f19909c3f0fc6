"""The room's push channel: an AWS AppSync Event API, its channel namespace and the pages' key.

- `AWS::AppSync::Api`: the Event API, named after the stack, with the API key and IAM as its
  providers; a connection needs the key, publishing is by IAM, subscribing by the key.
- `AWS::AppSync::ChannelNamespace` `room` (core/push.py NAMESPACE): publishing by IAM only,
  subscribing by the key only; the room's channel is `/room/<name>`.
- `AWS::AppSync::ApiKey`: the key every waiting page carries, which can connect and subscribe
  and nothing else; it expires at `key_expires` (each deploy sets it a year ahead).

"The publishing and subscribing authorization configuration is automatically applied to all
namespaces. You can override this configuration at the namespace" (Understanding channel
namespaces, AWS AppSync Events): the namespace states both again, so the page's key can publish
nowhere. `grant_publish` gives a role `appsync:EventPublish` on the namespace's ARN and nothing
more (stacks/permissions.py). The construct is CloudFormation's own resources (the CDK's L1):
they exist in every aws-cdk-lib the project accepts (>= 2.170; the L2 `EventApi` came in
2.178, and its key would default to a week's life).
"""

from __future__ import annotations

from aws_cdk import aws_appsync as appsync
from aws_cdk import aws_iam as iam
from constructs import Construct

from beekeeper.core import push
from beekeeper.core.settings import RoomSettings
from beekeeper.stacks import page, permissions

API_KEY = "API_KEY"
IAM = "AWS_IAM"


class RoomChannel(Construct):
    def __init__(
        self, scope: Construct, construct_id: str, *, settings: RoomSettings, key_expires: int
    ) -> None:
        """`key_expires`: when the pages' key expires, epoch seconds (core/push.py
        key_expiry: `beekeeper deploy` passes it, a year ahead of the deploy)."""
        super().__init__(scope, construct_id)
        self.settings = settings
        self.api = appsync.CfnApi(
            self,
            "Api",
            name=settings.stack_name,
            event_config=appsync.CfnApi.EventConfigProperty(
                auth_providers=[
                    appsync.CfnApi.AuthProviderProperty(auth_type=API_KEY),
                    appsync.CfnApi.AuthProviderProperty(auth_type=IAM),
                ],
                connection_auth_modes=[appsync.CfnApi.AuthModeProperty(auth_type=API_KEY)],
                default_publish_auth_modes=[appsync.CfnApi.AuthModeProperty(auth_type=IAM)],
                default_subscribe_auth_modes=[appsync.CfnApi.AuthModeProperty(auth_type=API_KEY)],
            ),
        )
        self.namespace = appsync.CfnChannelNamespace(
            self,
            "Namespace",
            api_id=self.api.attr_api_id,
            name=push.NAMESPACE,
            publish_auth_modes=[appsync.CfnChannelNamespace.AuthModeProperty(auth_type=IAM)],
            subscribe_auth_modes=[appsync.CfnChannelNamespace.AuthModeProperty(auth_type=API_KEY)],
        )
        self.key = appsync.CfnApiKey(
            self,
            "PageKey",
            api_id=self.api.attr_api_id,
            description=(
                f"{settings.stack_name}: waiting pages connect and subscribe with it; "
                "`beekeeper deploy` extends it"
            ),
            expires=key_expires,
        )
        self.key_expires = key_expires

    @property
    def http_domain(self) -> str:
        return self.api.attr_dns_http

    @property
    def realtime_domain(self) -> str:
        return self.api.attr_dns_realtime

    @property
    def namespace_arn(self) -> str:
        return self.namespace.attr_channel_namespace_arn

    def grant_publish(self, role: iam.IRole) -> None:
        """`role` may publish to the room's namespace (and nothing else of the API)."""
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(permissions.PUBLISHES_ROOM_STATE), resources=[self.namespace_arn]
            )
        )

    def page_values(self) -> dict[str, str]:
        """The page's stand-ins (stacks/page.py) and the values CloudFormation writes in."""
        return {
            page.REALTIME_HOST: self.realtime_domain,
            page.HTTP_HOST: self.http_domain,
            page.API_KEY: self.key.attr_api_key,
        }
