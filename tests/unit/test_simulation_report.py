"""The simulation report: self-contained, accessible, and its summary says the figures right."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime
from typing import Any

import pytest

from beekeeper.charts import words
from beekeeper.charts.simulation_report import simulation_report, summary_lines
from beekeeper.charts.svg import ChartsUnavailable, check_available
from beekeeper.charts.words import Timeline
from beekeeper.core.words import count
from beekeeper.simulator.faults import FAULT_NAMES, Faults
from beekeeper.simulator.run import Arrival, Crowd, SimulationResult, simulate, simulated_room
from tests.support.html_page import Page, fetches_nothing

NINE = datetime(2000, 1, 1, 9, 0)
MAX_BYTES = 1_500_000


def run(rate: int = 3000, **crowd: Any) -> SimulationResult:
    options: dict[str, Any] = {
        "visitors": 20000,
        "arrival": Arrival.parse("burst"),
        "minutes": 8,
        "seed": 1,
    }
    return simulate(simulated_room(rate=rate, join_work=0), Crowd(**(options | crowd)))


@pytest.fixture(scope="module")
def burst() -> SimulationResult:
    return run()


def test_the_summary_says_the_burst_in_words(burst: SimulationResult) -> None:
    lines = summary_lines(burst, Timeline(NINE))
    assert (
        lines[0]
        == "20,000 visitors arrive at once as 9:00 begins; the room lets in 3,000 a minute."
    )
    assert re.fullmatch(r"A visitor arriving at 9:00 waits about [34] minutes\.", lines[1])
    assert lines[2].startswith("Half of those admitted got in within 4 minutes, 9 in 10 within")
    assert re.fullmatch(
        r"The line is longest at 9:00, with 20,000 visitors, and empty from 9:06:\d0 on\.", lines[3]
    )
    assert lines[4].startswith("No faults were injected")


def test_the_summary_names_several_arrival_times_and_who_is_still_waiting() -> None:
    result = run(rate=600, visitors=6000, arrival=Arrival.parse("uniform:6"), minutes=8)
    lines = summary_lines(result, Timeline(datetime(2000, 1, 1, 18, 30)))
    assert lines[0] == (
        "6,000 visitors arrive evenly from 18:30 to 18:36; the room lets in 600 a minute."
    )
    # 1,000 arrive a minute and 600 go in: the line grows, and so does the wait.
    match = re.fullmatch(
        r"A visitor arriving at 18:30 waits about (\d+) seconds?; one arriving at 18:33 waits "
        r"about (\d+) minutes?; one arriving at 18:35 is still in line when the simulation "
        r"ends at 18:38\.",
        lines[1],
    )
    assert match, lines[1]
    assert re.fullmatch(
        r"The line is longest at 18:36, with 2,4\d\d visitors; when the simulation ends at "
        r"18:38, 1,2\d\d visitors still wait, about 2 minutes more at this rate\.",
        lines[3],
    ), lines[3]


def test_the_faults_are_counted_in_words() -> None:
    result = run(
        rate=600, visitors=1500, minutes=3, faults=Faults.parse(",".join(FAULT_NAMES)), seed=4
    )
    sentence = summary_lines(result, Timeline(NINE))[-1]
    injected = result.faults_injected
    assert sentence == (
        f"Faults injected: {count(injected['crash'], 'AWS call', 'AWS calls')} crashed, "
        f"{count(injected['throttle'], 'write')} throttled, "
        f"{injected['duplicates']:,} messages delivered twice, "
        "3 second trigger deliveries; nobody was lost or let in twice."
    )


def test_the_page_fetches_nothing_and_forbids_fetching(burst: SimulationResult) -> None:
    document = simulation_report(burst, start=NINE, command="beekeeper simulate ...")
    assert fetches_nothing(document) == []


def test_every_chart_has_a_title_and_a_text_alternative(burst: SimulationResult) -> None:
    document = simulation_report(burst, start=NINE, command="beekeeper simulate ...")
    page = Page(document)
    ids = page.ids()
    assert len(ids) == len(set(ids)), "ids repeat across charts"
    charts = page.all("svg")
    assert len(charts) == 3  # no faults: no faults chart
    for svg in charts:
        assert svg["role"] == "img"
        assert svg["aria-labelledby"] in ids and svg["aria-describedby"] in ids
    captions = re.findall(r'<figcaption id="[^"]+">([^<]+)</figcaption>', document)
    assert len(captions) == 3 and all(len(c) > 40 for c in captions)
    assert "<summary>The numbers</summary><table>" in document


@pytest.mark.slow
def test_the_largest_report_stays_small() -> None:
    """Size grows with minutes and faults, not visitors: the longest run with every fault."""
    result = run(
        rate=60,
        visitors=7200,
        arrival=Arrival.parse("uniform:120"),
        minutes=120,
        faults=Faults.parse(",".join(FAULT_NAMES)),
    )
    document = simulation_report(result, start=NINE, command="beekeeper simulate ...")
    assert len(Page(document).all("svg")) == 4
    assert len(document.encode()) < MAX_BYTES


def test_the_same_run_gives_the_same_page(burst: SimulationResult) -> None:
    first = simulation_report(burst, start=NINE, command="x")
    assert simulation_report(burst, start=NINE, command="x") == first


def test_without_matplotlib_one_sentence_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # what an install without it sees
    with pytest.raises(ChartsUnavailable) as raised:
        check_available("The simulation report")
    assert str(raised.value) == (
        "The simulation report needs the charts extra (matplotlib is not installed): "
        "pip install 'beekeeper-waiting-room[charts]'"
    )


def test_the_cli_and_the_deploy_path_do_not_import_the_charts() -> None:
    code = (
        "import sys, beekeeper.cli.main, beekeeper.cli.deployer;"
        "print(sorted(m for m in sys.modules if m.startswith(('matplotlib', 'beekeeper.charts'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("seconds", "about", "within"),
    [
        (0.4, "under a second", "within a second"),
        (1.2, "about 1 second", "within 2 seconds"),
        (44.6, "about 45 seconds", "within 45 seconds"),
        (89, "about 89 seconds", "within 89 seconds"),
        (440, "about 7 minutes", "within 8 minutes"),
        (3900, "about 1 h 5 min", "within 65 minutes"),
    ],
)
def test_durations_in_words(seconds: float, about: str, within: str) -> None:
    assert (words.about(seconds), words.within(seconds)) == (about, within)


def test_clock_times_drop_zero_seconds() -> None:
    timeline = Timeline(NINE)
    assert (timeline.at(5), timeline.at(6 + 40 / 60), timeline.at(75)) == (
        "9:05",
        "9:06:40",
        "10:15",
    )
