"""The edge: the distribution is core/edge.py's behaviors of the route table, path by path,
and so is the WAF.

Local mode's edge serves by the same records (local/edge.py), so what this holds of the
template holds of a rehearsal too.
"""

from __future__ import annotations

import json
from typing import Any

from beekeeper.core.datamodel import COOKIE_NAME, TOKEN_HEADER
from beekeeper.core.edge import (
    CACHED_ERROR_STATUSES,
    VISITOR_HEADERS,
    WAF_REGION,
    CacheKey,
    behavior_for,
    behaviors,
)
from beekeeper.core.join_work import SHARED_SECONDS, WORK_PARAMETER
from beekeeper.core.routes import MARKETING_LINK, ROOM_PAGE
from beekeeper.stacks.edge_waf import EVALUATION_WINDOW_SECONDS
from tests.support.stack_testkit import Synthesized

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # "Use managed cache policies"


def _config(synthesized: Synthesized) -> dict[str, Any]:
    _, distribution = synthesized.only("AWS::CloudFront::Distribution")
    config: dict[str, Any] = distribution["Properties"]["DistributionConfig"]
    return config


def _policy(synthesized: Synthesized, reference: Any, kind: str) -> dict[str, Any]:
    resource = synthesized.raw["Resources"][reference["Ref"]]
    assert resource["Type"] == kind
    config: dict[str, Any] = resource["Properties"][
        "CachePolicyConfig" if kind.endswith("CachePolicy") else "OriginRequestPolicyConfig"
    ]
    return config


def test_every_public_path_is_a_behavior_as_core_describes_it(synthesized: Synthesized) -> None:
    mode = synthesized.settings.mode
    found = {b["PathPattern"]: b for b in _config(synthesized)["CacheBehaviors"]}
    assert set(found) == {b.path for b in behaviors(mode)}
    for behavior in behaviors(mode):
        made = found[behavior.path]
        assert tuple(sorted(made["AllowedMethods"])) == tuple(sorted(behavior.methods))
        assert made["ViewerProtocolPolicy"] == "redirect-to-https"
        if not behavior.cached:
            assert made["CachePolicyId"] == CACHING_DISABLED, behavior.path
        else:
            policy = _policy(synthesized, made["CachePolicyId"], "AWS::CloudFront::CachePolicy")
            # The room's own Cache-Control decides, never longer than the behavior allows.
            assert (policy["MinTTL"], policy["DefaultTTL"], policy["MaxTTL"]) == (
                0,
                0,
                behavior.cache_seconds,
            ), behavior.path
            key = policy["ParametersInCacheKeyAndForwardedToOrigin"]
            assert key["CookiesConfig"] == _listed("Cookie", behavior.key.cookies)
            assert key["HeadersConfig"] == _listed("Header", behavior.key.headers)
            assert key["QueryStringsConfig"] == _listed("QueryString", behavior.key.query)
        if behavior.cookies:
            request = _policy(
                synthesized, made["OriginRequestPolicyId"], "AWS::CloudFront::OriginRequestPolicy"
            )
            assert request["CookiesConfig"] == {
                "CookieBehavior": "whitelist",
                "Cookies": [COOKIE_NAME],
            }
            assert request["QueryStringsConfig"] == {"QueryStringBehavior": "all"}
            assert request["HeadersConfig"] == {
                "HeaderBehavior": "whitelist",
                "Headers": list(VISITOR_HEADERS),
            }
        else:
            assert "OriginRequestPolicyId" not in made, behavior.path


def _listed(kind: str, names: tuple[str, ...]) -> dict[str, Any]:
    """A cache policy's cookies, headers or query strings config listing `names` (or none)."""
    if not names:
        return {f"{kind}Behavior": "none"}
    plural = {"Cookie": "Cookies", "Header": "Headers", "QueryString": "QueryStrings"}[kind]
    return {f"{kind}Behavior": "whitelist", plural: list(names)}


def test_the_page_and_the_state_are_cached_and_every_visitor_route_is_not() -> None:
    for mode in ("rate", "capacity"):
        page = behavior_for(ROOM_PAGE.path, mode)
        assert page is not None and page.cached and page.key == CacheKey()
        # The marketing link: its shared challenge is kept, under the visitor's cookie, token
        # header, Accept and solution, so nothing about one visitor reaches another.
        producer = behavior_for(MARKETING_LINK.path, mode)
        assert producer is not None and producer.cache_seconds == SHARED_SECONDS
        assert producer.cookies == (COOKIE_NAME,)
        assert producer.key == CacheKey(
            cookies=(COOKIE_NAME,), query=(WORK_PARAMETER,), headers=("Accept", TOKEN_HEADER)
        )
        for behavior in behaviors(mode):
            if behavior.cached:
                # Whatever of the visitor a kept answer could depend on is in its key.
                assert set(behavior.cookies) <= set(behavior.key.cookies), behavior.path
                assert TOKEN_HEADER not in behavior.headers or TOKEN_HEADER in behavior.key.headers


def test_a_room_makes_three_cache_policies(synthesized: Synthesized) -> None:
    """docs/limits.md: an account holds 20 cache policies by default, so 6 rooms at once."""
    policies = synthesized.resources("AWS::CloudFront::CachePolicy")
    assert len(policies) == 3
    assert len({(b.cache_seconds, b.key) for b in behaviors("rate") if b.cached}) == 3


