"""How long visitors waited, said in words (charts/words.py WaitsSaid) and given as figures
(cli/event_report.py in_order): no percentile is ever said, or given, above the longest wait,
and none above a higher one, whatever CloudWatch or the simulator hands in."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from beekeeper.charts.event_data import EventReport, Waits
from beekeeper.charts.event_report import summary_lines, timeline_of
from beekeeper.charts.words import WaitsSaid
from beekeeper.cli.event_report import in_order

WAITS = st.floats(min_value=0, max_value=10 * 86_400, allow_nan=False)
_SAID = re.compile(
    r"^(?:within )?(?:(?P<second>a second|under a second)|(?P<s>\d+) seconds?|"
    r"(?P<m>\d+) minutes?|(?P<mm>\d+) min (?P<ms>\d+) s|(?P<h>\d+) h (?P<hm>\d+) min)$"
)


def seconds(said: str) -> int:
    """The whole seconds a wait's words say."""
    match = _SAID.match(said)
    assert match is not None, said
    if match["second"]:
        return 1
    if match["s"]:
        return int(match["s"])
    if match["m"]:
        return 60 * int(match["m"])
    if match["mm"]:
        return 60 * int(match["mm"]) + int(match["ms"])
    return 3600 * int(match["h"]) + 60 * int(match["hm"])


@given(WAITS, WAITS, WAITS, WAITS)
def test_no_percentile_is_said_above_the_longest_or_a_higher_one(
    p50: float, p90: float, p99: float, longest: float
) -> None:
    said = WaitsSaid.of(p50, p90, p99, longest)
    told = [seconds(said.p50), seconds(said.p90), seconds(said.p99), seconds(said.longest)]
    assert told == list(said.bounds)
    assert told == sorted(told)
    # Each is still an upper bound of what it says (the longest bounds them all).
    for value, bound in zip((p50, p90, p99, longest), told, strict=True):
        assert min(value, longest) <= bound


@given(st.lists(st.one_of(st.none(), WAITS), min_size=3, max_size=3), st.one_of(st.none(), WAITS))
def test_the_figures_are_in_order_and_none_is_above_the_longest(
    percentiles: list[float | None], longest: float | None
) -> None:
    ordered = in_order(percentiles, longest)
    known = [p for p in ordered if p is not None]
    assert known == sorted(known)
    assert longest is None or all(p <= longest for p in known)
    assert [p is None for p in ordered] == [p is None for p in percentiles]


def test_a_p99_just_under_the_longest_is_not_said_above_it() -> None:
    """p99 130 s, the longest 140 s: "within 3 minutes" beside "the longest wait was 2
    minutes" said the p99 above the longest."""
    since = datetime(2026, 5, 1, 9, 0, tzinfo=UTC).timestamp()
    event = EventReport(
        room="local", local=True, generated_at=int(since) + 600, since=since,
        until=since + 300, window="given", window_said="", minute_seconds=60.0,
        arrivals_per_minute=[30, 0, 0, 0, 0], admitted_per_minute=[10, 10, 10, 0, 0],
        rate_per_minute=[10] * 5, operator_rate_per_minute=[10] * 5,
        waiting_per_minute=[0, 20, 10, 0, 0], rejoined_per_minute=[0] * 5,
        waits=Waits(timed=30, p50=60.0, p90=120.0, p99=130.0, longest=140.0, bin_seconds=10,
                    counts=[10] * 3),
        wait_p50_per_minute=None, wait_p90_per_minute=None, capacity=None, governor=False,
        governor_per_minute={"halved": [0] * 5, "held": [0] * 5, "raised": [0] * 5},
        governor_decisions=[], origin_requests_per_minute=None, edge=False,
        edge_requests_per_minute=None, arrivals_total=30, admitted_total=30, waiting_now=0,
    )  # fmt: skip
    waited = summary_lines(event, timeline_of(event))[1]
    assert waited == (
        "Half waited within 60 seconds, 9 in 10 within 2 minutes and 99 in 100 within 2 min "
        "20 s; the longest wait was 2 min 20 s."
    )
