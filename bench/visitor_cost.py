"""Benchmark: what a visitor's whole journey costs, edge included, at list prices.

    .venv/bin/python bench/visitor_cost.py [--json]

Every request of the journey, from what the code sends:

- the marketing link (GET /beekeeper through the edge to the producer): its AWS requests per
  new visitor, and the consumers' and triggers' per admission, counted by request unit in a
  simulated run of the real producer, trigger and consumers (`beekeeper simulate`, 6,000/min,
  20,000 visitors); Lambda time estimated (below);
- the work a place costs (a deployed room's default `join_work`): the bare link's challenge
  from the edge's shared copy (core/join_work.py), and the work page (GET /work from the
  edge), once each;
- the page (GET /room from the edge: its gzipped size from render_page), once;
- the push channel (AppSync Events) and the shared state (GET /state from the edge), as the
  page uses them: the simulator's own accounting (simulator/push.py, the figures `beekeeper
  simulate --json` reports as push_connection_minutes_per_visitor, push_operations_per_visitor,
  push_keepalives_per_visitor and state_fetches_per_visitor) run for one page through the
  wait, with the room publishing CHANGES changes over a 30-minute event (an assumption: a hold
  and its resume, rate changes, a capacity room filling and emptying) and a full copy whenever
  RESYNC_SECONDS pass without a publish (core/push.py's rule). A watched tab keeps its
  socket and fetches the document on load and once to catch up; a background tab is hidden at
  once, closes its socket after HIDDEN_CLOSE_SECONDS and then fetches the document as a
  hidden page without its socket does (core/push.py's hidden_document_delay: a minute before
  the predicted turn, at least every 15 minutes). Keep-alives are priced both ways (AWS's
  pricing page does not settle whether they are billed operations);
- the page's own /polling near its turn (`visitor_polls_per_admission` from the same simulated
  run, the page's rule run for every visitor): through the edge to API Gateway, whose template
  reads a 3-key BatchGetItem (rendered here from the registry's template);
- the shop's ticket check (GET /client?token=, one conditional UpdateItem), once, or none when
  the shop checks the ticket offline (its signature against /jwks.json).

Every request at the edge is a CloudFront request and a WAF inspection (the web ACL inspects
every request to the distribution); every request past it an API Gateway request and a second
WAF inspection (the origin lock, the stage's regional web ACL); each row also says what a room
deployed without the edge's web ACL (`waf_requests_per_5_minutes` 0) pays. The edge's
own misses (a few a second for the whole room, core/polling_load.py) and the fixed monthly
charges (two web ACLs with one rule each, $12) are not per visitor and are listed apart.
Prices: bench/prices.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
from collections import Counter
from typing import Any, ClassVar

from prices import (
    API_GATEWAY_REST_REQUEST,
    APPSYNC_EVENTS_CONNECTION_MINUTE,
    APPSYNC_EVENTS_OPERATION,
    APPSYNC_GB_OUT,
    CLOUDFRONT_GB_OUT,
    CLOUDFRONT_HTTPS_REQUEST,
    DYNAMODB_READ_UNIT,
    DYNAMODB_WRITE_UNIT,
    LAMBDA_ARM_GB_SECOND,
    LAMBDA_REQUEST,
    MILLION,
    SQS_REQUEST,
    WAF_REQUEST,
    WAF_RULE_MONTH,
    WAF_WEB_ACL_MONTH,
)

from beekeeper.apigateway.velocity import RenderInput, render
from beekeeper.core import push, shared_state
from beekeeper.core.polling_load import edge_misses_per_second
from beekeeper.core.routes import route
from beekeeper.core.settings import RoomSettings
from beekeeper.room.cookies import COOKIE_NAME
from beekeeper.room.room_state import RoomConfig, RoomSnapshot, status_item
from beekeeper.simulator import run as simulation
from beekeeper.simulator.push import PushChannelModel, PushFigures
from beekeeper.simulator.run import Arrival, Crowd, simulated_room
from beekeeper.vtl import load_template, template_values
from beekeeper.waiting_room_site import render_page
from beekeeper.waiting_room_site.work_page import render_work_page

SETTINGS = RoomSettings(
    name="sale",
    display_name="The Sale",
    region="us-east-1",
    origin="https://shop.example.com",
    rate=6_000,
)
# Response headers CloudFront sends with each answer (status line, content type, cache
# control, date, age, via, x-cache, x-amz-cf-pop/id...): an estimate, in bytes.
HEADER_BYTES = 450
# Lambda time, estimated (not measured here): the producer's invocation, and a consumer's
# minute (it paces its quota over the minute, so it runs about that long at any load); both
# functions have 512 MB (stacks/functions.py's SPECS; not imported: that module loads the CDK).
PRODUCER_SECONDS = 0.03
CONSUMER_SECONDS_PER_MINUTE = 60.0
FUNCTION_GB = 0.5
WAITS = (("30 minutes", 1_800.0), ("60 s", 60.0))
# State changes published over a 30-minute event besides the full copies (an assumption).
CHANGES = 10
EVENT_SECONDS = 1_800.0
# A keep-alive frame's bytes on the wire, and a connection's handshake (estimates).
KEEPALIVE_BYTES = 30
HANDSHAKE_BYTES = 1_000


# -- what the code sends -----------------------------------------------------------------


def publishes(wait: float) -> list[tuple[float, str]]:
    """What the room publishes while a visitor waits `wait` s, by its rule (core/push.py): the
    CHANGES of a 30-minute event spread over it (the first a second after the page subscribed:
    a short wait gets one), and a full copy whenever RESYNC_SECONDS pass without a publish."""
    every = EVENT_SECONDS / CHANGES
    changes = [k * every + 1.0 for k in range(math.ceil(wait / every))]
    sent: list[tuple[float, str]] = []
    last = 0.0
    for change in [*changes, math.inf]:
        while last + push.RESYNC_SECONDS < min(change, wait):
            last += push.RESYNC_SECONDS
            sent.append((last, push.RESYNC))
        if change < wait:
            sent.append((change, push.HOLD))
            last = change
    return sent


def channel(wait: float, *, watched: bool) -> tuple[PushFigures, int]:
    """One page's channel figures through a wait (simulator/push.py's accounting), and the
    document fetches of a background tab once its socket is closed."""
    socket_until = wait if watched else min(wait, push.HIDDEN_CLOSE_SECONDS)
    sent = publishes(wait)
    figures = PushChannelModel(
        loads=[1.0],
        stops=[1.0 + socket_until],
        publishes=[1.0 + t for t, _ in sent],
        reasons=[why for _, why in sent],
        rng=random.Random(1),
        origin_time=0.0,
        seconds=int(wait) + 10,
        catch_up=watched,
    ).figures()
    hidden = 0
    now = float(push.HIDDEN_CLOSE_SECONDS)
    while not watched and now < wait:
        now += push.hidden_document_delay(now=now, own_poll_at=wait)
        hidden += now < wait
    return figures, hidden


def document_fetches(wait: float, *, watched: bool) -> float:
    """The shared state's fetches from loading the page to the turn `wait` later."""
    figures, hidden = channel(wait, watched=watched)
    return figures.state_fetches + hidden


