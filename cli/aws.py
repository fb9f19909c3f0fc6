"""AWS clients for a room, made in one place, and AWS failures turned into sentences.

Every command gets its clients from `AwsClients`: the region comes from the room's settings and,
for a local room (`beekeeper local`), the endpoint from its deployment record, so `off`, `on`,
`rate` and `status` talk to the local emulator without knowing it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import botocore.exceptions
from botocore.config import Config

from beekeeper.cli.errors import AwsError
from beekeeper.cli.rooms import Deployment
from beekeeper.core.local_room import PLACEHOLDER_CREDENTIALS
from beekeeper.core.settings import RoomSettings

SessionFactory = Callable[[], Any]  # returns a boto3.Session (or a test double of one)

# The CLI retries throttling a few times itself rather than failing an operator's command.
_CLIENT_CONFIG = Config(retries={"max_attempts": 5, "mode": "standard"}, connect_timeout=10)
# The credential check answers within seconds: missing credentials fail before any request,
# and an unreachable STS is retried once rather than five times.
_CHECK_CONFIG = Config(
    retries={"max_attempts": 2, "mode": "standard"}, connect_timeout=5, read_timeout=10
)


class AwsClients:
    """Builds boto3 clients for one room."""

    def __init__(self, session_factory: SessionFactory) -> None:
        self._session_factory = session_factory

    def client(
        self,
        service: str,
        settings: RoomSettings,
        deployment: Deployment | None = None,
        *,
        region: str | None = None,
    ) -> Any:
        """`region`: another region than the room's (the edge's certificate and WAF live in
        us-east-1)."""
        endpoint = deployment.endpoint_url if deployment is not None else None
        session = self._session_factory()
        # A local room's emulator takes any key: the operator needs no AWS account for it, and
        # their real credentials are never used to sign requests to it.
        credentials = PLACEHOLDER_CREDENTIALS if endpoint else {}
        return session.client(
            service,
            region_name=region or settings.region,
            endpoint_url=endpoint,
            config=_CLIENT_CONFIG,
            **credentials,
        )

    def caller_account(self, settings: RoomSettings) -> str:
        """The account of the operator's credentials (STS GetCallerIdentity, which "no
        permissions are required to perform", even under an explicit deny:
        https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html): the
        first request of every command that works on a room in AWS, so
        missing, expired or invalid credentials are said at once, before anything is
        synthesized or downloaded. A failure is left to `explain_aws_failure`."""
        sts = self._session_factory().client(
            "sts", region_name=settings.region, config=_CHECK_CONFIG
        )
        return str(sts.get_caller_identity()["Account"])


_CODE_HINTS = {
    "AccessDenied": "the credentials in use are not allowed to do this; use an identity that is",
    "AccessDeniedException": "the credentials in use are not allowed to do this; "
    "use an identity that is",
    "UnrecognizedClientException": "the access key is not valid; check your AWS credentials",
    "InvalidClientTokenId": "the access key is not valid; check your AWS credentials",
    "ExpiredToken": "your session expired; refresh your credentials (e.g. `aws sso login`)",
    "ExpiredTokenException": "your session expired; refresh your credentials "
    "(e.g. `aws sso login`)",
    "ResourceNotFoundException": "the room's resources are gone; "
    "run `beekeeper deploy` again, or `beekeeper destroy` to forget the room",
    "AWS.SimpleQueueService.NonExistentQueue": "the room's queue is gone; "
    "run `beekeeper deploy` again, or `beekeeper destroy` to forget the room",
    "ThrottlingException": "AWS is throttling requests; wait a moment and run again",
    "ProvisionedThroughputExceededException": "DynamoDB is throttling requests; "
    "wait a moment and run again",
}


def explain_aws_failure(error: Exception) -> AwsError | None:
    """The sentence for an AWS failure, or None when `error` is not one."""
    if isinstance(error, botocore.exceptions.NoCredentialsError):
        return AwsError(
            "No AWS credentials were found; run `aws configure` (or `aws sso login`), "
            "or set AWS_PROFILE, then run again."
        )
    if isinstance(error, botocore.exceptions.PartialCredentialsError):
        return AwsError(f"The AWS credentials are incomplete ({error}); fix them and run again.")
    if isinstance(error, botocore.exceptions.ProfileNotFound):
        return AwsError(f"{error}; set AWS_PROFILE to a profile in ~/.aws/config.")
    if isinstance(error, botocore.exceptions.NoRegionError):
        return AwsError(
            "No AWS region is set; give the room a region (`region` in its room file) "
            "or set AWS_REGION, then run again."
        )
    if isinstance(error, botocore.exceptions.TokenRetrievalError | botocore.exceptions.SSOError):
        return AwsError(f"Could not get AWS credentials ({error}); run `aws sso login` and again.")
    if isinstance(error, botocore.exceptions.EndpointConnectionError):
        return AwsError(
            f"Could not reach {error.kwargs.get('endpoint_url', 'AWS')}; check the network "
            "(for a local room: is `beekeeper local` still running?) and run again."
        )
    if isinstance(error, botocore.exceptions.ClientError):
        details = error.response.get("Error", {})
        code = str(details.get("Code", "Unknown"))
        message = str(details.get("Message", "")).rstrip(".") or code
        hint = _CODE_HINTS.get(code, "check the message, fix the cause and run again")
        return AwsError(f"AWS refused {error.operation_name}: {message} ({code}); {hint}.")
    if isinstance(error, botocore.exceptions.BotoCoreError):
        return AwsError(f"The AWS request failed: {error}; check the network and run again.")
    return None
