"""The store answers the room's requests as DynamoDB Local (AWS's own DynamoDB emulator) does.

Each scenario of tests/support/store_scenarios.py runs on DynamoDB Local and on the store
through local mode's boto3 clients, on a table created from `core.datamodel.table_definition`;
the transcripts must be equal.
"""

from __future__ import annotations

import pytest

from tests.support.store_scenarios import SCENARIOS, Side, assert_same_transcripts

# DynamoDB Local is a JVM started once per session (5 to 15 s): a subprocess, so slow.
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_the_store_answers_as_dynamodb_local_does(
    local_side: Side, store_side: Side, scenario: str
) -> None:
    SCENARIOS[scenario](local_side)
    SCENARIOS[scenario](store_side)
    assert_same_transcripts(store_side, local_side, scenario)
