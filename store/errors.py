"""A refusal by the store, carrying what the AWS service would answer."""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """An AWS error answer: its code, sentence, HTTP status and any extra fields.

    `query_code` is SQS's older error code (its query protocol's), which botocore reports in
    place of the JSON protocol's type when the answer names it.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        extra: dict[str, Any] | None = None,
        query_code: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.extra = extra or {}
        self.query_code = query_code


def validation(message: str) -> ServiceError:
    return ServiceError("ValidationException", message)
