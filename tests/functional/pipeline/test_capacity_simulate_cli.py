"""`beekeeper simulate` in capacity mode through click: its flags, keys, table and errors."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

import beekeeper.apigateway
from beekeeper.cli.commands.simulate import command_line
from beekeeper.cli.main import cli
from beekeeper.simulator.run import Arrival, Crowd, Visits, simulate, simulated_room

RATE_MODE = ["--rate", "60", "--visitors", "150", "--arrival", "uniform:2", "--minutes", "3"]
CAPACITY = [
    "--rate",
    "600",
    "--visitors",
    "120",
    "--arrival",
    "uniform:2",
    "--minutes",
    "5",
    "--max-inside",
    "10",
    "--session-minutes",
    "1",
    "--claim-minutes",
    "0.5",
    "--visit-minutes",
    "1.5",
    "--abandon",
    "0.2",
    "--leave",
    "0.5",
]
CAPACITY_KEYS = {
    "peak_inside",
    "refill_seconds_p50",
    "refill_seconds_p99",
    "mean_inside_ratio",
    "no_shows",
}


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["simulate", *args])
    return result.exit_code, result.output


def test_capacity_json_adds_its_keys_and_keeps_every_rate_mode_key() -> None:
    code, output = run(*CAPACITY, "--json")
    assert code == 0, output
    data = json.loads(output)
    _, rate_output = run(*RATE_MODE, "--json")
    assert set(json.loads(rate_output)) < set(data)
    assert set(data) >= CAPACITY_KEYS
    assert data["max_inside"] == 10 and data["peak_inside"] == 10
    assert data["lost"] == 0 and data["admitted_twice"] == 0
    assert data["refill_seconds_p50"] <= data["refill_seconds_p99"] <= 15
    assert 0 < data["mean_inside_ratio"] <= 1 and data["no_shows"] >= 1


@pytest.mark.parametrize(
    "extra",
    [[], ["--max-inside", "0"], ["--max-inside", "0", "--abandon", "0.3", "--leave", "1"]],
)
def test_no_cap_is_rate_mode_exactly(extra: list[str]) -> None:
    _, plain = run(*RATE_MODE, "--json")
    code, output = run(*RATE_MODE, *extra, "--json")
    assert code == 0
    assert output == plain
    assert not CAPACITY_KEYS & set(json.loads(output))


def test_the_table_says_how_full_the_shop_was() -> None:
    code, output = run(*CAPACITY)
    assert code == 0, output
    assert "inside the shop: at most 10 at once; the most holding a place 10 (within" in output
    assert "places freed with visitors waiting:" in output and "no-shows" in output
    assert "every full minute as expected" not in output  # a rate-mode judgement


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--abandon", "0.2"], "--abandon simulates capacity mode: add --max-inside N"),
        (["--max-inside", "5", "--leave", "1.5"], "'--leave'"),
        (["--max-inside", "-1"], "'--max-inside'"),
        (["--max-inside", "5", "--session-minutes", "0"], "'--session-minutes'"),
        (["--max-inside", "5", "--visit-minutes", "0"], "'--visit-minutes'"),
    ],
)
def test_bad_capacity_flags_give_one_clear_error(args: list[str], message: str) -> None:
    code, output = run("--rate", "60", "--visitors", "5", *args)
    assert code == 2
    assert message in output and "Traceback" not in output


def test_the_report_names_the_command_that_runs_it_again() -> None:
    room = simulated_room(rate=60, max_inside=3, session_minutes=1, claim_minutes=0.5)
    crowd = Crowd(
        visitors=5,
        arrival=Arrival.parse("burst"),
        minutes=1,
        visits=Visits(visit_minutes=1, abandon=0.1),
    )
    result = simulate(room, crowd)
    assert command_line(result) == (
        "beekeeper simulate --rate 60 --visitors 5 --arrival burst --minutes 1 "
        "--max-inside 3 --session-minutes 1 --claim-minutes 0.5 --visit-minutes 1 "
        "--abandon 0.1 --leave 0 --leave-line 0 --seed 1"
    )


def test_without_the_local_extra_capacity_mode_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The base install has no Velocity renderer; rate mode does not need it.
    monkeypatch.setitem(sys.modules, "beekeeper.apigateway.room", None)
    monkeypatch.delattr(beekeeper.apigateway, "room", raising=False)
    code, output = run("--rate", "60", "--visitors", "5", "--max-inside", "2")
    assert code == 1
    assert "pip install 'beekeeper-waiting-room[local]'" in output and "Traceback" not in output
    assert run("--rate", "60", "--visitors", "5", "--minutes", "1")[0] == 0
