"""Fixtures for the pipeline's functional tests (helpers live in pipeline_support)."""

from pipeline_support import aws, clock

__all__ = ["aws", "clock"]
