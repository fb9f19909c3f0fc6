"""A redeploy after editing the room file never replaces the table or the queues: the line holds.

CloudFormation replaces a resource when its logical id changes or when a property that can not
be updated in place changes. The room is synthesized twice, from two room files that differ in
every setting a room file has (stack_testkit.CHANGED_ROOM); the table's and the queues' logical
ids, and every property whose change means replacement, must be the same in both.

Which properties mean replacement: the resource schemas CloudFormation publishes (their
`createOnlyProperties`, as cfn-lint ships them), and the properties the CloudFormation User
Guide marks "Update requires: Replacement" for AWS::DynamoDB::Table (KeySchema,
LocalSecondaryIndexes, TableName) and AWS::SQS::Queue (FifoQueue, QueueName).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.stack_testkit import Synthesized

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow

# From the CloudFormation User Guide's property reference ("Update requires: Replacement").
DOCUMENTED_REPLACEMENT = {
    "AWS::DynamoDB::Table": {"KeySchema", "LocalSecondaryIndexes", "TableName"},
    "AWS::SQS::Queue": {"FifoQueue", "QueueName"},
}


def replacing_properties(resource_type: str, region: str) -> set[str]:
    # Imported here: cfn-lint brings sympy and networkx, a second of every pytest worker's
    # collection (and of compiling them) that only this test needs.
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(region, resource_type).schema
    create_only = {
        path.removeprefix("/properties/").split("/")[0]
        for path in schema.get("createOnlyProperties", [])
    }
    return create_only | DOCUMENTED_REPLACEMENT[resource_type]


def line_holders(synthesized: Synthesized) -> dict[str, dict[str, Any]]:
    """The table and both queues, by logical id."""
    return {
        **synthesized.resources("AWS::DynamoDB::Table"),
        **synthesized.resources("AWS::SQS::Queue"),
    }


def test_the_two_room_files_really_differ(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    before, after = synthesized.settings.to_mapping(), synthesized_changed.settings.to_mapping()
    assert before["name"] == after["name"]
    unchanged = {key for key in before if before[key] == after[key]}
    assert unchanged == {"name", "region", "custom_template"}  # every other setting changes


def test_the_table_and_queues_keep_their_logical_ids(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    before, after = line_holders(synthesized), line_holders(synthesized_changed)
    assert len(before) == 3
    assert set(before) == set(after)


@pytest.mark.parametrize("resource_type", sorted(DOCUMENTED_REPLACEMENT))
def test_no_property_that_means_replacement_changes(
    synthesized: Synthesized, synthesized_changed: Synthesized, resource_type: str
) -> None:
    replacing = replacing_properties(resource_type, synthesized.settings.region)
    assert "TableName" in replacing or "QueueName" in replacing  # the schema was read
    before = synthesized.resources(resource_type)
    after = synthesized_changed.resources(resource_type)
    for logical_id, resource in before.items():
        old, new = resource["Properties"], after[logical_id]["Properties"]
        for name in sorted(replacing):
            assert old.get(name) == new.get(name), f"{logical_id}.{name} would be replaced"
        # Nor is it deleted and recreated by a policy change.
        for policy in ("DeletionPolicy", "UpdateReplacePolicy"):
            assert resource.get(policy) == after[logical_id].get(policy)
