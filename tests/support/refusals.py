"""A refused call, as the tests compare it: the error code and sentence of its ClientError."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError


def refusal(call: Any, **request: Any) -> tuple[str, str]:
    with pytest.raises(ClientError) as caught:
        call(**request)
    error = caught.value.response["Error"]
    return error["Code"], error["Message"]
