"""What every handler needs from its container: settings, resource names and AWS clients.

Clients are created lazily, once per container, on the first invocation: importing a handler
module never touches AWS, so tests and local mode can import it with the environment set
(AWS_ENDPOINT_URL pointing at an emulator is honoured by boto3 itself).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from beekeeper.core.settings import RoomSettings


@cache
def settings() -> RoomSettings:
    return RoomSettings.from_lambda_environment(os.environ)


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise RuntimeError(f"environment variable {name} is not set; the stack must set it")
    return value


@cache
def client(service: str) -> Any:
    import boto3  # imported here so that a cold import of a handler stays cheap

    return boto3.client(service)


def lambda_invoker(lambda_client: Any, function_name: str) -> Callable[[dict[str, Any]], None]:
    """An asynchronous invoke of `function_name` (how consumers are started)."""

    def invoke(payload: Mapping[str, Any]) -> None:
        lambda_client.invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps(payload).encode(),
        )

    return invoke


def reset_for_tests() -> None:
    """Forget cached settings and clients (tests change the environment between cases)."""
    settings.cache_clear()
    client.cache_clear()
