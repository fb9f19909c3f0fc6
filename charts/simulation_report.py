"""`beekeeper simulate --report FILE.html`: one self-contained page of charts and a summary
(charts/page.py: no script, nothing fetched when opened)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from beekeeper.charts import figures
from beekeeper.charts.figures import Chart
from beekeeper.charts.page import report_page
from beekeeper.charts.words import Timeline, WaitsSaid, about, duration
from beekeeper.core.words import count
from beekeeper.simulator.run import Arrival, SimulationResult

WHAT = "The simulation report"

ChartBuilder = Callable[[SimulationResult, Timeline], Chart | None]


def _per_minute(result: SimulationResult, timeline: Timeline) -> Chart:
    return figures.per_minute(
        "per-minute",
        WHAT,
        timeline,
        arrivals=result.arrivals_per_minute,
        admitted=result.admitted_per_minute,
        rate=result.rate_per_minute,
    )


def _waiting(result: SimulationResult, timeline: Timeline) -> Chart:
    return figures.waiting(
        "waiting",
        WHAT,
        timeline,
        step_seconds=result.waiting_step_seconds,
        waiting=result.waiting_over_time,
    )


def _waits(result: SimulationResult, timeline: Timeline) -> Chart:
    return figures.waits(
        "waits",
        WHAT,
        bin_seconds=int(result.wait_histogram.get("bin_seconds", 1)),
        counts=list(result.wait_histogram.get("counts", [])),
        median=result.wait_seconds_p50,
        p90=result.wait_seconds_p90,
        p99=result.wait_seconds_p99,
        longest=result.wait_seconds_max,
    )


def _faults(result: SimulationResult, timeline: Timeline) -> Chart | None:
    if not result.faults:
        return None  # the summary says none were injected
    per_minute = {kind: result.faults_per_minute.get(kind, [0] * result.minutes)
                  for kind in result.faults}  # fmt: skip
    return figures.faults("faults", WHAT, timeline, per_minute=per_minute)


# The report's charts, top to bottom; a builder returns None when its chart does not apply.
# A room with a cap on visitors inside the shop (capacity mode) adds "inside against
# max_inside" here, after the per-minute chart, from series the simulator adds for it.
CHARTS: tuple[ChartBuilder, ...] = (_per_minute, _waiting, _waits, _faults)


def simulation_report(result: SimulationResult, *, start: datetime, command: str) -> str:
    """The whole HTML document. `start`: the clock time the first simulated minute starts."""
    timeline = Timeline(start)
    charts = [chart for build in CHARTS if (chart := build(result, timeline)) is not None]
    headline = (
        f"{count(result.visitors, 'visitor')} at {result.rate:,} a minute: how long they wait"
    )
    return report_page(
        title=f"Beekeeper simulation: {headline}",
        headline=headline,
        command=command,
        summary=summary_lines(result, timeline),
        warnings=warning_lines(result),
        sections=[chart.to_html() for chart in charts],
    )


def summary_lines(result: SimulationResult, timeline: Timeline) -> list[str]:
    """The figures in words, one sentence each."""
    lines = [_crowd(result, timeline)]
    examples = _examples(result, timeline)
    if examples:
        lines.append(examples)
    if result.wait_seconds_p50 is not None:
        said = WaitsSaid.of(
            result.wait_seconds_p50,
            result.wait_seconds_p90 or 0,
            result.wait_seconds_p99 or 0,
            result.wait_seconds_max or 0,
        )
        lines.append(
            f"Half of those admitted got in {said.p50}, 9 in 10 {said.p90} and 99 in 100 "
            f"{said.p99}; the longest wait was {said.longest}."
        )
    lines.append(_line(result, timeline))
    lines.append(_faults_sentence(result))
    return lines


def warning_lines(result: SimulationResult) -> list[str]:
    """What went wrong, if anything: each is a failure of the room, said plainly."""
    warnings = []
    if result.lost:
        warnings.append(f"{count(result.lost, 'visitor')} lost: deleted from the queue unadmitted.")
    if result.admitted_twice:
        warnings.append(f"{count(result.admitted_twice, 'visitor')} admitted twice.")
    if not result.exact:
        warnings.append("Some full minutes admitted other than min(rate, visitors in line).")
    if not result.window_cap_held:
        warnings.append(
            f"Some 60 s window admitted {result.max_window_excess:,} more than the rate allows."
        )
    return warnings


def _crowd(result: SimulationResult, timeline: Timeline) -> str:
    arrival = Arrival.parse(result.arrival)
    who = count(result.visitors, "visitor")
    if arrival.kind == "uniform":
        how = f"{who} arrive evenly from {timeline.at(0)} to {timeline.at(arrival.minutes)}"
    elif arrival.kind == "at":
        how = f"{who} arrive at once at {timeline.at(arrival.seconds / 60)}"
    else:
        how = f"{who} arrive at once as {timeline.at(0)} begins"
    rates = sorted(set(result.rate_per_minute)) or [result.rate]
    if len(rates) == 1:
        return f"{how}; the room lets in {rates[0]:,} a minute."
    return f"{how}; the room lets in between {rates[0]:,} and {rates[-1]:,} a minute."


def _examples(result: SimulationResult, timeline: Timeline) -> str:
    """ "A visitor arriving at 9:05 waits about 7 minutes", for the first, a middle and the
    last minute anyone arrived in."""
    minutes = [m for m, n in enumerate(result.arrivals_per_minute) if n]
    if not minutes:
        return ""
    picked = sorted({minutes[0], minutes[len(minutes) // 2], minutes[-1]})
    parts = []
    for minute in picked:
        wait = result.wait_seconds_by_arrival_minute[minute]
        if wait is None:
            said = f"is still in line when the simulation ends at {timeline.at(result.minutes)}"
        else:
            said = f"waits {about(wait)}"
        parts.append((timeline.at(minute), said))
    first_at, first_said = parts[0]
    sentence = f"A visitor arriving at {first_at} {first_said}"
    for at, said in parts[1:]:
        sentence += f"; one arriving at {at} {said}"
    return sentence + "."


def _line(result: SimulationResult, timeline: Timeline) -> str:
    samples = result.waiting_over_time
    step = result.waiting_step_seconds / 60
    longest = max(samples, default=0)
    if longest == 0:
        return "Nobody had to wait in line."
    at = timeline.at(samples.index(longest) * step)
    said = f"The line is longest at {at}, with {count(longest, 'visitor')}"
    if result.still_waiting:
        more = result.still_waiting / result.rate_per_minute[-1] if result.rate_per_minute else 0
        return (
            f"{said}; when the simulation ends at {timeline.at(result.minutes)}, "
            f"{count(result.still_waiting, 'visitor')} still wait"
            f"{'s' if result.still_waiting == 1 else ''}, about "
            f"{duration(max(60.0, more * 60))} more at this rate."
        )
    last_busy = max(i for i, n in enumerate(samples) if n)
    return f"{said}, and empty from {timeline.at((last_busy + 1) * step)} on."


def _faults_sentence(result: SimulationResult) -> str:
    if not result.faults:
        return (
            "No faults were injected; --faults crash,throttle,duplicates,double-trigger "
            "shows the room under them."
        )
    struck = {kind: sum(counts) for kind, counts in result.faults_per_minute.items()}
    said = ", ".join(figures.fault_words(kind, struck.get(kind, 0)) for kind in result.faults)
    outcome = (
        "nobody was lost or let in twice"
        if not result.lost and not result.admitted_twice
        else "see the warnings above"
    )
    return f"Faults injected: {said}; {outcome}."
