"""The room's ticket keys over time: the first key, rotation and retirement.

Two stores hold them, and only `beekeeper keys`, `beekeeper deploy` and `beekeeper local` write
them (the functions only read):

- the room's secret (private): the key ring the consumer signs from (`tickets.KeyRing`: the
  issuer and each key's private JWK with `signs_from`);
- the table's `ticket-keys` item (public): `published`, a list of maps {`kid` S, `jwk` S (the public
  JWK as JSON), `signs_from` N, `retire_at` N (0 while no successor is planned)}, and
  `version` N (each write is conditional on it, so two operators can not interleave). GET
  /jwks.json publishes every key whose `retire_at` is 0 or still ahead of the request time:
  a superseded key stops being published by itself, with no write and no redeploy.

The timing (core/tickets.py): a rotation publishes the new key at once and lets it sign only
JWKS_MAX_AGE_SECONDS later; the key it supersedes stays published until every ticket it can
have signed has expired (its last signature is at the latest when the new key starts, since no
consumer signs from a ring older than KEY_STALE_SECONDS = JWKS_MAX_AGE_SECONDS). `retire` then
removes the private and public halves of keys past that time (`force`: a superseded key now,
refusing its unexpired tickets, for a key that leaked).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import tickets as facts
from beekeeper.core.datamodel import PARTITION_KEY, TICKET_KEYS_KEY, TICKET_KEYS_PUBLISHED
from beekeeper.room.room_state import error_code, key, number, read_number
from beekeeper.room.tickets import KeyRing, generate_private_jwk, public_jwk


class KeyTimingError(ValueError):
    """What was asked would break the timing rules; the message says when it can be done."""


class KeysChangedError(RuntimeError):
    """Someone else changed the room's keys meanwhile; the message says to run again."""


@dataclass(frozen=True)
class PublishedKey:
    kid: str
    jwk: str  # the public JWK, JSON
    signs_from: int
    retire_at: int = 0  # 0: no successor planned yet

    def published_at(self, now: float) -> bool:
        return self.retire_at == 0 or self.retire_at > now


@dataclass(frozen=True)
class RoomKeys:
    """Both halves as read (or about to be written) together."""

    ring: KeyRing
    published: tuple[PublishedKey, ...]
    version: int = 0

    def signing_kid(self, now: float) -> str | None:
        key = self.ring.signing_key(now)
        return str(key["kid"]) if key is not None else None


@dataclass(frozen=True)
class Change:
    keys: RoomKeys
    summary: str


def _published(private: dict[str, Any]) -> PublishedKey:
    return PublishedKey(
        kid=str(private["kid"]),
        jwk=json.dumps(public_jwk(private), separators=(",", ":"), sort_keys=True),
        signs_from=int(private["signs_from"]),
    )


def first_key(keys: RoomKeys, *, issuer: str, now: int) -> Change | None:
    """The room's first key, signing at once (nobody holds tickets or keys of this room yet);
    or only the issuer brought up to date; None when nothing needs doing."""
    if keys.ring.keys:
        if keys.ring.issuer == issuer:
            return None
        ring = replace(keys.ring, issuer=issuer)
        return Change(replace(keys, ring=ring), f"tickets now name the issuer {issuer}")
    new = generate_private_jwk(signs_from=now)
    ring = KeyRing(issuer, (new,))
    published = (*keys.published, _published(new))
    return Change(
        RoomKeys(ring, published, keys.version), f"key {new['kid']} published and signing"
    )


def rotate(keys: RoomKeys, *, issuer: str, now: int, ticket_lifetime_seconds: int) -> Change:
    """A new key: published now, signing after the JWKS cache lifetime; the keys it supersedes
    retire once every ticket they can have signed has expired. Keys already past their
    retirement are dropped on the way."""
    if not keys.ring.keys:
        change = first_key(keys, issuer=issuer, now=now)
        assert change is not None
        return change
    pending = [k for k in keys.ring.keys if int(k["signs_from"]) > now]
    if pending:
        kid, starts = pending[0]["kid"], int(pending[0]["signs_from"])
        raise KeyTimingError(
            f"a rotation is under way: key {kid} starts signing at {_when(starts)}; "
            "rotate again after that"
        )
    kept = _not_retired(keys, now)
    starts = now + facts.JWKS_MAX_AGE_SECONDS
    retire_at = starts + ticket_lifetime_seconds + facts.RETIRE_MARGIN_SECONDS
    new = generate_private_jwk(signs_from=starts)
    superseded = (p if p.retire_at else replace(p, retire_at=retire_at) for p in kept.published)
    published = (*superseded, _published(new))
    ring = KeyRing(issuer, (*kept.ring.keys, new))
    return Change(
        RoomKeys(ring, published, keys.version),
        f"key {new['kid']} published now, signing from {_when(starts)}; the key it replaces "
        f"stays published until {_when(retire_at)}, when the last ticket it signed expires",
    )


