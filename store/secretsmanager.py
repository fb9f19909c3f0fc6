"""In-memory Secrets Manager: the calls the room makes on its ticket keys' secret, answered as
Secrets Manager answers them.

Local mode keeps the room's ticket keys here, as the stack keeps them in a Secrets Manager
secret: `beekeeper local` creates the secret and gives it its first key, the consumer reads it
(GetSecretValue), `beekeeper keys` writes it (PutSecretValue). Requests and answers are Secrets
Manager's JSON protocol (boto3's arguments); refusals are `ServiceError`s with its codes.

Supported: CreateSecret, GetSecretValue, PutSecretValue and DeleteSecret, with a secret named
by its name, its ARN or its ARN without the random suffix; versions and their staging labels
(AWSCURRENT, AWSPREVIOUS and one's own), a version's idempotent ClientRequestToken, string or
binary values, the recovery window of a deleted secret (refused while it runs, gone after it).
Not modelled: encryption keys, tags, resource policies, replication, rotation; a request that
asks for one of them fails loudly. As Secrets Manager does, at most MAX_VERSIONS versions are
kept, the oldest versions without a staging label going first.

A secret's value is never put in a log line or an error message.
"""

from __future__ import annotations

import re
import secrets
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from beekeeper.store.api import Action, Api
from beekeeper.store.disturbance import CALM, Disturbance
from beekeeper.store.errors import ServiceError
from beekeeper.store.timing import Timing

CURRENT = "AWSCURRENT"
PREVIOUS = "AWSPREVIOUS"
MAX_VERSIONS = 100
MIN_RECOVERY_DAYS, MAX_RECOVERY_DAYS, DEFAULT_RECOVERY_DAYS = 7, 30, 30
DAY_SECONDS = 86_400
_NAME = re.compile(r"^[A-Za-z0-9/_+=.@-]{1,512}$")
_SUFFIX_ALPHABET = string.ascii_letters + string.digits

# (secret name, the secret as saved (Secret.saved) or None once it is gone)
SecretObserver = Callable[[str, dict[str, Any] | None], None]


@dataclass
class Version:
    id: str
    value: dict[str, str]  # {"SecretString": text} or {"SecretBinary": base64 text}
    stages: list[str]
    created: float


@dataclass
class Secret:
    name: str
    arn: str
    created: float
    description: str | None = None
    versions: list[Version] = field(default_factory=list)  # oldest first
    deletion: float | None = None  # when a scheduled deletion takes effect

    def labelled(self, stage: str) -> Version | None:
        return next((v for v in self.versions if stage in v.stages), None)

    def saved(self) -> dict[str, Any]:
        """The secret as JSON, for saving the store (local/saved_state.py)."""
        return {
            "name": self.name,
            "arn": self.arn,
            "created": self.created,
            "description": self.description,
            "deletion": self.deletion,
            "versions": [
                {"id": v.id, "value": dict(v.value), "stages": list(v.stages), "created": v.created}
                for v in self.versions
            ],
        }


def _invalid_parameter(message: str) -> ServiceError:
    return ServiceError("InvalidParameterException", message)


def _not_found(message: str = "Secrets Manager can't find the specified secret.") -> ServiceError:
    return ServiceError("ResourceNotFoundException", message)


_MARKED_DELETED = ServiceError(
    "InvalidRequestException",
    "You can't perform this operation on the secret because it was marked for deletion.",
)


def random_suffix() -> str:
    """The six characters Secrets Manager appends to a secret's name in its ARN."""
    return "".join(secrets.choice(_SUFFIX_ALPHABET) for _ in range(6))


