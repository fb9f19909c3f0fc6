"""`beekeeper simulate` through click: JSON, the table, and clear errors for bad flags."""

from __future__ import annotations

import json

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
