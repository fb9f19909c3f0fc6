"""The stack names its resources, environment and outputs from core/names.py, as local mode does.

Local mode's side of each pair is held to the same owner in
tests/integration/test_local_room_wiring.py.
"""

from __future__ import annotations

import pytest

from beekeeper.core import names
from beekeeper.core.settings import ENVIRONMENT_VARIABLE
from tests.support.stack_testkit import Synthesized

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def test_table_queues_and_functions_are_named_by_the_owner(synthesized: Synthesized) -> None:
    expected = names.ResourceNames("test-room")
    _, table = synthesized.only("AWS::DynamoDB::Table")
    assert table["Properties"]["TableName"] == expected.table == "beekeeper-test-room"
    queues = {
        q["Properties"]["QueueName"] for q in synthesized.resources("AWS::SQS::Queue").values()
    }
    assert queues == {expected.queue, expected.dead_letter_queue}
    functions = {
        f["Properties"]["FunctionName"]
        for f in synthesized.resources("AWS::Lambda::Function").values()
        if "FunctionName" in f["Properties"]
    }
    assert {expected.function(role) for role in names.FUNCTION_ROLES} <= functions
    assert synthesized.settings.stack_name == expected.stack


def test_functions_read_the_environment_the_owner_names(synthesized: Synthesized) -> None:
    for role in names.FUNCTION_ROLES:
        _, function = synthesized.function(role)
        variables = set(function["Properties"]["Environment"]["Variables"])
        wanted = {ENVIRONMENT_VARIABLE, names.TABLE_NAME_VARIABLE}
        if role != "governor":
            wanted.add(names.QUEUE_URL_VARIABLE)
        if role in ("trigger", "producer"):  # both start consumers
            wanted.add(names.CONSUMER_FUNCTION_VARIABLE)
        if role == "consumer":  # signs tickets
            wanted.add(names.TICKET_KEYS_SECRET_VARIABLE)
        if role == "producer":  # signs challenges and token ids, checks a leave's page
            wanted |= {names.JOIN_SECRET_VARIABLE, names.ROOM_ORIGIN_VARIABLE}
        else:  # writes the room's state, and publishes its changes
            wanted.add(names.CHANNEL_HTTP_DOMAIN_VARIABLE)
        assert variables == wanted, role


def test_outputs_are_the_owners_keys(synthesized: Synthesized) -> None:
    assert set(synthesized.raw["Outputs"]) == set(names.STACK_OUTPUTS)
