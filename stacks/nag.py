"""cdk-nag acknowledgements: each finding the room accepts, with the reason it is true.

They are written as the `cdk_nag` metadata cdk-nag 2.x reads (what NagSuppressions writes), so
the app does not need cdk-nag installed to deploy; the test suite runs the AwsSolutions pack
over the synthesized stack and fails on any finding not acknowledged here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aws_cdk import CfnResource, Stack
from constructs import IConstruct


@dataclass(frozen=True)
class Acknowledgement:
    rule: str
    reason: str
    applies_to: tuple[str, ...] = ()

    def as_metadata(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": self.rule, "reason": self.reason}
        if self.applies_to:
            entry["applies_to"] = list(self.applies_to)
        return entry


# Findings that hold for the whole room, whatever its settings.
PUBLIC_ROUTES = (
    Acknowledgement(
        "AwsSolutions-APIG4",
        "The waiting room is public by design: anyone following the marketing link must "
        "reach /beekeeper, /room and /polling. What admits a visitor is the unguessable "
        "token (128 bits from a CSPRNG) in an HttpOnly cookie, checked by the templates.",
    ),
    Acknowledgement(
        "AwsSolutions-COG4",
        "Visitors are anonymous shoppers with no account; a Cognito user pool would stop "
        "them at the door. The token in their first-party cookie is their identity here.",
    ),
    Acknowledgement(
        "AwsSolutions-APIG2",
        "No route has a required parameter or reads a body (a visitor without a cookie gets "
        "a 200 'no_token' answer by contract; /leave ignores whatever a beacon sends). The "
        "only input, the token, is checked against the exact token pattern in the VTL "
        "templates and the producer before any use, which a request validator can not "
        "express.",
    ),
)

WAF_OFF = Acknowledgement(
    "AwsSolutions-CFR2",
    "The edge's per-address WAF rule is a room setting (waf_requests_per_5_minutes, on by "
    "default) that this room turned off with 0; the origin lock still keeps visitors on the "
    "edge. Set it above 0 to deploy the rule.",
)

# Findings of the edge (stacks/edge.py) whatever the room's settings.
EDGE = (
    Acknowledgement(
        "AwsSolutions-CFR1",
        "A waiting room is for whoever follows the shop's marketing link, wherever they are: "
        "restricting countries is the shop's decision, made at its own site.",
    ),
    Acknowledgement(
        "AwsSolutions-CFR3",
        "CloudFront access logs would record every URL with its query string, and "
        "/client?token= and /leave?token= carry a visitor's admission secret; the API's "
        "access log (no query string, no headers) and the WAF's metrics record the traffic.",
    ),
)

DEFAULT_CERTIFICATE = Acknowledgement(
    "AwsSolutions-CFR4",
    "Without a domain of its own the room answers on the distribution's cloudfront.net name, "
    "whose default certificate CloudFront serves with its own TLS policy; set domain (with a "
    "us-east-1 certificate) and the distribution requires TLS 1.2 or later.",
)

TICKET_KEYS_ROTATION = Acknowledgement(
    "AwsSolutions-SMG4",
    "The secret holds the room's ticket signing keys, rotated by `beekeeper keys rotate`: a "
    "new key is published at /jwks.json a cache lifetime before it signs, and the old one "
    "stays published until its last ticket expires. A Secrets Manager rotation swaps the "
    "value at once, which would refuse every ticket signed before the swap.",
)

JOIN_SECRET_ROTATION = Acknowledgement(
    "AwsSolutions-SMG4",
    "The secret signs the marketing link's challenges and every waiting visitor's token id "
    "(the check that lets a real visitor leave the line): a rotation would make every token "
    "in line unable to leave. It is generated when the room is created and dies with it; "
    "`beekeeper destroy` and a new deploy give a new room a new one.",
)

LOGGING_OFF = (
    Acknowledgement(
        "AwsSolutions-APIG1",
        "Deployed with -c api_logging=false because this account has no API Gateway "
        "CloudWatch Logs role; that role is an account-wide setting that outlives any one "
        "room, so the room does not create it. Set it once and redeploy to get access logs.",
    ),
    Acknowledgement(
        "AwsSolutions-APIG6",
        "Deployed with -c api_logging=false because this account has no API Gateway "
        "CloudWatch Logs role (account-wide, outlives the room). Set it once and redeploy "
        "to get execution logs at ERROR level.",
    ),
)


def acknowledge_in_stack(stack: Stack, acknowledgements: tuple[Acknowledgement, ...]) -> None:
    metadata = dict(stack.template_options.metadata or {})
    existing = metadata.get("cdk_nag", {}).get("rules_to_suppress", [])
    metadata["cdk_nag"] = {
        "rules_to_suppress": [*existing, *(a.as_metadata() for a in acknowledgements)]
    }
    stack.template_options.metadata = metadata


def acknowledge_on(construct: IConstruct, acknowledgements: tuple[Acknowledgement, ...]) -> None:
    """On the construct's CloudFormation resource (its default child for an L2)."""
    resource = construct.node.default_child or construct
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{construct.node.path} is not a CloudFormation resource")
    existing = (resource.get_metadata("cdk_nag") or {}).get("rules_to_suppress", [])
    resource.add_metadata(
        "cdk_nag",
        {"rules_to_suppress": [*existing, *(a.as_metadata() for a in acknowledgements)]},
    )