def page_bytes() -> int:
    return len(gzip.compress(render_page(SETTINGS).encode())) + HEADER_BYTES


def work_page_bytes() -> int:
    return len(gzip.compress(render_work_page(SETTINGS).encode())) + HEADER_BYTES


def state_bytes() -> int:
    config = RoomConfig.from_item(None, SETTINGS)
    snapshot = RoomSnapshot(config=config, shard_counts=(600_000, 600_000), admitted_total=400_000)
    item = status_item(snapshot, 0, 1_800_000_000.0)
    template = load_template(
        route("state").vtl.response_template,
        template_values(table_name="beekeeper-sale", origin=SETTINGS.origin),
    )
    body = render(
        template,
        RenderInput(
            body=json.dumps({"Item": item}), context={"requestTimeEpoch": 1_800_000_001_000}
        ),
    )
    return len(gzip.compress(body.encode())) + HEADER_BYTES


def message_bytes() -> int:
    """A pushed message on the wire: the shared document in the channel's envelope, in a
    `data` frame (uncompressed: AppSync sends the text as published)."""
    config = RoomConfig.from_item(None, SETTINGS)
    snapshot = RoomSnapshot(config=config, shard_counts=(600_000, 600_000), admitted_total=400_000)
    item = status_item(snapshot, 0, 1_800_000_000.0)
    doc = shared_state.document(item, now_ms=1_800_000_001_000, origin=SETTINGS.origin)
    event = push.message(1_800_000_001_000, push.RESYNC, doc)
    return len(json.dumps({"type": "data", "id": "room", "event": event})) + 50


