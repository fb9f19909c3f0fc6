"""The store's Secrets Manager beyond what moto is asked: its two versions by staging label,
a retried write, saving it (the shape local mode has always saved included), what it does not
model failing loudly, and that a secret's value reaches no error sentence and no log line."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.secretsmanager import SecretsManager
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import RealTime
from beekeeper.store.wire import SECRETS_MANAGER_TARGET_PREFIX, JsonProtocol
from tests.support.refusals import refusal

NAME = "room-ticket-keys"
PRIVATE = '{"keys": [{"d": "private-scalar-never-shown"}]}'


def service() -> tuple[SecretsManager, StoreClient]:
    secrets = SecretsManager(RealTime(), suffix=lambda: "AbC123")
    return secrets, StoreClient(secrets)


def test_a_new_value_is_current_and_the_one_before_previous() -> None:
    secrets, client = service()
    secret = secrets.create(NAME, "v0")
    for value in ("v1", "v2"):
        client.put_secret_value(SecretId=secret.arn, SecretString=value)
    assert client.get_secret_value(SecretId=NAME)["SecretString"] == "v2"
    versions = secrets.snapshot()[NAME]["versions"]
    assert [(v["value"]["SecretString"], v["stages"]) for v in versions] == [
        ("v1", ["AWSPREVIOUS"]),
        ("v2", ["AWSCURRENT"]),
    ]


def test_a_retried_write_is_the_same_version() -> None:
    """botocore sends a ClientRequestToken with every PutSecretValue and the same one again
    when it retries: the retry writes nothing."""
    secrets, client = service()
    secrets.create(NAME, "v0")
    told: list[str] = []
    secrets.observers.append(lambda name, _saved: told.append(name))
    answers = [
        client.put_secret_value(SecretId=NAME, SecretString="v1", ClientRequestToken="9" * 32)
        for _ in range(2)
    ]
    assert answers[0] == answers[1]
    assert answers[0]["VersionId"] == "9" * 32
    assert told == [NAME]
    previous = secrets.snapshot()[NAME]["versions"][0]
    assert (previous["value"], previous["stages"]) == ({"SecretString": "v0"}, ["AWSPREVIOUS"])


def test_a_saved_secret_comes_back_into_the_secret_of_its_name() -> None:
    first, client = service()
    first.create(NAME, "{}")
    client.put_secret_value(SecretId=NAME, SecretString=PRIVATE, ClientRequestToken="9" * 32)
    saved = json.loads(json.dumps(first.snapshot()))  # as the journal keeps it

    again = SecretsManager(RealTime(), suffix=lambda: "XyZ789")
    again.create(NAME, "{}")
    again.load(NAME, saved[NAME])
    answer = StoreClient(again).get_secret_value(SecretId=again.secrets[NAME].arn)
    assert (answer["SecretString"], answer["VersionId"]) == (PRIVATE, "9" * 32)
    assert answer["ARN"].endswith(f":secret:{NAME}-XyZ789")
    assert again.snapshot()[NAME]["versions"] == saved[NAME]["versions"]


def test_a_secret_saved_in_the_older_longer_shape_loads_its_two_labelled_versions() -> None:
    """Local mode used to save every version, unlabelled ones included, with a description
    and a deletion date: such a line still loads."""
    older = {
        "name": NAME,
        "arn": "arn:aws:secretsmanager:us-east-1:000000000000:secret:room-ticket-keys-Old123",
        "created": 1.0,
        "description": None,
        "deletion": None,
        "versions": [
            {"id": "a" * 32, "value": {"SecretString": "v0"}, "stages": [], "created": 1.0},
            {
                "id": "b" * 32,
                "value": {"SecretString": "v1"},
                "stages": ["AWSPREVIOUS"],
                "created": 2.0,
            },
            {
                "id": "c" * 32,
                "value": {"SecretString": "v2"},
                "stages": ["AWSCURRENT"],
                "created": 3.0,
            },
        ],
    }
    secrets, client = service()
    secrets.create(NAME, "{}")
    secrets.load(NAME, older)
    assert client.get_secret_value(SecretId=NAME)["VersionId"] == "c" * 32
    assert [v["id"] for v in secrets.snapshot()[NAME]["versions"]] == ["b" * 32, "c" * 32]


def test_refusals() -> None:
    secrets, client = service()
    secrets.create(NAME, "{}")
    assert refusal(client.get_secret_value, SecretId="nobody")[0] == "ResourceNotFoundException"
    assert refusal(client.get_secret_value, SecretId="")[0] == "InvalidParameterException"
    assert refusal(client.put_secret_value, SecretId=NAME)[0] == "InvalidRequestException"
    code, _ = refusal(
        client.put_secret_value, SecretId=NAME, SecretString="x", ClientRequestToken="short"
    )
    assert code == "InvalidParameterException"


def test_a_token_again_with_another_value_is_refused_without_either_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets, client = service()
    secrets.create(NAME, "{}")
    client.put_secret_value(SecretId=NAME, SecretString=PRIVATE, ClientRequestToken="5" * 32)
    caplog.set_level(logging.DEBUG)
    code, message = refusal(
        client.put_secret_value,
        SecretId=NAME,
        SecretString="another-private-value",
        ClientRequestToken="5" * 32,
    )
    assert code == "ResourceExistsException"
    assert client.get_secret_value(SecretId=NAME)["SecretString"] == PRIVATE
    for text in (message, caplog.text):
        assert "private-scalar-never-shown" not in text
        assert "another-private-value" not in text


@pytest.mark.parametrize(
    ("action", "request_fields", "named"),
    [
        ("GetSecretValue", {"VersionStage": "AWSPREVIOUS"}, "VersionStage"),
        ("GetSecretValue", {"VersionId": "9" * 32}, "VersionId"),
        ("PutSecretValue", {"SecretString": PRIVATE, "VersionStages": ["X"]}, "VersionStages"),
        ("PutSecretValue", {"SecretBinary": "AA=="}, "SecretBinary"),
        ("CreateSecret", {"Name": "other"}, None),
        ("DeleteSecret", {}, None),
    ],
)
def test_what_no_caller_asks_for_fails_loudly_without_the_value(
    action: str,
    request_fields: dict[str, Any],
    named: str | None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = SecretsManager(RealTime())
    secrets.create(NAME, PRIVATE)
    timing = RealTime()
    protocol = JsonProtocol(DynamoDb(timing), Sqs(timing), secrets)
    caplog.set_level(logging.DEBUG)
    status, _, raw = protocol.answer(
        SECRETS_MANAGER_TARGET_PREFIX + action,
        json.dumps({"SecretId": NAME, **request_fields}).encode(),
    )
    if named is not None:  # a field this store does not model: a 500 that names it
        assert status == 500 and named in raw.decode()
    else:  # a call it does not answer: Secrets Manager's unknown action
        assert (status, json.loads(raw)["__type"]) == (400, "InvalidAction")
    for text in (caplog.text, raw.decode()):
        assert "private-scalar-never-shown" not in text
