"""`beekeeper check`'s own rules: when it sends nobody (and the sentence it says), what its
offline ticket verification refuses, and what its report says."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from beekeeper.cli.check import tickets as verification
from beekeeper.cli.check.journey import Journey, RoomAddress
from beekeeper.cli.check.run import CheckReport, StepResult, render_text, why_not_now
from beekeeper.cli.room_status import StatusReport
from beekeeper.core.datamodel import Token
from beekeeper.core.paths import PACKAGE_ROOT
from beekeeper.core.settings import RoomSettings
from beekeeper.room.tickets import TicketIssuer, public_jwk

NOW = 1_800_000_000
ISSUER = "https://room.example.com"
SHOP = "https://shop.example.com"


def state(**changes: object) -> StatusReport:
    base = StatusReport(
        room="drop", region="eu-west-1", local=False, generated_at=NOW, enabled=True, rate=60,
        operator_rate=60, slowed=False, config_version=1, dynamic_rate_throttling=False,
        governor_state=None, governor_sampled_url="", governor_slow_ms=0,
        governor_baseline_median_ms=None, governor_decisions=[], queue_visible=0,
        queue_in_flight=0, dead_letter=0, arrivals_total=0, admitted_total=0, waiting=0,
        last_minute=0, last_minute_arrivals=0, last_minute_admitted=0,
        estimated_wait_seconds=0, chart_first_minute=0, admitted_per_minute=[],
        arrivals_per_minute=[], waiting_per_minute=[],
    )  # fmt: skip
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"enabled": False}, ["is off", "`beekeeper on drop`", "`beekeeper off drop`"]),
        ({"held": True}, ["is held", "`beekeeper resume drop`"]),
        ({"closed": True, "held": True}, ["is closed", "`beekeeper resume drop`"]),
        ({"starts_at": NOW + 3600, "draw_state": "committed"}, ["scheduled to start at"]),
        ({"starts_at": NOW - 10, "draw_state": "drawing"}, ["scheduled", "draw"]),
        ({"waiting": 1}, ["1 visitor is waiting", "`beekeeper status drop`"]),
        ({"waiting": 3}, ["3 visitors are waiting"]),
        ({"max_inside": 2, "inside": 2}, ["is full (2 of 2 places held)"]),
    ],
)
def test_the_check_sends_nobody_when_a_visitor_could_be_delayed(
    changes: dict[str, object], said: list[str]
) -> None:
    sentence = why_not_now(state(**changes), NOW)
    assert sentence and all(words in sentence for words in said), sentence


def test_a_room_on_with_an_empty_line_is_checked() -> None:
    assert why_not_now(state(), NOW) == ""
    assert why_not_now(state(starts_at=NOW - 60, draw_state="drawn"), NOW) == ""
    assert why_not_now(state(max_inside=2, inside=1), NOW) == ""


def _ticket(token: Token, key: dict[str, object], *, origin: str = SHOP) -> str:
    ring = json.dumps({"issuer": ISSUER, "keys": [key]})
    settings = RoomSettings(
        name="drop", display_name="Drop", region="eu-west-1", origin=origin, rate=60
    )
    ticket = TicketIssuer(read_ring=lambda: ring, settings=settings, clock=lambda: NOW).ticket(
        token, NOW, NOW + 600
    )
    assert ticket is not None
    return ticket


@pytest.fixture(scope="module")
def key() -> dict[str, object]:
    from beekeeper.room.tickets import generate_private_jwk

    return generate_private_jwk(signs_from=NOW - 3600)


def _verify(ticket: str, keys: list[dict[str, object]], token: Token, **changes: object) -> None:
    arguments: dict[str, object] = {
        "issuer": ISSUER, "audience": SHOP, "room": "drop", "token_id": token.id, "now": NOW,
    }  # fmt: skip
    verification.verify(ticket, {"keys": keys}, **{**arguments, **changes})  # type: ignore[arg-type]


def test_a_test_visitor_s_ticket_verifies_and_every_fault_is_a_sentence(
    key: dict[str, object],
) -> None:
    test = Token("A" * 22, 0)
    published = [public_jwk(key)]
    ticket = _ticket(test, key)
    _verify(ticket, published, test)
    # Another key's point under this key's kid: a signature by this key can not verify.
    other = public_jwk(_other())
    impostor = {**published[0], "x": other["x"], "y": other["y"]}
    faults = {
        "not among the 0 key(s)": lambda: _verify(ticket, [], test),
        "does not verify": lambda: _verify(ticket, [impostor], test),
        "its aud is": lambda: _verify(
            _ticket(test, key, origin="https://x.example"), published, test
        ),
        "its sub is": lambda: _verify(ticket, published, Token("B" * 22, 0)),
        "its test is None": lambda: _verify(_ticket(Token("A" * 22, 5), key), published, test),
        "expired": lambda: _verify(ticket, published, test, now=NOW + 601),
        "its iss is": lambda: _verify(ticket, published, test, issuer="https://else.example"),
        "not a compact JWS": lambda: _verify("abc", published, test),
    }
    for words, attempt in faults.items():
        with pytest.raises(verification.TicketRefused, match=re.escape(words)):
            attempt()


def _other() -> dict[str, object]:
    from beekeeper.room.tickets import generate_private_jwk

    return generate_private_jwk(signs_from=NOW)


def test_the_report_names_the_first_failure_and_what_was_not_run() -> None:
    report = CheckReport("drop", "https://room.example.com/", 2)
    report.steps = [
        StepResult("room", True, 0.02, "on at 60/min, nobody waiting"),
        StepResult("ticket", False, 0.01, "The ticket does not verify.", "Look at the keys."),
        StepResult("redeem", None),
        StepResult("clean up", True, 0.05, "5 items removed"),
    ]
    assert not report.passed and report.failed is report.steps[1]
    lines = render_text(report).splitlines()
    assert lines[2] == "  FAIL  ticket      0.01 s  The ticket does not verify."
    assert lines[3] == "  --    redeem      0.00 s  not run"
    assert lines[-1] == (
        "The check failed at 'ticket': The ticket does not verify. Look at the keys."
    )
    assert report.to_json()["steps"][2] == {
        "step": "redeem", "passed": None, "seconds": 0.0, "saw": "", "look": "",
    }  # fmt: skip


def test_docs_cli_names_every_step_the_check_takes() -> None:
    """docs/cli.md's table of the check's steps is the journey's, in its order: a room with
    every step (capacity mode, a push channel) between the room's read and the clean-up."""
    address = RoomAddress(
        name="drop",
        marketing_url=f"{ISSUER}/beekeeper",
        page_url=f"{ISSUER}/room",
        client_check_url=f"{ISSUER}/client",
        shop_origin=SHOP,
        display_name="Drop",
        capacity=True,
        channel_source="wss://example.appsync-realtime-api.eu-west-1.amazonaws.com",
    )
    journey = Journey(address, "pass", 2, clock=lambda: NOW, sleep=lambda _s: None)
    steps = ["room", *(step.name for step in journey.steps()), "clean up"]
    text = (PACKAGE_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("\n## check\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([a-z/' ]+) \| ", section, re.MULTILINE)
    assert rows[0] == "step" and rows[1:] == steps
