"""`beekeeper status`: read from the table and queues (moto), shown as text or JSON."""

from __future__ import annotations

import json

from beekeeper.core.polling import eta_seconds
from tests.support.cli_testkit import (
    NOW,
    REGION,
    DeployedRoom,
    Invoke,
    WatchSleep,
    aws_client,
    put_item,
)

MINUTE = int(NOW) // 60


def populate(room: DeployedRoom) -> None:
    table = room.table
    put_item(table, {"pk": "config", "enabled": True, "operator_rate": 600, "rate": 300,
                     "version": 4, "updated_at": int(NOW) - 30})  # fmt: skip
    put_item(table, {"pk": "governor", "state": "throttled", "baseline_mean_ms": 100,
                     "baseline_std_ms": 10, "baseline_at": 1, "updated_at": 2})  # fmt: skip
    put_item(table, {"pk": f"governor#{MINUTE - 2}", "decision": "halve", "mean_ms": 812,
                     "degraded": 0, "rate_before": 600, "rate_after": 300, "ttl": 9})  # fmt: skip
    put_item(table, {"pk": f"governor#{MINUTE - 70}", "decision": "ignored: older than an hour"})
    for shard, n in enumerate((250, 260, 240, 250)):
        put_item(table, {"pk": f"arrivals#{shard}", "n": n})
    put_item(table, {"pk": "admitted", "n": 400})
    for minutes_ago in range(1, 61):
        put_item(table, {"pk": f"minute#{MINUTE - minutes_ago}", "admitted": minutes_ago * 5,
                         "arrivals_total": 1000 - minutes_ago * 50, "rate": 600, "consumers": 1,
                         "quota": 600, "claimed_at": 0, "ttl": 9})  # fmt: skip
    put_item(table, {"pk": f"minute#{MINUTE}", "admitted": 3, "arrivals_total": 960})
    put_item(table, {"pk": f"minute#{MINUTE - 61}", "admitted": 99999})  # outside the hour
    sqs = aws_client("sqs")
    for n in range(3):
        sqs.send_message(QueueUrl=room.outputs["QueueUrl"], MessageBody=f"token-{n}")
    sqs.receive_message(QueueUrl=room.outputs["QueueUrl"], MaxNumberOfMessages=1)
    sqs.send_message(QueueUrl=room.outputs["DeadLetterQueueUrl"], MessageBody="stuck")


def test_json_report_has_every_figure(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    populate(deployed_room)
    result = invoke("status", "sale", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["admitted_per_minute"] == [m * 5 for m in range(60, 0, -1)]
    del report["admitted_per_minute"]
    assert report == {
        "room": "sale",
        "region": REGION,
        "local": False,
        "generated_at": int(NOW),
        "enabled": True,
        "rate": 300,
        "operator_rate": 600,
        "slowed": True,
        "config_version": 4,
        "dynamic_rate_throttling": False,
        "governor_state": "throttled",
        "governor_last_decision": {
            "minute": MINUTE - 2,
            "decision": "halve",
            "mean_ms": 812,
            "rate_before": 600,
            "rate_after": 300,
        },
        "queue_visible": 2,
        "queue_in_flight": 1,
        "dead_letter": 1,
        "arrivals_total": 1000,
        "admitted_total": 400,
        "waiting": 600,
        "last_minute": MINUTE - 1,
        "last_minute_arrivals": 960 - 950,  # between the two claims' snapshots
        "last_minute_admitted": 5,
        "estimated_wait_seconds": 120,  # 600 waiting at 300 per minute
        "chart_first_minute": MINUTE - 60,
    }
    # The one wait formula, shared with the template and the producer (core/polling.py).
    assert report["estimated_wait_seconds"] == eta_seconds(600, 300)


def test_text_report_reads_like_a_dashboard(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    populate(deployed_room)
    result = invoke("status", "sale")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Room sale (eu-west-1): ON"
    assert lines[1] == "Rate: 300 visitors/min, slowed by the governor from the operator's 600"
    assert "Governor: off (dynamic rate throttling is not enabled" in lines[2]
    assert lines[3] == (
        "Queue: 3 messages (2 waiting, 1 being admitted); 1 in the dead-letter queue: look at them"
    )
    assert lines[4] == "Last minute (22:13 UTC): 10 arrivals, 5 admitted"
    assert lines[5] == "So far: 1,000 arrivals, 400 admitted, 600 waiting"
    assert lines[6] == "Estimated wait for a newcomer: about 2 min"
    assert lines[7] == "Admitted per minute, last hour (peak 300):"
    chart = lines[8:13]
    assert len(chart) == 5 and chart[-1].startswith("+-60 min") and chart[-1].endswith("now")
    # Falling admissions: the oldest column is full height, the newest barely there.
    assert chart[0][1] in "█#" and chart[3][60] in "▁.:"


def test_an_untouched_room_is_on_at_the_settings_rate(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    report = json.loads(invoke("status", "sale", "--json").output)
    assert (report["enabled"], report["rate"], report["operator_rate"]) == (True, 600, 600)
    assert (report["waiting"], report["estimated_wait_seconds"]) == (0, 0)
    assert report["governor_state"] is None and report["last_minute_arrivals"] is None
    assert report["admitted_per_minute"] == [0] * 60
    text = invoke("status", "sale").output
    assert "Estimated wait for a newcomer: none: nobody is waiting" in text
    assert ": arrivals not known yet, 0 admitted\n" in text


def test_an_off_room_has_no_estimated_wait(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    assert invoke("off", "sale").exit_code == 0
    text = invoke("status", "sale").output
    assert text.startswith("Room sale (eu-west-1): OFF")
    assert "none: the room is off, visitors go straight to the origin" in text


def test_watch_refreshes_until_ctrl_c(
    invoke: Invoke, deployed_room: DeployedRoom, sleep: WatchSleep
) -> None:
    sleep.rounds = 2
    result = invoke("status", "sale", "--watch", "--interval", "7", "--json")
    assert result.exit_code == 0, result.output
    reports = [json.loads(line) for line in result.output.splitlines()]
    assert [r["generated_at"] for r in reports] == [int(NOW), int(NOW) + 7, int(NOW) + 14]
    assert sleep.slept == [7, 7]


def test_watch_as_text_separates_refreshes(
    invoke: Invoke, deployed_room: DeployedRoom, sleep: WatchSleep
) -> None:
    sleep.rounds = 1
    result = invoke("status", "sale", "--watch")
    assert result.exit_code == 0
    assert result.output.count("Room sale (eu-west-1): ON") == 2


def test_a_bad_interval_is_a_usage_error(invoke: Invoke, deployed_room: DeployedRoom) -> None:
    result = invoke("status", "sale", "--watch", "--interval", "0")
    assert result.exit_code == 2
    assert "--interval" in result.output
