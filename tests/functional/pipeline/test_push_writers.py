"""Every writer of the room's state tells waiting pages once per change (room/push.py): the
operator's commands, the trigger, the consumers (capacity mode's full / not full) and the
governor, against moto, with a publisher double. A failed publish fails nothing and is sent
again by the next status write."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from beekeeper.apigateway.velocity import RenderInput, render
from beekeeper.cli.room_control import RoomControl
from beekeeper.core import push, telemetry
from beekeeper.core.datamodel import STATE_KEY, Token
from beekeeper.core.routes import route
from beekeeper.core.settings import RoomSettings
from beekeeper.room.consumer import run_consumer
from beekeeper.room.emf import MetricSink
from beekeeper.room.push import StatePush
from beekeeper.room.room_state import write_config
from beekeeper.room.trigger import run_trigger
from beekeeper.vtl import load_template, template_values
from tests.support.pipeline import Aws, FakeClock, LongPollsOnTheClock, room
from tests.support.push_double import RecordingPublisher


class Counts:
    """A run's metrics sink that keeps the counts (our own MetricSink interface)."""

    def __init__(self) -> None:
        self.counted: dict[str, int] = {}

    def count(self, metric: telemetry.Metric, value: int = 1) -> None:
        self.counted[metric.name] = self.counted.get(metric.name, 0) + value

    def level(self, metric: telemetry.Metric, value: float) -> None:
        pass

    def sample(self, metric: telemetry.Metric, value: float) -> None:
        pass

    def flush_ended(self) -> None:
        pass

    def flush(self) -> None:
        pass


def pushing(
    settings: RoomSettings,
    publisher: RecordingPublisher,
    clock: FakeClock | None = None,
    metrics: MetricSink | None = None,
    warnings: list[str] | None = None,
) -> StatePush:
    return StatePush(
        settings,
        publisher,
        metrics=metrics or Counts(),
        sleep=clock.sleep if clock is not None else None,
        warn=(warnings if warnings is not None else []).append,
    )


def control(aws: Aws, clock: FakeClock, publisher: RecordingPublisher, **kw: Any) -> RoomControl:
    settings = room()
    return RoomControl(
        aws.dynamodb,
        aws.table,
        settings,
        clock=clock,
        pauses=clock.pauses(),
        push=pushing(settings, publisher, clock, **kw),
    )


def minute(aws: Aws, clock: FakeClock, publisher: RecordingPublisher, **settings: Any) -> None:
    """The trigger's run of this minute, publishing with `publisher`."""
    run_trigger(
        settings=room(**settings),
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        invoke_consumer=lambda _payload: None,
        clock=clock,
        pauses=clock.pauses(),
        push=pushing(room(**settings), publisher),
    )


def deployed(aws: Aws, clock: FakeClock) -> RecordingPublisher:
    """A room whose trigger has run its first minute (its first status: a resync), a few
    seconds ago."""
    publisher = RecordingPublisher()
    minute(aws, clock, publisher)
    assert publisher.reasons == ["resync"]
    publisher.published.clear()
    clock.now += 5
    return publisher


def fetched(aws: Aws, now_ms: int) -> dict[str, Any]:
    """GET /state as API Gateway answers it from the state copy now."""
    values = template_values(table_name=aws.table, origin=room().origin)
    template = load_template(route("state").templates().response_template, values)
    body = json.dumps({"Item": aws.item(STATE_KEY)})
    return json.loads(
        render(template, RenderInput(body=body, context={"requestTimeEpoch": now_ms}))
    )


