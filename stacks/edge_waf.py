"""The edge's per-address WAF: a small stack of its own in us-east-1.

AWS WAF takes a web ACL for CloudFront only in us-east-1 (scope CLOUDFRONT: AWS WAF API
reference, CreateWebACL, "Scope"), and the room may
be anywhere, so the ACL lives in `beekeeper-<room>-edge-waf` in us-east-1 and the room's stack
reads its ARN through the CDK's cross-region references (SSM parameters the CDK writes and
reads with a small custom resource on each side). `beekeeper deploy` and `destroy` deploy and
remove both stacks (`--all`); a room without the rule (waf_requests_per_5_minutes = 0) has
no such stack.

One rule: a rate-based rule counting, per viewer address, the requests for the marketing link
(the place-taking requests) over AWS WAF's 5-minute evaluation window, and answering 429 with
Retry-After beyond the room's limit. Only the marketing link is counted: the page and the
shared document come from the edge's cache, and a shop's own servers call /client for every
admitted visitor from a handful of addresses.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Environment, Stack, Tags
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from beekeeper.core.edge import WAF_REGION
from beekeeper.core.routes import MARKETING_LINK
from beekeeper.core.settings import RoomSettings

# AWS WAF's evaluation windows are 60, 120, 300 and 600 s, and a limit at least 10 (AWS WAF
# Developer Guide, "Rate-based rule statement"); the setting counts per 5 minutes. A blocking
# rule may answer with its own status, headers and body ("Sending custom responses for Block
# actions").
EVALUATION_WINDOW_SECONDS = 300
RETRY_AFTER_SECONDS = 60
BLOCKED_BODY = '{"error": "too many places taken from this address; try again in a minute"}'


class EdgeWafStack(Stack):
    def __init__(self, scope: Construct, *, settings: RoomSettings, **kwargs: Any) -> None:
        kwargs.setdefault("env", Environment(region=WAF_REGION))
        kwargs.setdefault(
            "description", f"Beekeeper waiting room '{settings.name}': the edge's WAF"
        )
        super().__init__(
            scope, settings.names.edge_waf_stack, cross_region_references=True, **kwargs
        )
        Tags.of(self).add("beekeeper:room", settings.name)
        name = f"{settings.stack_name}-edge"
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            name=name,
            scope="CLOUDFRONT",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility(name),
            custom_response_bodies={
                "TooManyPlaces": wafv2.CfnWebACL.CustomResponseBodyProperty(
                    content_type="APPLICATION_JSON", content=BLOCKED_BODY
                )
            },
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="PlacesPerAddress",
                    priority=0,
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=settings.waf_requests_per_5_minutes,
                            aggregate_key_type="IP",
                            evaluation_window_sec=EVALUATION_WINDOW_SECONDS,
                            scope_down_statement=_marketing_link(),
                        )
                    ),
                    action=wafv2.CfnWebACL.RuleActionProperty(
                        block=wafv2.CfnWebACL.BlockActionProperty(
                            custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                                response_code=429,
                                custom_response_body_key="TooManyPlaces",
                                response_headers=[
                                    wafv2.CfnWebACL.CustomHTTPHeaderProperty(
                                        name="Retry-After", value=str(RETRY_AFTER_SECONDS)
                                    )
                                ],
                            )
                        )
                    ),
                    visibility_config=_visibility(f"{name}-places"),
                )
            ],
        )


def _marketing_link() -> wafv2.CfnWebACL.StatementProperty:
    """Requests for the marketing link, however the path is written: percent-decoded and
    normalised (doubled slashes, "/./" and "/../" resolved) before it is compared."""
    return wafv2.CfnWebACL.StatementProperty(
        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
            positional_constraint="STARTS_WITH",
            search_string=MARKETING_LINK.path,
            text_transformations=[
                wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="URL_DECODE"),
                wafv2.CfnWebACL.TextTransformationProperty(priority=1, type="NORMALIZE_PATH"),
            ],
        )
    )


def _visibility(metric: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=metric, sampled_requests_enabled=True
    )
