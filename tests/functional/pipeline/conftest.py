"""Fixtures for the pipeline's functional tests (helpers live in tests/support/pipeline.py)."""

from tests.support.pipeline import aws, clock

__all__ = ["aws", "clock"]
