"""Test-wide safety: nothing a test runs may reach AWS or any other host.

Fake credentials and a region are set before any boto3 client is made; the instance metadata
service is switched off; jsii and the CDK CLI are kept quiet and offline.
"""

from __future__ import annotations

import os

_OFFLINE_ENVIRONMENT = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    "CDK_DISABLE_CLI_TELEMETRY": "true",
}

if os.environ.get("BEEKEEPER_REAL_AWS") != "1":
    os.environ.update(_OFFLINE_ENVIRONMENT)
    os.environ.pop("AWS_PROFILE", None)
else:  # the opt-in real-AWS tests keep the caller's credentials
    for key in (
        "AWS_EC2_METADATA_DISABLED",
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION",
        "CDK_DISABLE_CLI_TELEMETRY",
    ):
        os.environ[key] = _OFFLINE_ENVIRONMENT[key]
