"""Every AWS failure a user can meet becomes one sentence with exit code 3."""

from __future__ import annotations

import botocore.exceptions
import pytest

from beekeeper.cli.aws import explain_aws_failure
from beekeeper.cli.errors import EXIT_AWS_ERROR


def client_error(code: str, message: str, operation: str = "UpdateItem") -> Exception:
    return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": message}}, operation)


@pytest.mark.parametrize(
    ("error", "sentence"),
    [
        (botocore.exceptions.NoCredentialsError(), "No AWS credentials were found; run `aws"),
        (botocore.exceptions.NoRegionError(), "No AWS region is set; give the room a region"),
        (
            botocore.exceptions.ProfileNotFound(profile="shop"),
            "The config profile (shop) could not be found; set AWS_PROFILE",
        ),
        (
            botocore.exceptions.PartialCredentialsError(provider="env", cred_var="secret"),
            "The AWS credentials are incomplete",
        ),
        (
            botocore.exceptions.EndpointConnectionError(endpoint_url="https://sts.example"),
            "Could not reach https://sts.example; check the network",
        ),
        (
            client_error("ExpiredToken", "The security token included in the request is expired",
                         "GetCallerIdentity"),
            "AWS refused GetCallerIdentity: The security token included in the request is "
            "expired (ExpiredToken); your session expired; refresh your credentials",
        ),
        (
            client_error("AccessDeniedException", "User x is not authorized"),
            "AWS refused UpdateItem: User x is not authorized (AccessDeniedException); "
            "the credentials in use are not allowed to do this",
        ),
        (
            client_error("SomethingNew", "A new kind of failure."),
            "AWS refused UpdateItem: A new kind of failure (SomethingNew); check the message, "
            "fix the cause and run again.",
        ),
    ],
)  # fmt: skip
def test_aws_failures_become_sentences(error: Exception, sentence: str) -> None:
    explained = explain_aws_failure(error)
    assert explained is not None
    assert explained.exit_code == EXIT_AWS_ERROR
    assert sentence in explained.message


def test_other_exceptions_are_left_alone() -> None:
    assert explain_aws_failure(ValueError("a bug")) is None