class SecretsManager(Api):
    def __init__(
        self,
        timing: Timing,
        *,
        region: str = "us-east-1",
        account: str = "000000000000",
        suffix: Callable[[], str] = random_suffix,
        disturbance: Disturbance = CALM,
    ) -> None:
        super().__init__(disturbance, "InvalidAction")
        self._timing = timing
        self._guard = timing.guard()
        self._arn_prefix = f"arn:aws:secretsmanager:{region}:{account}:secret:"
        self._suffix = suffix
        self.secrets: dict[str, Secret] = {}  # by name
        self.observers: list[SecretObserver] = []
        self._actions = {
            "CreateSecret": self._create_secret,
            "GetSecretValue": self._get_secret_value,
            "PutSecretValue": self._put_secret_value,
            "DeleteSecret": self._delete_secret,
        }

    def _run(self, answer: Action, request: dict[str, Any]) -> dict[str, Any]:
        with self._guard:
            return answer(request)

    # -- the API --------------------------------------------------------------------------

    def _create_secret(self, request: dict[str, Any]) -> dict[str, Any]:
        _only("CreateSecret", request, {"Name", "ClientRequestToken", "Description", *_VALUES})
        name = request.get("Name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise _invalid_parameter(
                "A secret's name is 1 to 512 ASCII letters, digits and the characters /_+=.@-"
            )
        value = _value(request, required=False)
        existing = self._purged(name)
        if existing is not None and existing.deletion is not None:
            raise ServiceError(
                "InvalidRequestException",
                "You can't create this secret because a secret with this name is already "
                "scheduled for deletion.",
            )
        if existing is not None:
            raise ServiceError(
                "ResourceExistsException",
                f"The operation failed because the secret {name} already exists.",
            )
        now = self._timing.now()
        secret = Secret(
            name=name,
            arn=f"{self._arn_prefix}{name}-{self._suffix()}",
            created=now,
            description=request.get("Description"),
        )
        answer: dict[str, Any] = {"ARN": secret.arn, "Name": name}
        if value is not None:
            version = Version(_version_id(request), value, [CURRENT], now)
            secret.versions.append(version)
            answer["VersionId"] = version.id
        self.secrets[name] = secret
        self._changed(secret)
        return answer

    def _get_secret_value(self, request: dict[str, Any]) -> dict[str, Any]:
        _only("GetSecretValue", request, {"SecretId", "VersionId", "VersionStage"})
        secret = self._live(request)
        version_id, stage = request.get("VersionId"), request.get("VersionStage")
        if version_id is not None:
            version = next((v for v in secret.versions if v.id == version_id), None)
            if version is None:
                raise _not_found(
                    f"Secrets Manager can't find the specified secret value for VersionId: "
                    f"{version_id}"
                )
            if stage is not None and stage not in version.stages:
                raise ServiceError(
                    "InvalidRequestException",
                    "You provided a VersionStage that is not associated to the provided VersionId.",
                )
        else:
            label = stage if stage is not None else CURRENT
            found = secret.labelled(str(label))
            if found is None:
                raise _not_found(
                    "Secrets Manager can't find the specified secret value for staging label: "
                    f"{label}"
                )
            version = found
        return {
            "ARN": secret.arn,
            "Name": secret.name,
            "VersionId": version.id,
            **version.value,
            "VersionStages": list(version.stages),
            "CreatedDate": version.created,
        }

    def _put_secret_value(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(
            "PutSecretValue",
            request,
            {"SecretId", "ClientRequestToken", "VersionStages", *_VALUES},
        )
        secret = self._live(request)
        value = _value(request, required=True)
        assert value is not None
        version_id = _version_id(request)
        same = next((v for v in secret.versions if v.id == version_id), None)
        if same is not None:
            if same.value != value:  # never say what either value is
                raise ServiceError(
                    "ResourceExistsException",
                    f"You can't use ClientRequestToken {version_id} because that value is "
                    f"already in use for a version of secret {secret.arn}.",
                )
            return _version_answer(secret, same)
        stages = request.get("VersionStages", [CURRENT])
        if (
            not isinstance(stages, list)
            or not stages
            or not all(isinstance(s, str) and s for s in stages)
        ):
            raise _invalid_parameter("VersionStages must list one or more staging labels")
        version = Version(version_id, value, [], self._timing.now())
        secret.versions.append(version)
        for stage in dict.fromkeys(stages):
            self._label(secret, version, stage)
        self._trim(secret)
        self._changed(secret)
        return _version_answer(secret, version)

    def _delete_secret(self, request: dict[str, Any]) -> dict[str, Any]:
        _only(
            "DeleteSecret",
            request,
            {"SecretId", "RecoveryWindowInDays", "ForceDeleteWithoutRecovery"},
        )
        force = request.get("ForceDeleteWithoutRecovery", False) is True
        days = request.get("RecoveryWindowInDays")
        if force and days is not None:
            raise _invalid_parameter(
                "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays."
            )
        if days is not None and (
            not isinstance(days, int) or not MIN_RECOVERY_DAYS <= days <= MAX_RECOVERY_DAYS
        ):
            raise _invalid_parameter(
                f"The RecoveryWindowInDays value must be between {MIN_RECOVERY_DAYS} and "
                f"{MAX_RECOVERY_DAYS} days (inclusive)."
            )
        now = self._timing.now()
        secret = self._find(request.get("SecretId"))
        if secret is None:
            if not force:
                raise _not_found()
            # Forcing the deletion of a secret that is not there is no error.
            secret_id = str(request.get("SecretId"))
            name = _name_in(secret_id, self._arn_prefix)
            arn = secret_id if name != secret_id else f"{self._arn_prefix}{name}-{self._suffix()}"
            return {"ARN": arn, "Name": name, "DeletionDate": now}
        if force:
            del self.secrets[secret.name]
            self._changed(secret, gone=True)
            return {"ARN": secret.arn, "Name": secret.name, "DeletionDate": now}
        if secret.deletion is not None:
            raise _MARKED_DELETED
        secret.deletion = now + (days or DEFAULT_RECOVERY_DAYS) * DAY_SECONDS
        self._changed(secret)
        return {"ARN": secret.arn, "Name": secret.name, "DeletionDate": secret.deletion}

    # -- secrets and versions -------------------------------------------------------------

    def create(self, name: str, value: str) -> Secret:
        """A secret with a first string value (what the stack creates; not a call the room
        makes): through CreateSecret, so it is saved like any other."""
        self.handle("CreateSecret", {"Name": name, "SecretString": value})
        return self.secrets[name]

    def _purged(self, name: str) -> Secret | None:
        """The secret of that name, unless its recovery window has ended (then it is gone)."""
        secret = self.secrets.get(name)
        if (
            secret is not None
            and secret.deletion is not None
            and secret.deletion <= self._timing.now()
        ):
            del self.secrets[name]
            self._changed(secret, gone=True)
            return None
        return secret

    def _find(self, secret_id: object) -> Secret | None:
        """The secret a SecretId names: its name, its ARN, or its ARN without the suffix."""
        if not isinstance(secret_id, str) or not secret_id:
            raise _invalid_parameter("SecretId must name a secret: its name or its ARN")
        if not secret_id.startswith("arn:"):
            return self._purged(secret_id)
        named = (s.name for s in self.secrets.values() if secret_id in (s.arn, s.arn[:-7]))
        name = next(named, None)
        return self._purged(name) if name is not None else None

    def _live(self, request: dict[str, Any]) -> Secret:
        secret = self._find(request.get("SecretId"))
        if secret is None:
            raise _not_found()
        if secret.deletion is not None:
            raise _MARKED_DELETED
        return secret

    def _label(self, secret: Secret, version: Version, stage: str) -> None:
        """Move `stage` to `version`; AWSCURRENT leaves AWSPREVIOUS behind where it was."""
        holder = secret.labelled(stage)
        if holder is not None:
            holder.stages.remove(stage)
            if stage == CURRENT:
                previous = secret.labelled(PREVIOUS)
                if previous is not None:
                    previous.stages.remove(PREVIOUS)
                holder.stages.append(PREVIOUS)
        version.stages.append(stage)

    def _trim(self, secret: Secret) -> None:
        while len(secret.versions) > MAX_VERSIONS:
            unlabelled = next((v for v in secret.versions if not v.stages), None)
            if unlabelled is None:
                return
            secret.versions.remove(unlabelled)

    def _changed(self, secret: Secret, *, gone: bool = False) -> None:
        for observer in self.observers:
            observer(secret.name, None if gone else secret.saved())

    # -- saving the store -----------------------------------------------------------------

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """Every secret as saved, for saving the store."""
        with self._guard:
            return {name: secret.saved() for name, secret in self.secrets.items()}

    def load(self, name: str, saved: dict[str, Any]) -> None:
        """Put a saved secret's versions back into the secret of that name, which keeps its
        ARN (no observers: they are already saved)."""
        with self._guard:
            secret = self.secrets[name]
            secret.description = saved.get("description")
            secret.deletion = saved.get("deletion")
            secret.versions = [
                Version(
                    id=str(v["id"]),
                    value={str(k): str(text) for k, text in dict(v["value"]).items()},
                    stages=[str(s) for s in v["stages"]],
                    created=float(v["created"]),
                )
                for v in saved["versions"]
            ]


# -- request checks ---------------------------------------------------------------------------

_VALUES = ("SecretString", "SecretBinary")


def _only(action: str, request: dict[str, Any], allowed: set[str]) -> None:
    """Refuse loudly what this store does not model (field names only: never a value)."""
    unsupported = sorted(set(request) - allowed)
    if unsupported:
        raise NotImplementedError(f"{action} with {', '.join(unsupported)}")


def _value(request: dict[str, Any], *, required: bool) -> dict[str, str] | None:
    given = {k: request[k] for k in _VALUES if request.get(k) is not None}
    if len(given) > 1:
        raise _invalid_parameter(
            "You can't specify both a binary secret value and a string secret value in the "
            "same secret."
        )
    if not given:
        if required:
            raise ServiceError(
                "InvalidRequestException", "You must provide either SecretString or SecretBinary."
            )
        return None
    ((kind, text),) = given.items()
    if not isinstance(text, str):
        raise _invalid_parameter(f"{kind} must be text")
    return {kind: text}


def _version_id(request: dict[str, Any]) -> str:
    """The new version's id: the request's ClientRequestToken (every SDK sends one)."""
    token = request.get("ClientRequestToken")
    if token is None:
        return str(uuid.uuid4())
    if not isinstance(token, str) or not 32 <= len(token) <= 64:
        raise _invalid_parameter("ClientRequestToken must be 32 to 64 characters")
    return token


def _name_in(secret_id: str, arn_prefix: str) -> str:
    """The name a SecretId gives, for a secret that does not exist."""
    if not secret_id.startswith(arn_prefix):
        return secret_id
    rest = secret_id[len(arn_prefix) :]
    return rest[:-7] if re.search(r"-[A-Za-z0-9]{6}$", rest) else rest


def _version_answer(secret: Secret, version: Version) -> dict[str, Any]:
    return {
        "ARN": secret.arn,
        "Name": secret.name,
        "VersionId": version.id,
        "VersionStages": list(version.stages),
    }
