"""The simulator's push channel (simulator/push.py): what each page does with the channel and
what AWS counts for it, against figures worked out by hand; AWS's connection rate at a burst;
the keys `beekeeper simulate --json` reports (issue 36 point 5)."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner

from beekeeper.cli.main import cli
from beekeeper.core import push
from beekeeper.simulator.crowd import Arrival, Crowd
from beekeeper.simulator.push import (
    CONNECTIONS_PER_SECOND,
    DELIVERY_SECONDS,
    HANDSHAKE_SECONDS,
    PushChannelModel,
)
from beekeeper.simulator.run import simulate, simulated_room

PUSH_KEYS = (
    "push_connection_minutes_per_visitor",
    "push_operations_per_visitor",
    "push_keepalives_per_visitor",
    "state_fetches_per_visitor",
    "change_noticed_seconds_p50",
    "change_noticed_seconds_p99",
)


def model(
    loads: list[float], stops: list[float], publishes: list[tuple[float, str]]
) -> PushChannelModel:
    return PushChannelModel(
        loads=loads,
        stops=stops,
        publishes=[when for when, _ in publishes],
        reasons=[why for _, why in publishes],
        rng=random.Random(1),
        origin_time=0.0,
        seconds=1_000,
    )


def test_three_pages_are_counted_as_aws_counts_them() -> None:
    # Loaded at 10, 20 and 30 s; closed at 200, 80 and 400 s. A hold at 50 s, a full copy at
    # 100 s, a resume at 150 s.
    figures = model(
        [10.0, 20.0, 30.0],
        [200.0, 80.0, 400.0],
        [(50.0, push.HOLD), (100.0, push.RESYNC), (150.0, push.RESUME)],
    ).figures()
    # Each connection's started minutes: 4 (189.7 s), 1 (59.7 s) and 7 (369.7 s).
    assert HANDSHAKE_SECONDS == 0.3
    assert figures.connection_minutes == round(12 / 3, 3)
    assert figures.keepalives == round(12 / 3, 3)
    # 3 connections, 3 subscribes, deliveries 3 + 2 + 2.
    assert figures.operations == round(13 / 3, 3)
    # The load's fetch and the catch-up's, each.
    assert figures.state_fetches == 2.0
    assert figures.refused_attempts == 0
    # The hold and the resume reached every open page through the channel.
    assert figures.noticed_p50 == figures.noticed_p99 == round(DELIVERY_SECONDS + 0.01, 2)
    assert sum(figures.fetches_per_second) == 6


def test_a_burst_over_the_connection_rate_falls_back_to_the_document_and_retries() -> None:
    # 5,000 pages a second for 5 s (300,000 a minute) against 2,000 connections a second.
    pages = 5 * 5_000
    loads = [100.0 + i / 5_000 for i in range(pages)]
    figures = model(loads, [700.0] * pages, [(108.0, push.HOLD)]).figures()
    # At least 3,000 a second turned away at first (each a billed attempt, tried again later).
    assert figures.refused_attempts >= 5 * (5_000 - CONNECTIONS_PER_SECOND)
    assert figures.operations > 2 + figures.refused_attempts / pages
    # Those pages fetched the document meanwhile, every 30 s at most.
    assert figures.state_fetches > 2.0
    # Every page had a socket in the end: 600 s each, so 10 started minutes.
    assert figures.connection_minutes >= 9.0
    # The hold (while many still wait for a connection) reached the subscribed pages at once;
    # the others by the document, within the fallback's interval and the edge copy's age.
    assert figures.noticed_p50 is not None and figures.noticed_p99 is not None
    assert 3.0 <= figures.noticed_p99 <= push.FALLBACK_DOCUMENT_SECONDS + 3.0 + 0.5


def test_a_page_closed_before_any_publish_gets_no_delivery() -> None:
    figures = model([10.0], [40.0], [(50.0, push.HOLD)]).figures()
    assert figures.operations == 2.0
    assert figures.noticed_p50 is None


def test_simulate_reports_the_channel_and_a_rate_change_reaches_the_pages_within_2_s() -> None:
    result = simulate(
        simulated_room(rate=600, join_work=0),
        Crowd(
            visitors=3_000,
            arrival=Arrival.parse("burst"),
            minutes=8,
            seed=3,
            rate_changes=((150.0, 300),),
        ),
    )
    data = result.to_json()
    for key in PUSH_KEYS:
        assert data[key] is not None, key
    assert data["change_noticed_seconds_p99"] <= 2.0
    # A connect, a subscribe, and the publishes while each page waited: more than the two.
    assert data["push_operations_per_visitor"] > 2.0
    assert 1.9 <= data["state_fetches_per_visitor"] <= 2.0
    assert data["push_keepalives_per_visitor"] == data["push_connection_minutes_per_visitor"]
    # The older keys stay.
    assert data["noticed_seconds_p50"] is not None and data["origin_ratio"] is not None


def test_simulate_json_carries_the_push_keys() -> None:
    done = CliRunner().invoke(
        cli, ["simulate", "--rate", "600", "--visitors", "500", "--minutes", "2", "--json"]
    )
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    for key in PUSH_KEYS:
        assert key in data, key
    assert data["state_fetches_per_visitor"] >= 1.0


def test_a_page_admitted_as_it_loads_still_opened_its_socket() -> None:
    # Its first /polling answered the admission a moment after the socket went out: a connect,
    # a subscribe and a started minute, and no publish counted for it.
    figures = model([10.0, 10.0], [10.1, 500.0], [(50.0, push.HOLD)]).figures()
    assert figures.connection_minutes == round((1 + 9) / 2, 3)
    assert figures.operations == round((2 + 2 + 1) / 2, 3)
