"""The push channel's resources (stacks/channel.py): one Event API, the `room` namespace, the
pages' key; who may publish; what the functions and the CLI are told of it; a redeploy keeps
the key and pushes its expiry out."""

from __future__ import annotations

import pytest

from beekeeper.core import names
from tests.support.stack_testkit import CHANNEL_KEY_EXPIRES, Synthesized, flatten

# Every stack test reads the synth of the whole room (tests/stack/conftest.py): slow.
pytestmark = pytest.mark.slow


def test_the_event_api_admits_pages_by_key_and_publishers_by_iam(
    synthesized: Synthesized,
) -> None:
    api_id, api = synthesized.only("AWS::AppSync::Api")
    assert api["Properties"] == {
        "Name": "beekeeper-test-room",
        "EventConfig": {
            "AuthProviders": [{"AuthType": "API_KEY"}, {"AuthType": "AWS_IAM"}],
            "ConnectionAuthModes": [{"AuthType": "API_KEY"}],
            "DefaultPublishAuthModes": [{"AuthType": "AWS_IAM"}],
            "DefaultSubscribeAuthModes": [{"AuthType": "API_KEY"}],
        },
        "Tags": [{"Key": "beekeeper:room", "Value": "test-room"}],
    }
    _, namespace = synthesized.only("AWS::AppSync::ChannelNamespace")
    # The namespace says it again: the page's key can publish nowhere.
    assert namespace["Properties"] == {
        "ApiId": {"Fn::GetAtt": [api_id, "ApiId"]},
        "Name": "room",
        "PublishAuthModes": [{"AuthType": "AWS_IAM"}],
        "SubscribeAuthModes": [{"AuthType": "API_KEY"}],
        "Tags": [{"Key": "beekeeper:room", "Value": "test-room"}],
    }
    _, key = synthesized.only("AWS::AppSync::ApiKey")
    assert key["Properties"]["ApiId"] == {"Fn::GetAtt": [api_id, "ApiId"]}
    assert key["Properties"]["Expires"] == CHANNEL_KEY_EXPIRES


def test_only_the_writers_of_the_rooms_state_may_publish_and_know_where(
    synthesized: Synthesized,
) -> None:
    api_id, _ = synthesized.only("AWS::AppSync::Api")
    namespace_id, _ = synthesized.only("AWS::AppSync::ChannelNamespace")
    namespace_arn = f"<GetAtt:{namespace_id}.ChannelNamespaceArn>"
    publishers = set()
    for statement_holder in synthesized.resources("AWS::IAM::Policy").values():
        for statement in statement_holder["Properties"]["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            actions = [actions] if isinstance(actions, str) else actions
            if any(action.startswith("appsync:") for action in actions):
                assert actions == ["appsync:EventPublish"]
                assert flatten(statement["Resource"]) == namespace_arn
                (role,) = statement_holder["Properties"]["Roles"]
                publishers.add(role["Ref"])
    by_role = {}
    for role in names.FUNCTION_ROLES:
        _, function = synthesized.function(role)
        by_role[role] = function
    expected = {
        by_role[role]["Properties"]["Role"]["Fn::GetAtt"][0]
        for role in ("trigger", "consumer", "governor")
    }
    assert publishers == expected
    for role, function in by_role.items():
        variables = function["Properties"]["Environment"]["Variables"]
        domain = variables.get(names.CHANNEL_HTTP_DOMAIN_VARIABLE)
        if role == "producer":
            assert domain is None
        else:
            assert flatten(domain) == f"<GetAtt:{api_id}.Dns.Http>"


def test_the_outputs_name_the_channel_for_the_cli(synthesized: Synthesized) -> None:
    api_id, _ = synthesized.only("AWS::AppSync::Api")
    outputs = {key: output["Value"] for key, output in synthesized.raw["Outputs"].items()}
    assert flatten(outputs[names.CHANNEL_HTTP_DOMAIN_OUTPUT]) == f"<GetAtt:{api_id}.Dns.Http>"
    assert (
        flatten(outputs[names.CHANNEL_REALTIME_DOMAIN_OUTPUT]) == f"<GetAtt:{api_id}.Dns.Realtime>"
    )
    assert flatten(outputs[names.CHANNEL_API_ARN_OUTPUT]) == f"<GetAtt:{api_id}.ApiArn>"
    assert outputs[names.CHANNEL_KEY_EXPIRES_OUTPUT] == str(CHANNEL_KEY_EXPIRES)


def test_a_redeploy_keeps_the_channel_and_its_key(
    synthesized: Synthesized, synthesized_changed: Synthesized
) -> None:
    """Open pages hold the key: a redeploy of an edited room file must update it in place
    (its Expires is updated "with no interruption", AWS::AppSync::ApiKey), never replace it."""
    for kind in ("AWS::AppSync::Api", "AWS::AppSync::ChannelNamespace", "AWS::AppSync::ApiKey"):
        before, after = synthesized.only(kind), synthesized_changed.only(kind)
        assert before[0] == after[0], kind
    _, namespace = synthesized.only("AWS::AppSync::ChannelNamespace")
    _, changed = synthesized_changed.only("AWS::AppSync::ChannelNamespace")
    assert namespace["Properties"]["Name"] == changed["Properties"]["Name"]
