"""The numbers docs/limits.md states are the code's: the rate's range, the arrival shards, the
concurrency Lambda keeps unreserved, the page's and the mapping template's limits, the
consumers' capacity, the governor's samples, the edge's per-address limit, the page's fetch of
the shared state, and the list prices the cost benchmarks use (bench/prices.py)."""

from __future__ import annotations

from beekeeper.cli.lambda_quota import UNRESERVED_FLOOR
from beekeeper.core import push
from beekeeper.core.settings import (
    DEFAULT_ARRIVAL_SHARDS,
    DEFAULT_CONSUMER_CAPACITY,
    DEFAULT_WAF_LIMIT,
    MAX_RATE,
    MIN_RATE,
)
from beekeeper.room.governor import SAMPLES
from beekeeper.stacks.page import MAPPING_TEMPLATE_LIMIT_BYTES
from beekeeper.waiting_room_site import MAX_PAGE_BYTES
from tests.support.doc_numbers import list_prices, stated_number

DOC = "docs/limits.md"
MILLION = 1_000_000


def number(pattern: str) -> float:
    return stated_number(DOC, pattern)


def test_the_rooms_own_limits() -> None:
    assert number(r"\| the rate \| ([\d,]+) to") == MIN_RATE
    assert number(r"\| the rate \| \d+ to ([\d,]+) visitors a minute") == MAX_RATE
    assert number(r"one per `consumer_capacity` visitors a minute \(([\d,]+) by default") == (
        DEFAULT_CONSUMER_CAPACITY
    )
    assert number(r"(\d+) requests a minute to the sampled URL") == SAMPLES
    assert number(r"must stay under ([\d,]+) bytes") == MAX_PAGE_BYTES
    assert number(r"mapping template limit is (\d+) KB") * 1024 == MAPPING_TEMPLATE_LIMIT_BYTES


def test_what_aws_limits() -> None:
    assert number(r"the account must keep (\d+) unreserved") == UNRESERVED_FLOOR
    assert number(r"\(default (\d+) shards = [\d,]+/s\)") == DEFAULT_ARRIVAL_SHARDS
    assert number(r"default \d+ shards = ([\d,]+)/s") == DEFAULT_ARRIVAL_SHARDS * 1_000
    assert number(r"\(default ([\d,]+) marketing-link requests per 5 minutes") == DEFAULT_WAF_LIMIT
    # A page without its socket: FALLBACK_DOCUMENT_SECONDS, jittered down by up to a quarter.
    fallback = push.FALLBACK_DOCUMENT_SECONDS * (1 - push.FALLBACK_JITTER / 2)
    assert number(r"fetches the shared state about once every (\d+) s") == round(fallback)


def test_what_a_visitor_costs() -> None:
    listed = list_prices()
    assert number(r"a CloudFront request \(\$([\d.]+) per million\)") == (
        round(listed.CLOUDFRONT_HTTPS_REQUEST * MILLION, 2)
    )
    assert number(r"a WAF inspection \(\$([\d.]+) per million\)") == (
        round(listed.WAF_REQUEST * MILLION, 2)
    )
    assert number(r"API Gateway's \$([\d.]+) per million") == (
        round(listed.API_GATEWAY_REST_REQUEST * MILLION, 2)
    )
    assert number(r"the push channel \$([\d.]+) per million operations") == (
        round(listed.APPSYNC_EVENTS_OPERATION * MILLION, 2)
    )
    assert number(r"\$([\d.]+) per million connection-minutes") == (
        round(listed.APPSYNC_EVENTS_CONNECTION_MINUTE * MILLION, 2)
    )
    # A page that had to learn of a hold within 10 s by asking would ask every 10 s: 180 times
    # in 30 minutes, $180 per million visitors at CloudFront's request price alone.
    assert number(r"ask at least every 10 s, (\d+) times in 30 minutes") == 30 * 60 / 10
    assert number(r"request price alone \$(\d+) per million visitors") == round(
        180 * listed.CLOUDFRONT_HTTPS_REQUEST * MILLION
    )