def test_each_operator_command_tells_the_pages_once_what_it_changed(
    aws: Aws, clock: FakeClock
) -> None:
    publisher = deployed(aws, clock)
    operator = control(aws, clock, publisher)
    config = operator.hold()
    assert publisher.reasons == ["hold"]
    (channel, [event]), *_ = publisher.published
    assert channel == "/room/shop"
    message = json.loads(event)
    # The message is the document GET /state answers, with the publish's sequence number: the
    # hold announced, the line moving until its moment (the newest point's until).
    assert message["doc"] == fetched(aws, message["seq"]) | {"now": message["doc"]["now"]}
    assert message["doc"]["state"] == "open" and message["doc"]["seq"] == message["seq"]
    newest = message["doc"]["history"].split(" ")[-1].split(":")
    assert int(newest[-1]) == config.held_from * 1000 > message["seq"]
    operator.hold()  # no change: nothing to tell
    assert publisher.reasons == ["hold"]
    for step in (
        operator.resume,
        lambda: operator.close("Sold out"),
        operator.resume,
        lambda: operator.set_rate(30),
        lambda: operator.set_enabled(False),
        lambda: operator.set_enabled(True),
        lambda: operator.set_schedule(int(clock.now) + 3600),
    ):
        clock.now += 5
        step()
    assert publisher.reasons == [
        "hold", "resume", "close", "resume", "rate", "off", "on", "prequeue",
    ]  # fmt: skip
    close = publisher.messages[2]["doc"]
    assert (close["state"], close["message"]) == ("closed", "Sold out")
    sequence = [m["seq"] for m in publisher.messages]
    assert sequence == sorted(sequence) and len(set(sequence)) == len(sequence)
    # A page that fetches the shared state now keeps the newest push's document.
    assert fetched(aws, int(clock.now * 1000))["seq"] == sequence[-1]


