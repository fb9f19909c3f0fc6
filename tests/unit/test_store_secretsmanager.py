"""The store's Secrets Manager where the differential test can not hold it (moto accepts what
Secrets Manager refuses), its recovery window in time, its version limit, saving it, and that a
secret's value reaches no error sentence and no log line."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from beekeeper.store.client import StoreClient
from beekeeper.store.dynamodb import DynamoDb
from beekeeper.store.secretsmanager import DAY_SECONDS, MAX_VERSIONS, SecretsManager
from beekeeper.store.sqs import Sqs
from beekeeper.store.timing import Guard, RealTime
from beekeeper.store.wire import SECRETS_MANAGER_TARGET_PREFIX, JsonProtocol
from tests.support.refusals import refusal

NAME = "room-ticket-keys"
PRIVATE = '{"keys": [{"d": "private-scalar-never-shown"}]}'


class Clock:
    """Real guards, a time the test sets."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now_value = now

    def now(self) -> float:
        return self.now_value

    def guard(self) -> Guard:
        return RealTime().guard()


def service(clock: Clock | None = None) -> tuple[SecretsManager, StoreClient]:
    secrets = SecretsManager(clock or Clock(), suffix=lambda: "AbC123")
    return secrets, StoreClient(secrets)


def test_what_secrets_manager_refuses_is_refused() -> None:
    _, client = service()
    both = {"SecretString": "x", "SecretBinary": "AA=="}
    assert refusal(client.create_secret, Name=NAME, **both)[0] == "InvalidParameterException"
    assert refusal(client.create_secret, Name="a name!")[0] == "InvalidParameterException"
    assert refusal(client.create_secret, Name="")[0] == "InvalidParameterException"
    client.create_secret(Name=NAME, SecretString="{}")
    assert refusal(client.put_secret_value, SecretId=NAME, **both)[0] == (
        "InvalidParameterException"
    )
    client.delete_secret(SecretId=NAME, RecoveryWindowInDays=7)
    # While a deleted secret can still be restored, it takes no new value and its name no new
    # secret (Secrets Manager's documented InvalidRequestException).
    code, _ = refusal(client.put_secret_value, SecretId=NAME, SecretString="{}")
    assert code == "InvalidRequestException"
    code, message = refusal(client.create_secret, Name=NAME, SecretString="{}")
    assert code == "InvalidRequestException" and "scheduled for deletion" in message


def test_a_deleted_secret_is_gone_when_its_recovery_window_ends() -> None:
    clock = Clock()
    secrets, client = service(clock)
    client.create_secret(Name=NAME, SecretString="{}")
    deleted = client.delete_secret(SecretId=NAME, RecoveryWindowInDays=7)
    assert deleted["DeletionDate"] == clock.now_value + 7 * DAY_SECONDS
    clock.now_value += 7 * DAY_SECONDS - 1
    assert refusal(client.get_secret_value, SecretId=NAME)[0] == "InvalidRequestException"
    clock.now_value += 1
    assert refusal(client.get_secret_value, SecretId=NAME)[0] == "ResourceNotFoundException"
    assert NAME not in secrets.secrets
    assert client.create_secret(Name=NAME, SecretString="again")["Name"] == NAME


def test_labelled_versions_stay_and_the_oldest_unlabelled_go_beyond_the_limit() -> None:
    secrets, client = service()
    client.create_secret(Name=NAME, SecretString="v0")
    for n in range(1, MAX_VERSIONS + 5):
        client.put_secret_value(SecretId=NAME, SecretString=f"v{n}")
    versions = secrets.secrets[NAME].versions
    assert len(versions) == MAX_VERSIONS
    assert versions[0].value == {"SecretString": "v5"}
    last = MAX_VERSIONS + 4
    assert client.get_secret_value(SecretId=NAME)["SecretString"] == f"v{last}"
    previous = client.get_secret_value(SecretId=NAME, VersionStage="AWSPREVIOUS")
    assert previous["SecretString"] == f"v{last - 1}"


def test_a_saved_secret_comes_back_into_the_secret_of_its_name() -> None:
    first, client = service()
    client.create_secret(Name=NAME, SecretString="{}")
    client.put_secret_value(SecretId=NAME, SecretString=PRIVATE, ClientRequestToken="9" * 32)
    saved = json.loads(json.dumps(first.snapshot()))  # as the journal keeps it

    again = SecretsManager(Clock(), suffix=lambda: "XyZ789")
    again.create(NAME, "{}")
    again.load(NAME, saved[NAME])
    answer = StoreClient(again).get_secret_value(SecretId=again.secrets[NAME].arn)
    assert (answer["SecretString"], answer["VersionId"]) == (PRIVATE, "9" * 32)
    assert answer["ARN"].endswith(f":secret:{NAME}-XyZ789")
    previous = StoreClient(again).get_secret_value(SecretId=NAME, VersionStage="AWSPREVIOUS")
    assert previous["SecretString"] == "{}"


def test_every_change_is_told_to_the_observers() -> None:
    secrets, client = service()
    told: list[tuple[str, dict[str, Any] | None]] = []
    secrets.observers.append(lambda name, saved: told.append((name, saved)))
    client.create_secret(Name=NAME, SecretString="{}")
    client.put_secret_value(SecretId=NAME, SecretString=PRIVATE)
    client.get_secret_value(SecretId=NAME)
    client.delete_secret(SecretId=NAME, ForceDeleteWithoutRecovery=True)
    assert [name for name, _ in told] == [NAME] * 3
    assert told[1][1] is not None and told[1][1]["versions"][-1]["value"] == {
        "SecretString": PRIVATE
    }
    assert told[2][1] is None


def test_a_secrets_value_reaches_no_error_and_no_log(caplog: pytest.LogCaptureFixture) -> None:
    secrets = SecretsManager(Clock())
    timing = RealTime()
    protocol = JsonProtocol(DynamoDb(timing), Sqs(timing), secrets)
    client = StoreClient(secrets)
    client.create_secret(Name=NAME, SecretString=PRIVATE, ClientRequestToken="5" * 32)
    caplog.set_level(logging.DEBUG)
    # The same version id with another value: refused without saying either value.
    code, message = refusal(
        client.put_secret_value,
        SecretId=NAME,
        SecretString="another-private-value",
        ClientRequestToken="5" * 32,
    )
    assert code == "ResourceExistsException"
    # A request this store does not model is refused loudly, naming the field, not the value.
    status, _, raw = protocol.answer(
        SECRETS_MANAGER_TARGET_PREFIX + "PutSecretValue",
        json.dumps({"SecretId": NAME, "SecretString": PRIVATE, "RotationToken": "r"}).encode(),
    )
    assert status == 500 and "RotationToken" in caplog.text
    for text in (message, caplog.text, raw.decode()):
        assert "private-scalar-never-shown" not in text
        assert "another-private-value" not in text
