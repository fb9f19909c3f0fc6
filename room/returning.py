"""A visitor who follows the marketing link with our cookie: shop, their place, or a new place.

The waiting room page sends a visitor back to the marketing link when /polling says their place
is gone ("expired", "unknown"), so the link must not send them straight back to the page: that
loop would last as long as the cookie (up to 14 days). The link answers by what /polling would
say about the same cookie:

| the room knows the token as                          | the marketing link                |
|------------------------------------------------------|-----------------------------------|
| admitted, admission still valid                      | the shop, with token and ticket   |
| admitted, admission expired                          | a new place (a new cookie)        |
| left the line or the shop (/leave; capacity mode)    | a new place                       |
| not admitted, and the line passed it long ago        | a new place ("unknown")           |
| given before the room's last `beekeeper reset`       | a new place ("reset")             |
| not admitted yet                                     | their place (the page)            |
| a cookie that is not well-formed, or none            | a new place                       |

"Well-formed" is `cookies.read_token`, the rule /polling applies; "unknown" is
`core.polling.is_unknown`, the rule the /polling template is held to. The room's counters come
from the producer's cached snapshot. A returning visitor costs one GetItem of their item (a new
visitor still costs two calls); one found still in line costs a second, a consistent read of
the config item (a GetItem with ConsistentRead "always returns the last updated value": Amazon
DynamoDB API Reference, GetItem; the local store's reads all do): the cached snapshot may be up
to CONFIG_FRESH_SECONDS older than a `beekeeper reset` that the visitor's page already showed,
and that page sends them here for a new place. If a read fails, the visitor keeps their place:
a lost place is worse than a page that asks again.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from beekeeper.core.datamodel import STATE_ENDED, STATE_LEFT, TICKET_ATTRIBUTE, Token, visitor_key
from beekeeper.core.polling import is_before_reset, is_unknown
from beekeeper.core.settings import RoomSettings
from beekeeper.core.tickets import TICKET_PATTERN
from beekeeper.room.cookies import token_from_request
from beekeeper.room.prequeue import read_prequeue_item
from beekeeper.room.room_state import Item, RoomSnapshot, key, read_config, read_number

log = logging.getLogger("beekeeper.producer")


class Way(enum.Enum):
    SHOP = "shop"  # admitted and valid: straight to the shop
    KEEP_PLACE = "keep_place"  # still in line: back to the page
    NEW_PLACE = "new_place"  # a new visitor, or one whose place is gone


@dataclass(frozen=True)
class Visit:
    way: Way
    token: Token | None = None  # the cookie's token, when it was well-formed
    reason: str = "new"  # new, admitted, waiting, expired, left, reset, unknown, unreadable
    ticket: str | None = None  # the admission's signed ticket, when it has one

    @property
    def rejoins(self) -> bool:
        """A returning visitor whose place is gone and who gets a new one."""
        return self.way is Way.NEW_PLACE and self.token is not None


def classify(token: Token, visitor: Item | None, snapshot: RoomSnapshot, now: float) -> Visit:
    """What the marketing link does for a well-formed `token` whose `v#` item is `visitor`."""
    if visitor:
        state = visitor.get("state", {}).get("S")
        if state == STATE_LEFT:
            return Visit(Way.NEW_PLACE, token, "left")
        # Expiry against the request time, as /polling and /client decide it (a place freed
        # in capacity mode, "ended", is expired too).
        if state != STATE_ENDED and read_number(visitor, "expires_at") > now:
            return Visit(Way.SHOP, token, "admitted", stored_ticket(visitor))
        return Visit(Way.NEW_PLACE, token, "expired")
    if is_before_reset(token.ordinal, snapshot.config.reset_ordinal):
        return Visit(Way.NEW_PLACE, token, "reset")
    if is_unknown(token.ordinal, snapshot.passed_total, snapshot.config.rate):
        return Visit(Way.NEW_PLACE, token, "unknown")
    return Visit(Way.KEEP_PLACE, token, "waiting")


def stored_ticket(visitor: Item) -> str | None:
    """The ticket on an admitted visitor's item, if it is one (the rule /polling applies)."""
    ticket = visitor.get(TICKET_ATTRIBUTE, {}).get("S")
    return ticket if isinstance(ticket, str) and TICKET_PATTERN.fullmatch(ticket) else None


def returning_visit(
    event: Mapping[str, Any],
    *,
    dynamodb: Any,
    table: str,
    settings: RoomSettings,
    snapshot: RoomSnapshot,
    now: float,
) -> Visit:
    """The visit a marketing-link request is: new, or a returning visitor's (see the table)."""
    token = token_from_request(event)
    if token is None:
        return Visit(Way.NEW_PLACE)
    try:
        visitor = dynamodb.get_item(TableName=table, Key=key(visitor_key(token.id))).get("Item")
    except Exception:
        log.exception("could not read a returning visitor's admission; they keep their place")
        return Visit(Way.KEEP_PLACE, token, "unreadable")
    visit = classify(token, visitor, snapshot, now)
    if visit.reason == "waiting":
        # Only a reset newer than the cached snapshot can change this verdict.
        try:
            config = read_config(dynamodb, table, settings)
        except Exception:
            log.exception("could not read the room's config; a returning visitor keeps the place")
            return visit
        visit = classify(token, visitor, replace(snapshot, config=config), now)
    if visit.reason == "unknown" and snapshot.draw.state:
        # A pre-queue visitor's ordinal says nothing about their drawn place: keep it.
        try:
            if read_prequeue_item(dynamodb, table, token.id) is not None:
                return Visit(Way.KEEP_PLACE, token, "waiting")
        except Exception:
            log.exception("could not read a returning visitor's pre-queue place; they keep it")
            return Visit(Way.KEEP_PLACE, token, "unreadable")
    if visit.rejoins:
        log.info("a returning visitor's place is gone (%s): a new place", visit.reason)
    return visit
