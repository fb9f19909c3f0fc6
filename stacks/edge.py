"""The room's public address: a CloudFront distribution in front of the API.

Built from core/edge.py's behaviors (the one description local mode's edge serves by too): one
cache behavior per public path, a cache policy per cache lifetime and key (minimum and default
TTL 0, so the room's own Cache-Control decides, up to the behavior's maximum), the managed
CachingDisabled policy and one origin request policy for the per-visitor routes, no error kept
for the error caching minimum TTL. The origin is the API's stage over HTTPS, with the origin
lock's header (core.edge.ORIGIN_HEADER) on every request.

Without a domain the distribution answers on its own cloudfront.net name (CloudFront's default
certificate); with one, on the domain, with the room's ACM certificate from us-east-1 and
TLS 1.2 at least. The per-address WAF (stacks/edge_waf.py) is attached when the room has one.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration, Fn
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from constructs import Construct

from beekeeper.core.edge import (
    ALL_METHODS,
    CACHED_ERROR_STATUSES,
    CORS_METHODS,
    EDGE_ENCODINGS,
    ERROR_CACHING_SECONDS,
    GET_METHODS,
    ORIGIN_HEADER,
    Behavior,
    CacheKey,
    behaviors,
)
from beekeeper.core.settings import RoomSettings

_ALLOWED = {
    GET_METHODS: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
    CORS_METHODS: cloudfront.AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
    ALL_METHODS: cloudfront.AllowedMethods.ALLOW_ALL,
}


def origin_secret() -> str:
    """The origin lock's value: the stack's own UUID (the last part of its ID). Random, fixed
    for the stack's life (a redeploy never changes it, so the edge and the lock can not fall
    out of step while CloudFront propagates a change), and known only inside the account."""
    return Fn.select(2, Fn.split("/", Aws.STACK_ID))


class RoomEdge(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: RoomSettings,
        api: apigw.RestApi,
        secret: str,
        web_acl_arn: str | None,
        certificate_arn: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        origin = origins.RestApiOrigin(
            api,
            custom_headers={ORIGIN_HEADER: secret},
        )
        visitor_requests = cloudfront.OriginRequestPolicy(
            self,
            "VisitorRequests",
            comment=f"{settings.stack_name}: the visitor's cookie, query and the headers read",
            cookie_behavior=cloudfront.OriginRequestCookieBehavior.allow_list(
                *_first(behaviors(settings.mode), "cookies")
            ),
            query_string_behavior=cloudfront.OriginRequestQueryStringBehavior.all(),
            header_behavior=cloudfront.OriginRequestHeaderBehavior.allow_list(
                *_first(behaviors(settings.mode), "headers")
            ),
        )
        cache_policies: dict[tuple[int, CacheKey], cloudfront.ICachePolicy] = {}
        additional: dict[str, cloudfront.BehaviorOptions] = {}
        for behavior in behaviors(settings.mode):
            policy_of = (behavior.cache_seconds, behavior.key)
            if behavior.cached and policy_of not in cache_policies:
                cache_policies[policy_of] = self._cache_policy(behavior)
            additional[behavior.pattern] = cloudfront.BehaviorOptions(
                origin=origin,
                allowed_methods=_ALLOWED[behavior.methods],
                cached_methods=cloudfront.CachedMethods.CACHE_GET_HEAD,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                compress=True,
                cache_policy=(
                    cache_policies[(behavior.cache_seconds, behavior.key)]
                    if behavior.cached
                    else cloudfront.CachePolicy.CACHING_DISABLED
                ),
                origin_request_policy=(
                    visitor_requests if behavior.cookies or behavior.query else None
                ),
            )
        domain = settings.domain
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"Beekeeper waiting room {settings.name}",
            # Any other path: API Gateway's own "missing route" answer, never cached.
            default_behavior=cloudfront.BehaviorOptions(
                origin=origin,
                allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
            ),
            additional_behaviors=additional,
            error_responses=[
                cloudfront.ErrorResponse(
                    http_status=status, ttl=Duration.seconds(ERROR_CACHING_SECONDS)
                )
                for status in CACHED_ERROR_STATUSES
            ],
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            domain_names=[domain] if domain else None,
            certificate=(
                acm.Certificate.from_certificate_arn(self, "Certificate", certificate_arn)
                if domain and certificate_arn
                else None
            ),
            minimum_protocol_version=(
                cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021 if domain else None
            ),
            web_acl_id=web_acl_arn,
        )
        self.host = domain or self.distribution.distribution_domain_name

    def _cache_policy(self, behavior: Behavior) -> cloudfront.CachePolicy:
        """Keep an answer as long as its Cache-Control says, at most `cache_seconds`, under the
        behavior's key (nothing of the request when the answer is the same for everyone);
        compressed copies kept."""
        seconds, key = behavior.cache_seconds, behavior.key
        return cloudfront.CachePolicy(
            self,
            f"Cache{seconds}s" if key.empty else f"Cache{seconds}sByVisitor",
            comment=f"{self.settings.stack_name}: the room's Cache-Control, at most {seconds} s",
            min_ttl=Duration.seconds(0),
            default_ttl=Duration.seconds(0),
            max_ttl=Duration.seconds(seconds),
            cookie_behavior=(
                cloudfront.CacheCookieBehavior.allow_list(*key.cookies)
                if key.cookies
                else cloudfront.CacheCookieBehavior.none()
            ),
            header_behavior=(
                cloudfront.CacheHeaderBehavior.allow_list(*key.headers)
                if key.headers
                else cloudfront.CacheHeaderBehavior.none()
            ),
            query_string_behavior=(
                cloudfront.CacheQueryStringBehavior.allow_list(*key.query)
                if key.query
                else cloudfront.CacheQueryStringBehavior.none()
            ),
            enable_accept_encoding_gzip=behavior.compressed and "gzip" in EDGE_ENCODINGS,
            enable_accept_encoding_brotli=behavior.compressed and "br" in EDGE_ENCODINGS,
        )

    def url_for(self, path: str) -> str:
        return f"https://{self.host}{path}"


def _first(found: tuple[Behavior, ...], field: str) -> tuple[str, ...]:
    """What every per-visitor behavior forwards (they share one origin request policy)."""
    values = {getattr(behavior, field) for behavior in found if behavior.cookies}
    if len(values) != 1:
        raise ValueError(f"the per-visitor behaviors must forward the same {field}")
    return next(iter(values))
