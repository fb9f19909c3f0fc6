"""Test-wide safety: nothing a test runs may reach AWS or any other host.

Fake credentials and a region are set before any boto3 client is made; the instance metadata
service is switched off; jsii and the CDK CLI are kept quiet and offline.
"""

from __future__ import annotations

import gc
import os

import pytest

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


def _share_botocore_service_models() -> None:
    """Every boto3 session a test makes reads its service models through one loader.

    moto starts each mock with a new default session, and a new session parses the service
    models' JSON again (50-150 ms for DynamoDB's on this machine, several times a test); the
    files are the same for the whole run. Only the tests load them this way: a real client
    keeps botocore's own loading.
    """
    import botocore.loaders
    import botocore.session

    create_loader = botocore.loaders.create_loader
    loaders: dict[str | None, botocore.loaders.Loader] = {}

    def shared_loader(search_path_string: str | None = None) -> botocore.loaders.Loader:
        if search_path_string not in loaders:
            loaders[search_path_string] = create_loader(search_path_string)
        return loaders[search_path_string]

    botocore.session.create_loader = shared_loader  # type: ignore[assignment]


_share_botocore_service_models()

# The garbage collector, in a test process, passes over its youngest objects once per this many
# allocations rather than Python's 700: a worker holds the AWS CDK's, boto3's and moto's
# modules, tests allocate freely and make few cycles, and at the default the collector took
# a sixth of the unit and functional tests' CPU (bench/README.md, "bash .ci/run").
_GC_YOUNG_THRESHOLD = 100_000
gc.set_threshold(_GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection imported (every module the tests use) lives until the process ends:
    moved out of the collector's generations, no collection walks it again."""
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a parallel run's workers (scripts/check: pytest-xdist, a file per worker at a time),
    the files marked with the minutes they take come first, the longest first, then the other
    tests marked slow, each group still in pytest-randomly's order: the long files start while
    there is other work for the other workers, rather than last, when one worker would run
    them alone (a run once ended with 50 s of one worker's browser tests). Every worker sorts
    the same collection alike."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: (-_minutes(item), item.get_closest_marker("slow") is None))


def _minutes(item: pytest.Item) -> float:
    marker = item.get_closest_marker("minutes")
    return float(marker.args[0]) if marker else 0.0
