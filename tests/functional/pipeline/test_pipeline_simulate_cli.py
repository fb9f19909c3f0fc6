"""`beekeeper simulate` through click: JSON, the table, and clear errors for bad flags."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from beekeeper.cli.main import cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.output


def test_json_has_the_promised_keys() -> None:
    code, output = run("--rate", "60", "--visitors", "100", "--minutes", "2", "--json")
    assert code == 0
    data = json.loads(output)
    assert data["admitted_per_minute"] == [60, 40]
    assert data["expected_per_minute"] == [60, 40] and data["exact"] is True
    assert data["lost"] == 0 and data["admitted_twice"] == 0
    assert data["wait_seconds_p50"] == data["wait_seconds_median"]
    assert data["wait_seconds_p50"] <= data["wait_seconds_p99"] <= data["wait_seconds_max"]
    assert 60 <= data["max_admitted_in_any_60s"] <= 70 and data["window_cap_held"] is True
    assert data["late_overtakes"] == 0
    for key in (
        "peak_second_ratio",
        "peak_consumers",
        "aws_calls_per_admitted",
        "calls_per_new_visitor",
        "calls_per_admission",
    ):
        assert isinstance(data[key], int | float)


def test_table_with_faults() -> None:
    code, output = run(
        "--rate",
        "600",
        "--visitors",
        "1500",
        "--arrival",
        "uniform:2",
        "--minutes",
        "3",
        "--faults",
        "crash,duplicates",
        "--seed",
        "4",
    )
    assert code == 0
    assert "faults: crash, duplicates" in output
    assert output.count("\n") >= 8 and "lost 0" in output
    assert "wait from joining to admission: median" in output
    assert "most admitted in any 60 s" in output
    # 600 a minute: a mean second of 10, the bound 1.25 x 10 + one batch of 10 = 2.25 x it.
    assert "x the rate's mean second, within the bound of 2.25 x (1.25 x the mean + one" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rate", "0", "--visitors", "1"], "--rate"),
        (["--rate", "10", "--visitors", "-1"], "--visitors"),
        (["--rate", "10", "--visitors", "1", "--arrival", "steady"], "uniform:MINUTES"),
        (["--rate", "10", "--visitors", "1", "--faults", "flood"], "crash, throttle"),
        (["--rate", "10", "--visitors", "1", "--minutes", "0"], "--minutes"),
        (["--visitors", "1"], "--rate"),
    ],
)
def test_bad_flags_give_one_clear_error(args: list[str], message: str) -> None:
    code, output = run(*args)
    assert code == 2
    assert message in output and "Traceback" not in output


def test_json_adds_the_charts_series_and_keeps_every_key() -> None:
    # Without the work a place costs, everyone is in line from the first moment.
    code, output = run(
        "--rate", "60", "--visitors", "100", "--minutes", "2", "--join-work", "0", "--json"
    )  # fmt: skip
    assert code == 0
    data = json.loads(output)
    assert data["arrivals_per_minute"] == [100, 0]
    assert data["rate_per_minute"] == [60, 60]
    assert data["waiting_step_seconds"] == 10 and len(data["waiting_over_time"]) == 13
    assert data["waiting_over_time"][0] == 100 and data["waiting_over_time"][-1] == 0
    assert sum(data["wait_histogram"]["counts"]) == 100
    assert data["wait_seconds_p50"] <= data["wait_seconds_p90"] <= data["wait_seconds_p99"]
    assert data["faults_per_minute"] == {}
    assert len(data["wait_seconds_by_arrival_minute"]) == 2


def test_report_writes_one_page_and_the_table_still_prints(tmp_path: Path) -> None:
    report = tmp_path / "sale.html"
    code, output = run(
        "--rate", "600", "--visitors", "1500", "--arrival", "uniform:2", "--minutes", "4",
        "--faults", "crash", "--report", str(report), "--start-time", "18:30",
    )  # fmt: skip
    assert code == 0, output
    assert "faults: crash" in output
    page = report.read_text(encoding="utf-8")
    size = len(page.encode("utf-8")) / 1024
    assert f"Wrote the report to {report.resolve()} ({size:,.0f} KB)." in output
    assert page.count("<svg") == 4
    assert "A visitor arriving at 18:30 waits" in page
    assert (
        "beekeeper simulate --rate 600 --visitors 1500 --arrival uniform:2 --minutes 4 "
        "--faults crash --seed 1"
    ) in page


def test_report_into_a_missing_folder_is_refused_before_simulating(tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "r.html"
    code, output = run("--rate", "60", "--visitors", "10", "--report", str(target))
    assert code == 1
    assert f"the folder {target.parent} does not exist; create it first" in output
    assert "Traceback" not in output and "rate 60/min" not in output


def test_report_without_the_charts_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without it sees
    code, output = run("--rate", "60", "--visitors", "10", "--report", str(tmp_path / "r.html"))
    assert code == 1
    assert output.strip() == (
        "Error: The simulation report needs the charts extra (matplotlib is not installed): "
        "pip install 'beekeeper-waiting-room[charts]'"
    )
    assert not (tmp_path / "r.html").exists()


def test_a_start_time_that_is_not_a_time_of_day_is_a_usage_error() -> None:
    code, output = run("--rate", "60", "--visitors", "10", "--start-time", "25:00")
    assert code == 2
    assert "'25:00' is not a time of day: use HH:MM" in output