def polling_read_units() -> float:
    """Read units of one /polling: the keys its request template reads (eventually
    consistent reads of items under 4 KB: half a unit each)."""
    template = load_template(
        route("polling").vtl.request_template("rate"),
        template_values(table_name="beekeeper-sale", origin=SETTINGS.origin),
    )
    cookie = {"Cookie": f"{COOKIE_NAME}=Ab0_-{'x' * 17}.1234"}
    request = json.loads(render(template, RenderInput(headers=cookie)))
    (keys,) = (table["Keys"] for table in request["RequestItems"].values())
    consistent = any(table.get("ConsistentRead") for table in request["RequestItems"].values())
    return len(keys) * (1.0 if consistent else 0.5)


class UnitCounted(simulation.Counted):
    """The simulation's per-role client, also counting request units as AWS bills them."""

    units: ClassVar[Counter[tuple[str, str]]] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = super().__getattr__(name)
        role = self._role

        def counted(**kwargs: Any) -> Any:
            units = UnitCounted.units
            if name == "get_item":
                units[role, "read"] += 1 if kwargs.get("ConsistentRead") else 0.5
            elif name == "batch_get_item":
                for request in kwargs["RequestItems"].values():
                    units[role, "read"] += (1 if request.get("ConsistentRead") else 0.5) * len(
                        request["Keys"]
                    )
            elif name in ("put_item", "update_item", "delete_item"):
                units[role, "write"] += 1  # a failed condition is billed too
            elif name == "batch_write_item":
                units[role, "write"] += sum(len(r) for r in kwargs["RequestItems"].values())
            elif name in ("query", "scan"):
                units[role, "read"] += 0.5
            else:
                units[role, "sqs"] += 1
            return method(**kwargs)

        return counted


def pipeline() -> dict[str, float]:
    """The room's own AWS requests per visitor (admitted), from a simulated run."""
    UnitCounted.units.clear()
    real = simulation.Counted
    simulation.Counted = UnitCounted  # type: ignore[misc]
    try:
        visitors, rate = 20_000, 6_000
        result = simulation.simulate(
            simulated_room(rate=rate, join_work=0),
            Crowd(visitors=visitors, arrival=Arrival.parse("uniform:2"), minutes=5, seed=1),
        )
    finally:
        simulation.Counted = real  # type: ignore[misc]
    admitted = sum(result.admitted_per_minute)
    units = UnitCounted.units

    def per(role: str, kind: str) -> float:
        return units[role, kind] / admitted

    consumer_minutes = sum(result.consumers_per_minute)
    return {
        "producer_write": per("producer", "write"),
        "producer_read": per("producer", "read"),
        "producer_sqs": per("producer", "sqs"),
        "admission_write": per("admission", "write"),
        "admission_read": per("admission", "read"),
        "admission_sqs": per("admission", "sqs"),
        "consumer_gb_seconds": consumer_minutes
        * CONSUMER_SECONDS_PER_MINUTE
        * FUNCTION_GB
        / admitted,
        "own_polls": result.visitor_polls_per_admission or 1.0,
    }


# -- the journey at list prices ----------------------------------------------------------


def edge_request(count: float, size: float) -> dict[str, float]:
    return {
        "cloudfront": count * CLOUDFRONT_HTTPS_REQUEST,
        "edge_waf": count * WAF_REQUEST,
        "transfer": count * size / 1e9 * CLOUDFRONT_GB_OUT,
    }


