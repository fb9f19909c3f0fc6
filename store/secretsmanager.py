"""In-memory Secrets Manager: the two calls the room makes on its ticket keys' secret, answered
as Secrets Manager answers them.

Local mode keeps the room's ticket keys here, as the stack keeps them in a Secrets Manager
secret: `beekeeper local` creates the secret (`create`, as the stack creates it: not a call the
room makes), the consumers read it (GetSecretValue) and `beekeeper keys` reads and writes it
(GetSecretValue, PutSecretValue), by the secret's ARN or its name. Requests and answers are
Secrets Manager's JSON protocol (boto3's arguments); refusals are `ServiceError`s with its
codes.

What those calls see is modelled: a string value, the new value becoming AWSCURRENT and the
one before AWSPREVIOUS, the version id from the ClientRequestToken botocore sends with every
PutSecretValue (the same token and value again is the same version: a retried call writes
nothing twice; the same token with another value is refused). What no caller asks for is
not: other calls, binary values, reading a version by id or stage, versions without a
staging label (only a read by id could see them), deletion, encryption keys, tags, policies,
replication, rotation; a request that asks for one fails loudly (NotImplementedError: a 500
that names the field).

A secret's value is never put in a log line or an error message.
"""

from __future__ import annotations

import secrets
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from beekeeper.store.api import Action, Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.errors import ServiceError
from beekeeper.store.timing import Timing

CURRENT = "AWSCURRENT"
PREVIOUS = "AWSPREVIOUS"
_SUFFIX_ALPHABET = string.ascii_letters + string.digits

# (secret name, the secret as saved (Secret.saved))
SecretObserver = Callable[[str, dict[str, Any]], None]


@dataclass
class Version:
    id: str
    value: str  # the SecretString
    created: float


@dataclass
class Secret:
    name: str
    arn: str
    created: float
    current: Version
    previous: Version | None = None

    def saved(self) -> dict[str, Any]:
        """The secret as JSON, for saving the store (local/saved_state.py): its versions with
        their staging labels, the shape local mode has always saved."""
        versions = [(self.previous, PREVIOUS), (self.current, CURRENT)]
        return {
            "name": self.name,
            "arn": self.arn,
            "created": self.created,
            "versions": [
                {
                    "id": v.id,
                    "value": {"SecretString": v.value},
                    "stages": [stage],
                    "created": v.created,
                }
                for v, stage in versions
                if v is not None
            ],
        }


def random_suffix() -> str:
    """The six characters Secrets Manager appends to a secret's name in its ARN."""
    return "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(6))


def _not_found() -> ServiceError:
    return ServiceError(
        "ResourceNotFoundException", "Secrets Manager can't find the specified secret."
    )


