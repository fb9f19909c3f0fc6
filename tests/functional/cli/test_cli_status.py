"""`beekeeper status`: read from the table and queues (moto), shown as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

from beekeeper.core.polling import eta_seconds
from beekeeper.room.governor_records import Decision, GovernorState, log_item
from beekeeper.room.governor_stats import Baseline
from tests.support.cli_testkit import (
    NOW,
    REGION,
    DeployedRoom,
    Invoke,
    WatchSleep,
    aws_client,
    put_item,
    redeploy,
    table_client,
    write_deployment,
)

MINUTE = int(NOW) // 60


def decision(minutes_ago: int, kind: str, reason: str, before: int, after: int) -> Decision:
    return Decision(
        at=NOW - minutes_ago * 60 + 25.5, decision=kind, reason=reason, rate_before=before,
        rate_after=after, samples=60, errors=0, median_ms=212.0, p90_ms=340.0, mean_ms=230.1,
        slow_above_ms=125.0,
    )  # fmt: skip


DECISIONS = [  # oldest first, as the governor keeps them
    decision(9, "pass", "healthy", 600, 600),
    *(decision(m, "pass", "healthy", 600, 600) for m in (8, 7, 6, 5)),
    decision(3, "hold", "slow: median over the baseline's limit; the next slow check halves "
             "the rate", 600, 600),
    decision(2, "halve", "slow 2 checks in a row: median over the baseline's limit", 600, 300),
]  # fmt: skip


def populate(room: DeployedRoom) -> None:
    table = room.table
    put_item(table, {"pk": "config", "enabled": True, "operator_rate": 600, "rate": 300,
                     "version": 4, "updated_at": int(NOW) - 30})  # fmt: skip
    baseline = Baseline(median_ms=100.0, spread=0.3, samples=300)
    state = GovernorState("throttled", 4, 600, baseline, checks_since_baseline=12)
    table_client().put_item(TableName=table, Item=state.to_item(NOW - 60))
    table_client().put_item(TableName=table, Item=log_item(DECISIONS))
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
    # The last hour, this minute included: 59 whole minutes and the one under way.
    assert report.pop("admitted_per_minute") == [m * 5 for m in range(59, 0, -1)] + [3]
    assert report.pop("arrivals_per_minute") == [50] * 58 + [960 - 950, 1000 - 960]
    assert len(report.pop("waiting_per_minute")) == 60
    # The room's public address: its edge, as recorded at the deploy.
    assert report.pop("public_url") == "https://d111111abcdef8.cloudfront.net"
    decisions = report["governor_decisions"]
    newest = {
        "at": NOW - 120 + 25.5,
        "minute": MINUTE - 2,
        "decision": "halve",
        "reason": "slow 2 checks in a row: median over the baseline's limit",
        "rate_before": 600,
        "rate_after": 300,
        "samples": 60,
        "errors": 0,
        "median_ms": 212.0,
        "p90_ms": 340.0,
        "mean_ms": 230.1,
        "slow_above_ms": 125.0,
    }
    assert decisions[0] == newest  # the last five, newest first
    assert [d["minute"] for d in decisions] == [MINUTE - m for m in (2, 3, 5, 6, 7)]
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
        "governor_sampled_url": "https://shop.example/sale",
        "governor_slow_ms": 0,
        "governor_baseline_median_ms": 100.0,
        "governor_last_decision": newest,
        "governor_decisions": decisions,
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
        "chart_first_minute": MINUTE - 59,
        # Capacity mode's figures: a rate-mode room has no cap and nobody counted inside.
        "inside": 0,
        "max_inside": 0,
        "turnover": 0,
        "left_line": 0,
        # A scheduled event's figures: none here.
        "starts_at": 0,
        "draw_state": "",
        "prequeue_drawn": 0,
        "draw_commitment": "",
        "draw_secret": "",
        "held": False,
        "closed": False,
        "closed_message": "",
        "minute_seconds": 60.0,  # a deployed room's minute
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
    assert lines[7] == "Last hour, a column a minute, this minute on the right:"
    assert lines[8] == "Arrivals: peak 50/min, this minute 40"
    assert lines[11] == "Admitted: peak 295/min, this minute 3"
    admitted = lines[12:14]
    # Falling admissions: the oldest column is full height, this minute's barely there.
    assert admitted[0][1] == "█" and admitted[1][60] == "▁"
    assert lines[14].startswith("Waiting: peak ") and lines[14].endswith(", now 600")
    assert lines[17].startswith("+-60 min") and lines[17].endswith("now")
    assert all(len(line) <= 61 for line in lines[9:11] + admitted + lines[15:18])


def test_an_untouched_room_is_on_at_the_settings_rate(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    report = json.loads(invoke("status", "sale", "--json").output)
    assert (report["enabled"], report["rate"], report["operator_rate"]) == (True, 600, 600)
    assert (report["waiting"], report["estimated_wait_seconds"]) == (0, 0)
    assert report["governor_state"] is None and report["last_minute_arrivals"] is None
    assert report["admitted_per_minute"] == [0] * 60
    assert report["arrivals_per_minute"] == [None] * 60  # no minute claimed yet
    assert report["waiting_per_minute"] == [None] * 59 + [0]
    text = invoke("status", "sale").output
    assert "Admitted: peak 0/min, this minute 0\n" in text
    assert "Arrivals: peak 0/min, this minute not known\n" in text
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


def test_text_report_shows_the_governors_last_decisions_and_why(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Path
) -> None:
    redeploy(config_dir, deployed_room, dynamic_rate_throttling=True, slow_ms=800)
    populate(deployed_room)
    lines = invoke("status", "sale").output.splitlines()
    assert lines[2] == "Governor: throttled; baseline median 100 ms; slow when p90 > 800 ms"
    assert lines[3] == "Last decisions (UTC), newest first:"
    assert lines[4] == (
        "  22:12:25 halve, rate 600 -> 300: slow 2 checks in a row: median over the baseline's "
        "limit (errors 0/60, median 212 ms, p90 340 ms, slow above 125 ms)"
    )
    assert lines[5].startswith("  22:11:25 hold, rate 600: slow: median over the baseline's")
    assert lines[8].startswith("  22:07:25 pass, rate 600: healthy (errors 0/60")
    assert lines[9].startswith("Queue: ")


def test_a_governor_that_can_not_take_a_baseline_says_why_in_one_line(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Path
) -> None:
    redeploy(config_dir, deployed_room, dynamic_rate_throttling=True)
    pending = Decision(
        at=NOW - 30, decision="baseline-pending", rate_before=600, rate_after=600, samples=60,
        errors=60, median_ms=None, p90_ms=None, mean_ms=None, slow_above_ms=None,
        reason="no baseline can be taken: all 60 samples failed (HTTP 302: redirects never "
        "reached a page (loop, more than 10, or no Location) x60); point health_check_url (or "
        "the origin) at a page that answers 2xx, redirects followed",
    )  # fmt: skip
    table_client().put_item(TableName=deployed_room.table, Item=log_item([pending]))
    lines = invoke("status", "sale").output.splitlines()
    assert lines[2] == (
        "Governor: no baseline can be taken: all 60 samples failed (HTTP 302: redirects never "
        "reached a page (loop, more than 10, or no Location) x60); point health_check_url (or "
        "the origin) at a page that answers 2xx, redirects followed "
        "(sampled URL https://shop.example/sale)"
    )
    assert lines[4] == (
        "  22:13:30 baseline-pending, rate 600: no baseline can be taken: all 60 samples "
        "failed (HTTP 302: redirects never reached a page (loop, more than 10, or no Location) "
        "x60); point health_check_url (or the origin) at a page that answers 2xx, redirects "
        "followed (errors 60/60)"
    )


def test_a_fresh_admission_shows_in_this_minute(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    table = deployed_room.table
    put_item(table, {"pk": "arrivals#0", "n": 1})
    put_item(table, {"pk": "admitted", "n": 1})
    put_item(table, {"pk": f"minute#{MINUTE}", "admitted": 1, "arrivals_total": 0})
    report = json.loads(invoke("status", "sale", "--json").output)
    assert report["admitted_per_minute"][-1] == 1 and sum(report["admitted_per_minute"]) == 1
    assert report["arrivals_per_minute"][-1] == 1
    assert report["waiting_per_minute"][-1] == 0
    lines = invoke("status", "sale").output.splitlines()
    at = lines.index("Admitted: peak 1/min, this minute 1")
    assert [row[60] for row in lines[at + 1 : at + 3]] == ["█", "█"]
    assert lines[at + 1][:60] == "|" + " " * 59  # nothing earlier in the hour


def test_the_hour_counts_arrivals_and_the_line_minute_by_minute(
    invoke: Invoke, deployed_room: DeployedRoom
) -> None:
    table = deployed_room.table
    # Claims: 100 had arrived when minute -2 began, 150 at minute -1, 170 at this minute;
    # 20 were admitted before minute -2, then 30, 40 and 5 so far this minute.
    for minutes_ago, arrived, admitted in ((2, 100, 30), (1, 150, 40), (0, 170, 5)):
        put_item(table, {"pk": f"minute#{MINUTE - minutes_ago}", "arrivals_total": arrived,
                         "admitted": admitted})  # fmt: skip
    put_item(table, {"pk": "arrivals#0", "n": 180})
    put_item(table, {"pk": "admitted", "n": 95})
    report = json.loads(invoke("status", "sale", "--json").output)
    assert report["arrivals_per_minute"][-4:] == [None, 50, 20, 10]
    # At each minute's end: arrivals by then less admissions by then.
    assert report["waiting_per_minute"][-5:] == [None, 100 - 20, 150 - 50, 170 - 90, 180 - 95]
    assert report["admitted_per_minute"][-3:] == [30, 40, 5]
    text = invoke("status", "sale").output
    assert "Arrivals: peak 50/min, this minute 10\n" in text
    assert "Waiting: peak 100, now 85\n" in text


def test_a_room_rehearsed_with_shorter_minutes_is_read_in_its_own_minutes(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Path
) -> None:
    # `beekeeper local --minute-seconds 10`: the trigger numbers its minutes now // 10.
    write_deployment(config_dir, "sale", {**deployed_room.outputs, "MinuteSeconds": "10"})
    table, minute = deployed_room.table, int(NOW) // 10
    put_item(table, {"pk": "config", "enabled": True, "operator_rate": 60, "rate": 60,
                     "version": 1, "updated_at": int(NOW) - 5})  # fmt: skip
    put_item(table, {"pk": "arrivals#0", "n": 10})
    put_item(table, {"pk": "admitted", "n": 4})
    put_item(table, {"pk": f"minute#{minute - 2}", "admitted": 0, "arrivals_total": 0})
    put_item(table, {"pk": f"minute#{minute - 1}", "admitted": 4, "arrivals_total": 6})
    put_item(table, {"pk": f"minute#{minute}", "admitted": 0, "arrivals_total": 10})

    report = json.loads(invoke("status", "sale", "--json").output)
    assert report["minute_seconds"] == 10
    assert report["last_minute"] == minute - 1
    assert report["last_minute_arrivals"] == 4 and report["last_minute_admitted"] == 4
    assert report["arrivals_per_minute"][-3:] == [6, 4, 0]
    text = invoke("status", "sale").output
    assert "Last minute (22:13:50 UTC): 4 arrivals, 4 admitted" in text
    assert "Arrivals: peak 6/min, this minute 0" in text
    assert "Admitted: peak 4/min, this minute 0" in text
    assert "Last 60 minutes of 10 s (--minute-seconds), a column a minute" in text


def test_status_warns_a_month_before_the_pages_key_to_the_push_channel_expires(
    invoke: Invoke, deployed_room: DeployedRoom, config_dir: Path
) -> None:
    # Deployed a year ago: the key expires in 20 days.
    outputs = {**deployed_room.outputs, "ChannelKeyExpires": str(int(NOW) + 20 * 86_400)}
    write_deployment(config_dir, "sale", outputs)
    result = invoke("status", "sale")
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "Warning: The waiting pages' key to the push channel expires in 20 days; after that "
        "pages follow the shared state alone (a change reaches them in up to 30 s, not 2 s); "
        "`beekeeper "
        "deploy sale` sets it a year ahead again.\n"
    )
    write_deployment(config_dir, "sale", {**outputs, "ChannelKeyExpires": str(int(NOW) - 1)})
    assert "has expired" in invoke("status", "sale").stderr
    # A room deployed today hears nothing of it.
    write_deployment(config_dir, "sale", deployed_room.outputs)
    assert invoke("status", "sale").stderr == ""
