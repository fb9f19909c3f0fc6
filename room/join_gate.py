"""The marketing link's gate: a new place costs a solved challenge (core/join_work.py).

The producer asks the gate for a challenge (no AWS call: a challenge is signed, not stored) and
hands it a solution. A solution that checks out is spent with one conditional PutItem of
`work#<nonce>` (`work#<nonce>.<visitor nonce>` for a shared challenge's) with
`attribute_not_exists(pk)`, before the place is counted: the first use wins, a replay finds the
item and gets no place. That write is what single use costs per join: one
write request unit (the item is about 60 bytes), about $0.63 per million joins on demand in
us-east-1, and one round trip to DynamoDB. The item lives until the challenge could no longer
be used anyway (TTL), so the table holds at most a few minutes of them.

The room's join secret (Secrets Manager, read by the producer alone) is read once per
container; the keys are derived from it (core/join_work.JoinKeys). The same keys mark every
token id the producer issues (core/datamodel.Token.issue), which is how a leave tells a token
the room issued from a forged one (room/leaving.py).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from beekeeper.core import join_work
from beekeeper.core.datamodel import PARTITION_KEY, TTL_ATTRIBUTE, work_key
from beekeeper.core.join_work import Challenge, JoinKeys, Solution, Verdict
from beekeeper.room.room_state import error_code

log = logging.getLogger("beekeeper.producer")


@dataclass
class JoinGate:
    """Challenges out, solutions in; `read_secret` returns the room's join secret."""

    room: str
    read_secret: Callable[[], str]
    dynamodb: Any
    table: str
    token_bytes: Callable[[int], bytes] = secrets.token_bytes
    _keys: JoinKeys | None = field(default=None, init=False)

    def keys(self) -> JoinKeys:
        """The keys, read from the secret on first use (once per container)."""
        if self._keys is None:
            self._keys = JoinKeys.from_secret(self.read_secret())
        return self._keys

    def challenge(self, *, now: float, work_ms: float) -> Challenge:
        return join_work.issue(
            self.keys(), self.room, now=now, work_ms=work_ms, token_bytes=self.token_bytes
        )

    def redeem(self, text: str, *, now: float) -> Verdict:
        """What `text` (the `work` parameter) is worth; an OK solution is spent here."""
        solution = Solution.parse(text)
        if solution is None:
            return Verdict.MALFORMED
        verdict = join_work.check(self.keys(), self.room, solution, now=now)
        if verdict is not Verdict.OK:
            return verdict
        return self.spend(solution)

    def spend(self, solution: Solution) -> Verdict:
        """Record what the solution spends (`Solution.spent_as`), on condition that nobody did
        before: OK or USED."""
        try:
            self.dynamodb.put_item(
                TableName=self.table,
                Item={
                    PARTITION_KEY: {"S": work_key(solution.spent_as)},
                    TTL_ATTRIBUTE: {"N": str(solution.challenge.expires_at)},
                },
                ConditionExpression=f"attribute_not_exists({PARTITION_KEY})",
            )
        except ClientError as error:
            if error_code(error) == "ConditionalCheckFailedException":
                log.info("a challenge was presented again: no second place")
                return Verdict.USED
            raise
        return Verdict.OK