def test_no_error_is_kept_for_another_visitor(synthesized: Synthesized) -> None:
    responses = _config(synthesized)["CustomErrorResponses"]
    assert {r["ErrorCode"]: r["ErrorCachingMinTTL"] for r in responses} == dict.fromkeys(
        CACHED_ERROR_STATUSES, 0
    )


def test_the_origin_is_the_api_stage_over_tls_and_host_is_never_forwarded(
    synthesized: Synthesized,
) -> None:
    (origin,) = _config(synthesized)["Origins"]
    assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    assert origin["CustomOriginConfig"]["OriginSSLProtocols"] == ["TLSv1.2"]
    stage_id, _ = synthesized.only("AWS::ApiGateway::Stage")
    # The stage's path, cut from the stage URL (the CDK's RestApiOrigin): /<stage>.
    assert json.dumps({"Ref": stage_id}) in json.dumps(origin["OriginPath"])
    for policy in synthesized.resources("AWS::CloudFront::OriginRequestPolicy").values():
        headers = policy["Properties"]["OriginRequestPolicyConfig"]["HeadersConfig"]
        assert "host" not in {h.lower() for h in headers.get("Headers", [])}


def test_the_room_answers_on_its_domain_with_its_certificate(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    config = _config(synthesized)
    assert config["Aliases"] == [synthesized.settings.domain]
    certificate = config["ViewerCertificate"]
    assert certificate["AcmCertificateArn"] == synthesized.settings.certificate_arn
    assert certificate["MinimumProtocolVersion"] == "TLSv1.2_2021"
    assert certificate["SslSupportMethod"] == "sni-only"
    # Without a domain: the distribution's own name and CloudFront's certificate.
    changed = _config(synthesized_changed)
    assert "Aliases" not in changed
    assert changed.get("ViewerCertificate", {"CloudFrontDefaultCertificate": True}) == {
        "CloudFrontDefaultCertificate": True
    }


def test_the_edge_waf_limits_places_per_address_from_us_east_1(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    waf = synthesized.edge_waf_raw
    assert waf is not None
    (acl_id, acl), *others = (
        (logical_id, r)
        for logical_id, r in waf["Resources"].items()
        if r["Type"] == "AWS::WAFv2::WebACL"
    )
    assert others == []
    properties = acl["Properties"]
    assert properties["Scope"] == "CLOUDFRONT"
    assert properties["DefaultAction"] == {"Allow": {}}
    (rule,) = properties["Rules"]
    rate = rule["Statement"]["RateBasedStatement"]
    assert rate["Limit"] == synthesized.settings.waf_requests_per_5_minutes
    assert rate["AggregateKeyType"] == "IP"
    assert rate["EvaluationWindowSec"] == EVALUATION_WINDOW_SECONDS
    scope = rate["ScopeDownStatement"]["ByteMatchStatement"]
    assert scope["SearchString"] == "/beekeeper"  # the marketing link
    assert scope["FieldToMatch"] == {"UriPath": {}}
    assert [t["Type"] for t in scope["TextTransformations"]] == ["URL_DECODE", "NORMALIZE_PATH"]
    response = rule["Action"]["Block"]["CustomResponse"]
    assert response["ResponseCode"] == 429
    assert [h["Name"] for h in response["ResponseHeaders"]] == ["Retry-After"]
    # The distribution carries it, through the CDK's cross-region reference.
    assert "WebACLId" in _config(synthesized)
    assert WAF_REGION == "us-east-1"
    # A room with the rule turned off has no WAF stack and no web ACL on its distribution.
    assert synthesized_changed.edge_waf_raw is None
    assert "WebACLId" not in _config(synthesized_changed)
    assert acl_id


def test_the_cdk_cross_region_handler_only_reads_the_cdk_s_exports(
    synthesized: Synthesized,
) -> None:
    """The one function the room does not write: the CDK's reader of the WAF's ARN."""
    handler = synthesized.cdk_handler()
    kinds = sorted(r["Type"] for r in handler.values())
    assert kinds == ["AWS::IAM::Role", "AWS::Lambda::Function"]
    (role,) = (r for r in handler.values() if r["Type"] == "AWS::IAM::Role")
    actions = {
        action
        for policy in role["Properties"].get("Policies", [])
        for statement in policy["PolicyDocument"]["Statement"]
        for action in (
            statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        )
    }
    assert actions and all(action.startswith("ssm:") for action in actions), actions


def test_local_mode_s_edge_treats_every_path_as_the_distribution_does(
    synthesized: Synthesized,
) -> None:
    """The local edge and the template come from one description: what the template keeps at
    the edge, and how long, the local edge keeps too; what it never keeps, neither does it."""
    from beekeeper.local.edge import Edge
    from tests.unit.test_local_edge import Clock, Origin, ask

    for made in _config(synthesized)["CacheBehaviors"]:
        path = made["PathPattern"]
        if made["CachePolicyId"] == CACHING_DISABLED:
            kept = 0
        else:
            kept = _policy(synthesized, made["CachePolicyId"], "AWS::CloudFront::CachePolicy")[
                "MaxTTL"
            ]
        origin, clock = Origin(headers={"Cache-Control": "public, max-age=100000"}), Clock()
        edge = Edge(origin, mode="rate", clock=clock)
        method = "GET" if "GET" in made["AllowedMethods"] else made["AllowedMethods"][0]
        ask(edge, path, method=method)
        clock.now += max(0, kept - 0.01)
        ask(edge, path, method=method)
        assert len(origin.seen) == (1 if kept else 2), path