def journey(
    wait: float,
    *,
    watched: bool,
    client: bool,
    room: dict[str, float],
    sizes: dict[str, float],
    keepalives_billed: bool = False,
) -> dict[str, dict[str, float]]:
    """USD per visitor, by request and by service."""
    figures, hidden = channel(wait, watched=watched)
    fetches = figures.state_fetches + hidden
    deliveries = figures.operations - 2  # beyond the connect and the subscribe
    pushed_bytes = (
        deliveries * sizes["message"]
        + figures.keepalives * KEEPALIVE_BYTES
        + HANDSHAKE_BYTES * (figures.operations > 0)
    )
    polls = room["own_polls"]
    producer_lambda = LAMBDA_REQUEST + PRODUCER_SECONDS * FUNCTION_GB * LAMBDA_ARM_GB_SECOND
    parts: dict[str, dict[str, float]] = {
        "marketing link (/beekeeper, the producer)": {
            **edge_request(1, sizes["redirect"]),
            "api_gateway": API_GATEWAY_REST_REQUEST,
            "lambda": producer_lambda,
            "dynamodb": room["producer_write"] * DYNAMODB_WRITE_UNIT
            + room["producer_read"] * DYNAMODB_READ_UNIT,
            "sqs": room["producer_sqs"] * SQS_REQUEST,
        },
        "admission (trigger, consumers)": {
            "lambda": room["consumer_gb_seconds"] * LAMBDA_ARM_GB_SECOND,
            "dynamodb": room["admission_write"] * DYNAMODB_WRITE_UNIT
            + room["admission_read"] * DYNAMODB_READ_UNIT,
            "sqs": room["admission_sqs"] * SQS_REQUEST,
        },
        "the page (/room, from the edge)": edge_request(1, sizes["page"]),
        f"the shared state (/state, {fetches:g} fetches)": edge_request(fetches, sizes["state"]),
        f"the push channel ({figures.operations:g} operations, "
        f"{figures.connection_minutes:g} connection-minutes)": {
            "appsync_operations": figures.operations * APPSYNC_EVENTS_OPERATION,
            "appsync_connection_minutes": figures.connection_minutes
            * APPSYNC_EVENTS_CONNECTION_MINUTE,
            "appsync_transfer": pushed_bytes / 1e9 * APPSYNC_GB_OUT,
        },
        f"own /polling ({polls:.2f})": {
            **edge_request(polls, sizes["answer"]),
            "api_gateway": polls * API_GATEWAY_REST_REQUEST,
            "dynamodb": polls * sizes["polling_read_units"] * DYNAMODB_READ_UNIT,
        },
    }
    if SETTINGS.join_work:
        # A place costs work (the default): the bare link's challenge is the edge's shared copy
        # (its misses, a few a second for the whole room, are not per visitor), and so is the
        # work page.
        work_page = edge_request(1, sizes["work_page"])
        parts["the work (the challenge and /work, from the edge)"] = {
            k: v + work_page[k] for k, v in edge_request(1, sizes["redirect"]).items()
        }
    if client:
        parts["ticket check (/client, online)"] = {
            **edge_request(1, sizes["answer"]),
            "api_gateway": API_GATEWAY_REST_REQUEST,
            "dynamodb": DYNAMODB_WRITE_UNIT,
        }
    if keepalives_billed:
        parts[f"keep-alives ({figures.keepalives:g}, if billed)"] = {
            "appsync_operations": figures.keepalives * APPSYNC_EVENTS_OPERATION
        }
    # Every request past the edge is inspected again by the origin lock, the API stage's
    # regional web ACL (stacks/api.py): one more WAF request per API Gateway request.
    for costs in parts.values():
        if "api_gateway" in costs:
            requests = costs["api_gateway"] / API_GATEWAY_REST_REQUEST
            costs["origin_lock_waf"] = requests * WAF_REQUEST
    return parts


