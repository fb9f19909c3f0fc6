"""Registers DynamoDB Local's session fixture (tests/support/dynamodb_local.py) for this folder."""

from tests.support.dynamodb_local import dynamodb_local

__all__ = ["dynamodb_local"]