class SecretsManager(Api):
    def __init__(
        self,
        timing: Timing,
        *,
        region: str = "us-east-1",
        account: str = "000000000000",
        suffix: Callable[[], str] | None = None,
        disturbance: Disturbance = CALM,
    ) -> None:
        super().__init__(disturbance, "InvalidAction")
        self._timing = timing
        self._guard = timing.guard()
        self._arn_prefix = f"arn:aws:secretsmanager:{region}:{account}:secret:"
        self._suffix = suffix or random_suffix
        self.secrets: dict[str, Secret] = {}  # by name
        self.observers: list[SecretObserver] = []
        self._actions = {
            "GetSecretValue": self._get_secret_value,
            "PutSecretValue": self._put_secret_value,
        }

    def _run(self, answer: Action, request: dict[str, Any]) -> dict[str, Any]:
        with self._guard:
            return answer(request)

    def create(self, name: str, value: str) -> Secret:
        """A secret with a first string value, as the stack creates the room's."""
        with self._guard:
            now = self._timing.now()
            secret = Secret(
                name,
                f"{self._arn_prefix}{name}-{self._suffix()}",
                now,
                Version(str(uuid.uuid4()), value, now),
            )
            self.secrets[name] = secret
            self._changed(secret)
            return secret

    # -- the API --------------------------------------------------------------------------

    def _get_secret_value(self, request: dict[str, Any]) -> dict[str, Any]:
        _only("GetSecretValue", request, {"SecretId"})
        secret = self._find(request.get("SecretId"))
        return {
            "ARN": secret.arn,
            "Name": secret.name,
            "VersionId": secret.current.id,
            "SecretString": secret.current.value,
            "VersionStages": [CURRENT],
            "CreatedDate": secret.current.created,
        }

    def _put_secret_value(self, request: dict[str, Any]) -> dict[str, Any]:
        _only("PutSecretValue", request, {"SecretId", "ClientRequestToken", "SecretString"})
        secret = self._find(request.get("SecretId"))
        value = request.get("SecretString")
        if value is None:
            raise ServiceError(
                "InvalidRequestException", "You must provide either SecretString or SecretBinary."
            )
        if not isinstance(value, str):
            raise ServiceError("InvalidParameterException", "SecretString must be text")
        version_id = _version_id(request)
        same = next(
            (v for v in (secret.current, secret.previous) if v is not None and v.id == version_id),
            None,
        )
        if same is not None:  # the token again: that version, unless the value is another
            if same.value != value:  # never say what either value is
                raise ServiceError(
                    "ResourceExistsException",
                    f"You can't use ClientRequestToken {version_id} because that value is "
                    f"already in use for a version of secret {secret.arn}.",
                )
            stages = [CURRENT] if same is secret.current else [PREVIOUS]
            return {
                "ARN": secret.arn,
                "Name": secret.name,
                "VersionId": same.id,
                "VersionStages": stages,
            }
        secret.previous = secret.current
        secret.current = Version(version_id, value, self._timing.now())
        self._changed(secret)
        return {
            "ARN": secret.arn,
            "Name": secret.name,
            "VersionId": secret.current.id,
            "VersionStages": [CURRENT],
        }

    # -- secrets --------------------------------------------------------------------------

    def _find(self, secret_id: object) -> Secret:
        """The secret a SecretId names: its name or its ARN."""
        if not isinstance(secret_id, str) or not secret_id:
            raise ServiceError(
                "InvalidParameterException", "SecretId must name a secret: its name or its ARN"
            )
        if secret_id.startswith(self._arn_prefix):
            found = next((s for s in self.secrets.values() if s.arn == secret_id), None)
        else:
            found = self.secrets.get(secret_id)
        if found is None:
            raise _not_found()
        return found

    def _changed(self, secret: Secret) -> None:
        for observer in self.observers:
            observer(secret.name, secret.saved())

    # -- saving the store -----------------------------------------------------------------

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every secret as saved, for saving the store."""
        with self._guard:
            return {name: secret.saved() for name, secret in self.secrets.items()}

    def load(self, name: str, saved: dict[str, Any]) -> None:
        """Put a saved secret's AWSCURRENT and AWSPREVIOUS values back into the secret of that
        name, which keeps its ARN (no observers: they are already saved). A secret saved with
        more versions (as local mode saved it before) gives the same two."""
        with self._guard:
            secret = self.secrets[name]
            for version in saved["versions"]:
                value = dict(version["value"]).get("SecretString")
                if value is None:
                    continue
                loaded = Version(str(version["id"]), str(value), float(version["created"]))
                stages = [str(s) for s in version["stages"]]
                if CURRENT in stages:
                    secret.current = loaded
                elif PREVIOUS in stages:
                    secret.previous = loaded


def _only(action: str, request: dict[str, Any], allowed: set[str]) -> None:
    """Refuse loudly what this store does not model (field names only: never a value)."""
    unsupported = sorted(set(request) - allowed)
    if unsupported:
        raise NotImplementedError(f"{action} with {', '.join(unsupported)}")


def _version_id(request: dict[str, Any]) -> str:
    """The new version's id: the request's ClientRequestToken (botocore always sends one)."""
    token = request.get("ClientRequestToken")
    if token is None:
        return str(uuid.uuid4())
    if not isinstance(token, str) or not 32 <= len(token) <= 64:
        raise ServiceError(
            "InvalidParameterException", "ClientRequestToken must be 32 to 64 characters"
        )
    return token