def table(room: dict[str, float], sizes: dict[str, float]) -> list[dict[str, Any]]:
    rows = []
    for label, wait in WAITS:
        for watched in (True, False):
            for client in (True, False):
                parts = journey(wait, watched=watched, client=client, room=room, sizes=sizes)
                per_request = {name: sum(costs.values()) * MILLION for name, costs in parts.items()}
                total = sum(per_request.values())
                billed = journey(
                    wait,
                    watched=watched,
                    client=client,
                    room=room,
                    sizes=sizes,
                    keepalives_billed=True,
                )
                total_billed = sum(sum(costs.values()) for costs in billed.values()) * MILLION
                figures, hidden = channel(wait, watched=watched)
                by_service: Counter[str] = Counter()
                for costs in parts.values():
                    for service, usd in costs.items():
                        by_service[service] += usd * MILLION
                rows.append(
                    {
                        "wait": label,
                        "tab": "watched" if watched else "background",
                        "client": "online" if client else "offline",
                        "usd_per_million": round(total, 2),
                        "usd_per_million_keepalives_billed": round(total_billed, 2),
                        # A room deployed without the per-address rule (no edge web ACL:
                        # waf_requests_per_5_minutes 0) pays no edge WAF inspections.
                        "usd_per_million_without_edge_waf": round(
                            total - by_service["edge_waf"], 2
                        ),
                        "by_request": {k: round(v, 2) for k, v in per_request.items()},
                        "by_service": {k: round(v, 2) for k, v in by_service.items()},
                        "document_fetches": document_fetches(wait, watched=watched),
                        "push_operations": figures.operations,
                        "push_connection_minutes": figures.connection_minutes,
                        "push_keepalives": figures.keepalives,
                        "state_fetches": round(figures.state_fetches + hidden, 3),
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    sizes = {
        "page": page_bytes(),
        "work_page": work_page_bytes(),
        "state": state_bytes(),
        "answer": 300 + HEADER_BYTES,  # a /polling or /client answer: a few hundred bytes
        "redirect": 200 + HEADER_BYTES,  # the marketing link's 302 with its cookie
        "polling_read_units": polling_read_units(),
        "message": message_bytes(),
    }
    room = pipeline()
    rows = table(room, sizes)
    misses = edge_misses_per_second()
    fixed = {
        "edge_misses_per_hour_usd": round(misses * 3600 * API_GATEWAY_REST_REQUEST, 3),
        "waf_per_month_usd": 2 * (WAF_WEB_ACL_MONTH + WAF_RULE_MONTH),
    }
    if args.json:
        print(json.dumps({"sizes": sizes, "room": room, "rows": rows, "fixed": fixed}, indent=2))
        return 0
    print(
        f"sizes (gzipped, with ~{HEADER_BYTES} B of headers): page {sizes['page']:,} B, "
        f"shared state {sizes['state']:,} B; /polling reads {sizes['polling_read_units']} units"
    )
    print(
        "room, per admitted visitor: "
        + ", ".join(f"{k} {v:.3f}" for k, v in room.items())
        + f"; a pushed message {sizes['message']:,} B"
    )
    print(
        "\n| wait | tab | /client | per million visitors | keep-alives billed "
        "| without the edge's WAF | dominated by |"
    )
    print("|---|---|---|---:|---:|---:|---|")
    for row in rows:
        top = max(row["by_request"].items(), key=lambda kv: kv[1])
        share = top[1] / row["usd_per_million"]
        print(
            f"| {row['wait']} | {row['tab']} | {row['client']} | "
            f"${row['usd_per_million']:,.2f} | ${row['usd_per_million_keepalives_billed']:,.2f} | "
            f"${row['usd_per_million_without_edge_waf']:,.2f} | {top[0]}: {share:.0%} |"
        )
    for row in rows:
        if row["client"] == "online":
            print(f"\n{row['wait']}, {row['tab']} tab, /client online, per million visitors:")
            for name, usd in sorted(row["by_request"].items(), key=lambda kv: -kv[1]):
                print(f"  {name}: ${usd:,.2f}")
            print(
                "  by service: "
                + ", ".join(
                    f"{k} ${v:,.2f}"
                    for k, v in sorted(row["by_service"].items(), key=lambda kv: -kv[1])
                )
            )
    print(
        f"\nnot per visitor: the edge's misses, ${fixed['edge_misses_per_hour_usd']} an hour of "
        f"API Gateway while pages wait; two web ACLs with a rule each, "
        f"${fixed['waf_per_month_usd']:.0f} a month"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