def test_a_hold_is_told_when_announced_and_again_when_it_comes(aws: Aws, clock: FakeClock) -> None:
    publisher = deployed(aws, clock)
    config = control(aws, clock, publisher).hold()
    # The next writer of the status once the hold has come: the next minute's trigger.
    clock.now = (config.held_from // 60 + 1) * 60 + 0.1
    minute(aws, clock, publisher)
    assert publisher.reasons == ["hold", "hold"]
    announced, held = (m["doc"] for m in publisher.messages)
    assert (announced["state"], held["state"]) == ("open", "paused")


def test_two_commands_in_one_second_are_published_a_second_apart(
    aws: Aws, clock: FakeClock
) -> None:
    publisher = deployed(aws, clock)
    operator = control(aws, clock, publisher)
    operator.hold()
    clock.now += 0.25
    operator.close("Sold out")
    assert publisher.reasons == ["hold", "close"]
    first, second = (m["seq"] for m in publisher.messages)
    assert second - first == 1000 and clock.slept == [0.75]


def test_a_refused_publish_fails_nothing_and_goes_again_with_the_next_status(
    aws: Aws, clock: FakeClock
) -> None:
    publisher = deployed(aws, clock)
    publisher.refuse = "the channel is throttled"
    warnings: list[str] = []
    counts = Counts()
    operator = control(aws, clock, publisher, warnings=warnings, metrics=counts)
    config = operator.hold()
    assert config.held  # the command did its work
    assert publisher.refused == 1 and counts.counted == {telemetry.PUSH_FAILURES.name: 1}
    assert "hold" in warnings[0] and "the channel is throttled" in warnings[0]
    # The next status write (the trigger's, a minute later) publishes what pages missed.
    publisher.refuse = ""
    clock.now += 60
    minute(aws, clock, publisher)
    assert publisher.reasons == ["resync"]
    assert publisher.messages[0]["doc"]["state"] == "paused"


def test_the_trigger_resyncs_every_five_minutes_and_publishes_the_draw(
    aws: Aws, clock: FakeClock
) -> None:
    publisher = RecordingPublisher()
    start = datetime.fromtimestamp(int(clock.now // 60 + 3) * 60, UTC).isoformat()
    reasons_by_minute = []
    for _minute in range(12):
        minute(aws, clock, publisher, starts_at=start)
        reasons_by_minute.append(list(publisher.reasons))
        publisher.published.clear()
        clock.now += 60
    # The first status is a resync; the start's draw is published the minute it is made; then
    # nothing until five minutes after the last publish.
    assert reasons_by_minute[0] == ["resync"]
    drawn_at = next(i for i, reasons in enumerate(reasons_by_minute) if reasons == ["draw"])
    assert 2 <= drawn_at <= 4
    assert reasons_by_minute[drawn_at + 1 : drawn_at + 5] == [[]] * 4
    assert reasons_by_minute[drawn_at + 5] == ["resync"]


def tokens(count: int) -> list[str]:
    return [str(Token(f"{i:022d}", i)) for i in range(1, count + 1)]


def test_a_full_shop_is_published_at_most_once_a_minute(aws: Aws, clock: FakeClock) -> None:
    settings = room(rate=600, max_inside=3, session_minutes=5.0, claim_minutes=2.0)
    publisher = RecordingPublisher()
    aws.send(*tokens(5))
    aws.dynamodb.update_item(
        TableName=aws.table,
        Key={"pk": {"S": "arrivals#0"}},
        UpdateExpression="ADD n :c",
        ExpressionAttributeValues={":c": {"N": "5"}},
    )
    invoked: list[dict[str, Any]] = []
    run_trigger(
        settings=settings,
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        invoke_consumer=invoked.append,
        clock=clock,
        pauses=clock.pauses(),
        push=pushing(settings, publisher),
    )
    assert publisher.reasons == ["resync"]
    for payload in invoked:
        run_consumer(
            payload,
            settings=settings,
            table=aws.table,
            queue_url=aws.queue_url,
            dynamodb=aws.dynamodb,
            sqs=LongPollsOnTheClock(aws.sqs, clock, aws.queue_url),
            clock=clock,
            sleep=clock.sleep,
            pauses=clock.pauses(),
            push=pushing(settings, publisher),
        )
    # The shop filled within seconds of the resync: pages are told once a minute has passed
    # since it, by the next minute's first status.
    assert publisher.reasons == ["resync"]
    clock.now = (clock.now // 60 + 1) * 60
    run_trigger(
        settings=settings,
        table=aws.table,
        queue_url=aws.queue_url,
        dynamodb=aws.dynamodb,
        sqs=aws.sqs,
        invoke_consumer=lambda _payload: None,
        clock=clock,
        pauses=clock.pauses(),
        push=pushing(settings, publisher),
    )
    assert publisher.reasons == ["resync", "full"]
    full = publisher.messages[1]
    assert full["doc"]["full"] is True
    assert full["seq"] - publisher.messages[0]["seq"] >= push.FULL_EVERY_SECONDS * 1000


def test_the_governors_new_rate_is_published(aws: Aws, clock: FakeClock) -> None:
    from tests.functional.pipeline.test_governor_run import BASELINE_CHECKS, run, shop

    publisher = RecordingPublisher()
    settings = room(rate=1000, dynamic_rate_throttling=True)
    RoomControl(
        aws.dynamodb,
        aws.table,
        settings,
        clock=clock,
        pauses=clock.pauses(),
        push=pushing(settings, publisher, clock),
    ).set_enabled(True)
    for _ in range(BASELINE_CHECKS + 1):
        run(aws, clock, shop(100.0), push=pushing(settings, publisher, clock))
    assert publisher.reasons == ["resync"]  # a baseline and a pass change nothing pages see
    decision = run(aws, clock, shop(100.0, failed=6), push=pushing(settings, publisher, clock))
    assert (decision.rate_before, decision.rate_after) == (1000, 500)
    assert publisher.reasons == ["resync", "rate"]
    rate = publisher.messages[1]["doc"]
    assert (rate["rate"], rate["slowed"]) == (500, True)


@pytest.mark.parametrize("command", ["hold", "resume"])
def test_a_room_without_a_channel_marks_nothing(aws: Aws, clock: FakeClock, command: str) -> None:
    operator = RoomControl(aws.dynamodb, aws.table, room(), clock=clock, pauses=clock.pauses())
    getattr(operator, command)()
    item: Any = aws.item(STATE_KEY)
    assert "push_seq" not in item and "push_told" not in item
    assert fetched(aws, int(clock.now * 1000))["seq"] == 0


def test_a_consumer_publishes_a_change_it_had_to_hold_back_at_its_next_tick(
    aws: Aws, clock: FakeClock
) -> None:
    """A change within a second of the last publish waits; the periodic consumer's next tick
    publishes it, though the status copies already say it (nothing else changed)."""
    from beekeeper.room.status_publisher import STATUS_EVERY_SECONDS, StatusPublisher

    publisher = deployed(aws, clock)
    settings = room()
    control(aws, clock, publisher).hold()
    assert publisher.reasons == ["hold"]
    # A moment later the event is closed (by a writer that publishes nothing itself), and a
    # consumer writes the status: pages were told something 0.3 s ago, so it holds back.
    clock.now += 0.3
    write_config(aws.dynamodb, aws.table, settings, now=clock.now, closed=True, message="Over")
    status = StatusPublisher(
        aws.dynamodb,
        aws.table,
        settings,
        periodic=True,
        pauses=clock.pauses(),
        push=pushing(settings, publisher),
    )
    status.publish(clock.now)
    assert publisher.reasons == ["hold"]
    clock.now += STATUS_EVERY_SECONDS
    status.tick(clock.now)
    assert publisher.reasons == ["hold", "close"]
    assert publisher.messages[-1]["doc"]["message"] == "Over"