def retire(keys: RoomKeys, *, now: int, force: bool = False) -> Change:
    """Remove keys whose tickets have all expired (with `force`: every superseded key)."""
    due = {p.kid for p in keys.published if p.retire_at and p.retire_at <= now}
    due |= {str(k["kid"]) for k in keys.ring.keys if not _in_published(keys, str(k["kid"]))}
    due.discard(keys.signing_kid(now) or "")
    waiting = [p for p in keys.published if p.retire_at > now and p.kid not in due]
    if force:
        signing = keys.signing_kid(now)
        for p in waiting:
            if p.kid == signing:
                successor = min(
                    (int(k["signs_from"]) for k in keys.ring.keys if int(k["signs_from"]) > now),
                    default=0,
                )
                raise KeyTimingError(
                    f"key {p.kid} still signs until {_when(successor)}, when its successor "
                    "takes over; retire it after that"
                )
            due.add(p.kid)
        waiting = []
    if not due:
        if waiting:
            later = "; ".join(f"key {p.kid} at {_when(p.retire_at)}" for p in waiting)
            raise KeyTimingError(
                f"no key is due to retire: {later}, when the last ticket it signed expires "
                "(it stops being published then by itself); --force retires it now and "
                "refuses its unexpired tickets"
            )
        raise KeyTimingError("no key is due to retire: the room has only its signing key")
    ring = KeyRing(keys.ring.issuer, tuple(k for k in keys.ring.keys if str(k["kid"]) not in due))
    published = tuple(p for p in keys.published if p.kid not in due)
    return Change(
        RoomKeys(ring, published, keys.version),
        f"retired key{'s' if len(due) > 1 else ''} {', '.join(sorted(due))}",
    )


def _not_retired(keys: RoomKeys, now: int) -> RoomKeys:
    gone = {p.kid for p in keys.published if not p.published_at(now)}
    ring = KeyRing(keys.ring.issuer, tuple(k for k in keys.ring.keys if str(k["kid"]) not in gone))
    return RoomKeys(ring, tuple(p for p in keys.published if p.kid not in gone), keys.version)


def _in_published(keys: RoomKeys, kid: str) -> bool:
    return any(p.kid == kid for p in keys.published)


def _when(epoch: int) -> str:
    moment = datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


# -- the two stores ------------------------------------------------------------------------


def published_item(keys: Iterable[PublishedKey], version: int, now: int) -> dict[str, Any]:
    return {
        PARTITION_KEY: {"S": TICKET_KEYS_KEY},
        TICKET_KEYS_PUBLISHED: {
            "L": [
                {
                    "M": {
                        "kid": {"S": p.kid},
                        "jwk": {"S": p.jwk},
                        "signs_from": number(p.signs_from),
                        "retire_at": number(p.retire_at),
                    }
                }
                for p in keys
            ]
        },
        "version": number(version),
        "updated_at": number(now),
    }


def _read_published(item: dict[str, Any] | None) -> tuple[tuple[PublishedKey, ...], int]:
    if not item:
        return (), 0
    found = []
    for entry in item.get(TICKET_KEYS_PUBLISHED, {}).get("L", []):
        fields = entry.get("M", {})
        found.append(
            PublishedKey(
                kid=fields["kid"]["S"],
                jwk=fields["jwk"]["S"],
                signs_from=read_number(fields, "signs_from"),
                retire_at=read_number(fields, "retire_at"),
            )
        )
    return tuple(found), read_number(item, "version")


@dataclass(frozen=True, kw_only=True)
class TicketKeyStore:
    """Reads and writes a room's keys: its secret and its `ticket-keys` item."""

    secretsmanager: Any
    secret_id: str
    dynamodb: Any
    table: str
    clock: Callable[[], float]

    def ensure_first_key(self, *, issuer: str) -> Change | None:
        """Give a room without keys its first (`beekeeper deploy`, `beekeeper local`), or bring
        the issuer up to date; None when the room's keys were already right."""
        before = self.read()
        change = first_key(before, issuer=issuer, now=int(self.clock()))
        if change is not None:
            self.apply(before, change.keys)
        return change

    def read(self) -> RoomKeys:
        text = self.secretsmanager.get_secret_value(SecretId=self.secret_id)["SecretString"]
        ring = KeyRing.parse(str(text))
        item = self.dynamodb.get_item(
            TableName=self.table, Key=key(TICKET_KEYS_KEY), ConsistentRead=True
        ).get("Item")
        published, version = _read_published(item)
        return RoomKeys(ring, published, version)

    def apply(self, before: RoomKeys, after: RoomKeys) -> None:
        """Write `after` so that no key ever signs unpublished.

        A change that only removes keys takes them out of the ring (nothing signs with them)
        before it stops publishing them; any other change publishes first and writes the ring
        after, and if that second write fails the publication is put back as it was.
        """
        before_kids = {p.kid for p in before.published}
        if {p.kid for p in after.published} < before_kids:
            self._write_ring(after.ring)
            self._write_published(after, before.version)
            return
        self._write_published(after, before.version)
        try:
            self._write_ring(after.ring)
        except Exception:
            self._write_published(before, before.version + 1)
            raise

    def _write_ring(self, ring: KeyRing) -> None:
        self.secretsmanager.put_secret_value(SecretId=self.secret_id, SecretString=ring.dump())

    def _write_published(self, keys: RoomKeys, expected_version: int) -> None:
        item = published_item(keys.published, expected_version + 1, int(self.clock()))
        condition = (
            {"ConditionExpression": "attribute_not_exists(pk)"}
            if expected_version == 0
            else {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": {":v": number(expected_version)},
            }
        )
        try:
            self.dynamodb.put_item(TableName=self.table, Item=item, **condition)
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                raise KeysChangedError(
                    "the room's keys changed while this command ran; run it again"
                ) from error
            raise
