"""Token format and key helpers shared by every part of the room."""

from __future__ import annotations

import base64
import secrets

import pytest

from beekeeper.core import datamodel
from beekeeper.core.datamodel import (
    TOKEN_PATTERN,
    Token,
    origin_url_with_token,
    status_copy_for,
    visitor_key,
)


def test_issued_tokens_are_128_bit_url_safe_and_parse_back() -> None:
    token = Token.issue(42, secrets.token_bytes)
    assert len(token.id) == 22
    assert TOKEN_PATTERN.fullmatch(str(token))
    assert Token.parse(str(token)) == token
    assert visitor_key(token.id) == f"v#{token.id}"


def test_issue_uses_the_given_random_source() -> None:
    assert Token.issue(7, lambda n: b"\xff" * n) == Token("_" * 21 + "w", 7)
    with pytest.raises(ValueError, match="16 bytes"):
        Token.issue(7, lambda n: b"\x00" * (n - 1))


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "abc",
        "A" * 22,
        "A" * 22 + ".",
        "A" * 22 + ".x",
        "A" * 21 + ".1",
        "A" * 23 + ".1",
        "A" * 22 + ".1234567890123",
        "A" * 21 + "=.1",
        "A" * 22 + ".1\n",
        "A" * 22 + '.1"',
        " " + "A" * 22 + ".1",
    ],
)
def test_anything_but_an_exact_token_is_rejected(text: object) -> None:
    assert Token.parse(text) is None


def test_origin_url_keeps_an_existing_query() -> None:
    assert origin_url_with_token("https://s.example/a", "T.1") == (
        "https://s.example/a?beekeeper_token=T.1"
    )
    assert origin_url_with_token("https://s.example/a?x=1", "T.1") == (
        "https://s.example/a?x=1&beekeeper_token=T.1"
    )


def test_status_copy_is_the_last_digit_of_the_ordinal() -> None:
    assert [status_copy_for(n) for n in (1, 10, 19, 123456789)] == [1, 0, 9, 9]


def test_origin_url_carries_the_ticket_beside_the_token_when_there_is_one() -> None:
    assert origin_url_with_token("https://s.example/a?x=1", "T.1", "h.p.s") == (
        "https://s.example/a?x=1&beekeeper_token=T.1&beekeeper_ticket=h.p.s"
    )
    assert origin_url_with_token("https://s.example/a", "T.1", None) == (
        "https://s.example/a?beekeeper_token=T.1"
    )


@pytest.mark.parametrize(
    ("pk", "emptied"),
    [
        ("v#" + "A" * 22, True),
        ("p#" + "A" * 22, True),
        # Kept, levelled: the next event's ordinals go on above the last event's.
        ("arrivals#3", False),
        ("admitted", True),
        ("inside", True),
        ("deadlines#1800000000", True),
        ("warden", True),
        ("draw", True),
        ("draw#12", True),
        ("status#7", True),
        ("governor", True),
        ("governor-log", True),
        ("minute#29999999", True),  # before the current minute
        ("minute#30000000", False),  # the current minute's claim
        ("minute#30000001", False),
        ("config", False),
        ("ticket-keys", False),
        ("something-else", False),
    ],
)
def test_a_reset_empties_the_event_and_keeps_the_room(pk: str, emptied: bool) -> None:
    assert datamodel.emptied_by_reset(pk, current_minute=30_000_000) is emptied
    assert (pk in datamodel.RESET_KEEPS) is (pk in ("config", "ticket-keys"))


def test_a_token_the_room_issues_carries_its_mark_in_the_same_format() -> None:
    key, other = b"k" * 32, b"o" * 32
    token = Token.issue(42, lambda size: bytes(range(size)), key)
    assert TOKEN_PATTERN.fullmatch(str(token)) and token.ordinal == 42
    assert token.issued_with(key)
    assert not token.issued_with(other)
    assert not Token(token.id, 43).issued_with(key)  # an edited ordinal
    # The same bytes, spelled with the last character's spare bits: not the id the room wrote.
    # (The last of 22 base64url characters carries 2 bits: A, Q, g or w; the next letter has
    # the same 2 bits and a spare one set, which a lenient decoder ignores.)
    assert token.id[-1] in "AQgw"
    alias = token.id[:-1] + chr(ord(token.id[-1]) + 1)
    assert base64.urlsafe_b64decode(alias + "==") == base64.urlsafe_b64decode(token.id + "==")
    assert not Token(alias, 42).issued_with(key)
    # Without a key: 16 bytes of the source, no mark.
    plain = Token.issue(42, lambda size: bytes(size))
    assert plain.id == "A" * 22 and not plain.issued_with(key)
