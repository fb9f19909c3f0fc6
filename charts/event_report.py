"""`beekeeper report NAME --out FILE.html`: how an event went, on one self-contained page.

The page is the simulation report's (charts/page.py: no script, nothing fetched when opened,
every chart with a text alternative and its numbers as a table); its figures are the room's
own, read by cli/event_report.py. On top, the event in words: who came and when, how long they
waited, when the line peaked, who left or never came, what the governor did, the requests the
origin (and the edge) answered. Clock times are UTC.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from beekeeper.charts import figures, svg
from beekeeper.charts.event_data import LOCAL_REQUESTS, EventReport
from beekeeper.charts.figures import Chart, Table
from beekeeper.charts.page import report_page
from beekeeper.charts.words import Timeline, WaitsSaid, listed, short_duration, within
from beekeeper.core.words import count

WHAT = "The event report"

ChartBuilder = Callable[[EventReport, Timeline], Chart | None]


def timeline_of(report: EventReport) -> Timeline:
    return Timeline(datetime.fromtimestamp(report.since, UTC), report.minute_seconds)


def headline(report: EventReport) -> str:
    start = datetime.fromtimestamp(report.since, UTC)
    day = f"{start.day} {start:%B %Y}"
    timeline = timeline_of(report)
    return f"{report.room}: {day}, {timeline.at(0)} to {timeline.at(report.minutes)} UTC"


def event_report(report: EventReport, *, command: str) -> str:
    """The whole HTML document."""
    timeline = timeline_of(report)
    charts = [chart for build in CHARTS if (chart := build(report, timeline)) is not None]
    sections = [chart.to_html() for chart in charts]
    decisions = _decisions(report)
    if decisions:
        sections.append(decisions)
    title = headline(report)
    return report_page(
        title=f"Beekeeper report: {title}",
        headline=title,
        command=command,
        summary=summary_lines(report, timeline),
        sections=sections,
        notes=report.notes,
    )


# -- the words on top --------------------------------------------------------------------------


def summary_lines(report: EventReport, timeline: Timeline) -> list[str]:
    """The event in words, one sentence each, every figure computed from the report."""
    lines = [_came(report, timeline), _waited(report), _line(report, timeline)]
    if report.capacity is not None:
        lines.append(_full(report, timeline))
    lines.append(_gone(report))
    lines.append(_governed(report, timeline))
    lines.append(_requests(report, timeline))
    if report.window_said:
        lines.append(report.window_said)
    return lines


def _span(values: Sequence[int | None]) -> tuple[int, int] | None:
    busy = [m for m, v in enumerate(values) if v]
    return (busy[0], busy[-1]) if busy else None


def _rates(report: EventReport) -> str:
    rates = sorted({r for r in report.rate_per_minute if r})
    if not rates:
        return ""
    if len(rates) == 1:
        return f", at {rates[0]:,} a minute"
    return f", at {rates[0]:,} to {rates[-1]:,} a minute"


def _came(report: EventReport, timeline: Timeline) -> str:
    admitted = sum(report.admitted_per_minute)
    arrivals = report.arrivals_per_minute
    known = [a for a in arrivals if a is not None]
    let_in = f"{admitted:,} {'was' if admitted == 1 else 'were'} let in{_rates(report)}"
    if not known:
        span = _span(report.admitted_per_minute)
        if span is None:
            return (
                f"Nobody came between {timeline.at(0)} and {timeline.at(report.minutes)} UTC "
                "(the arrivals are not known, and nobody was let in)."
            )
        return (
            f"{let_in[0].upper()}{let_in[1:]} between {timeline.at(span[0])} and "
            f"{timeline.at(span[1] + 1)} UTC (the arrivals are not known)."
        )
    came = sum(known)
    span = _span(arrivals)
    if span is None:
        return (
            f"Nobody came between {timeline.at(0)} and {timeline.at(report.minutes)} UTC; {let_in}."
        )
    return (
        f"{came:,} came between {timeline.at(span[0])} and {timeline.at(span[1] + 1)} UTC; "
        f"{let_in}."
    )


def _waited(report: EventReport) -> str:
    waits = report.waits
    if waits is None or waits.p50 is None:
        if sum(report.admitted_per_minute):
            return "How long they waited is not known: no wait was recorded (see below)."
        return "Nobody was let in, so nobody's wait can be told."
    if waits.p90 is not None and waits.p99 is not None and waits.longest is not None:
        said = WaitsSaid.of(waits.p50, waits.p90, waits.p99, waits.longest)
        sentence = (
            f"Half waited {said.p50}, 9 in 10 {said.p90} and 99 in 100 {said.p99}; the longest "
            f"wait was {said.longest}"
        )
    else:
        sentence = f"Half waited {within(waits.p50)}"
    admitted = sum(report.admitted_per_minute)
    if waits.timed < admitted:
        sentence += f" (the waits of {waits.timed:,} of the {admitted:,} let in)"
    return sentence + "."


def _line(report: EventReport, timeline: Timeline) -> str:
    line = report.waiting_per_minute
    known = [w for w in line if w is not None]
    if not known:
        return "The line is not known: the trigger recorded nothing in this window."
    longest = max(known)
    if longest == 0:
        return "Nobody had to wait in line as any minute began."
    at = timeline.at(line.index(longest))
    said = f"The line peaked at {longest:,} at {at}"
    last = line[-1]
    if last:
        end = timeline.at(report.minutes - 1)
        return f"{said}; {count(last, 'visitor')} still waited at {end}."
    busy = max(m for m, w in enumerate(line) if w)
    return f"{said} and was empty from {timeline.at(busy + 1)} on."


def _full(report: EventReport, timeline: Timeline) -> str:
    assert report.capacity is not None
    inside = report.capacity.inside_per_minute
    caps = report.capacity.max_inside_per_minute
    pairs = [(i, c) for i, c in zip(inside, caps, strict=True) if i is not None and c]
    if not pairs:
        return "How full the shop was is not known: no count of visitors inside was recorded."
    full = [m for m, (i, c) in enumerate(zip(inside, caps, strict=True)) if i is not None and c
            and i >= c]  # fmt: skip
    cap = max(c for _, c in pairs)
    most = max(i for i, _ in pairs)
    if not full:
        return (
            f"The shop was never full: at most {most:,} of its {cap:,} places were taken as a "
            "minute began."
        )
    return (
        f"The shop was full as {count(len(full), 'minute')} began, from {timeline.at(full[0])} "
        f"to {timeline.at(full[-1] + 1)}; at most {most:,} were inside (the cap: {cap:,})."
    )


def _gone(report: EventReport) -> str:
    if report.capacity is not None:
        c = report.capacity
        parts = [
            count(sum(c.left_line_per_minute), "visitor") + " left the line before their turn",
            f"{sum(c.left_shop_per_minute):,} left the shop",
            f"{sum(c.no_shows_per_minute):,} let in never arrived",
            count(sum(c.sessions_ended_per_minute), "session") + " ran out",
        ]
        return listed(parts) + "."
    rejoined = sum(report.rejoined_per_minute)
    said = (
        "Nobody came back after their admission had expired"
        if rejoined == 0
        else f"{count(rejoined, 'visitor')} came back after their admission had expired (or "
        "with a place the room no longer knew) and joined the line again"
    )
    return said + "; the room does not count admissions that expired unused."


def _governed(report: EventReport, timeline: Timeline) -> str:
    if not report.governor:
        return "The governor (dynamic rate throttling) is off for this room."
    g = report.governor_per_minute
    halved, held, raised = sum(g["halved"]), sum(g["held"]), sum(g["raised"])
    if not (halved or held or raised):
        return "The governor did not change the rate: the shop answered in time throughout."
    parts = []
    if halved:
        first = next(m for m, n in enumerate(g["halved"]) if n)
        parts.append(f"halved the rate {_times(halved)} (first at {timeline.at(first)})")
    if held:
        parts.append(f"held it {_times(held)} (the shop was slow)")
    if raised:
        parts.append(f"raised it again {_times(raised)}")
    rates = [r for r in report.rate_per_minute if r]
    lowest = f"; the lowest rate was {min(rates):,} a minute" if rates else ""
    return "The governor " + listed(parts) + lowest + "."


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n:,} times")


def _requests(report: EventReport, timeline: Timeline) -> str:
    if report.local:
        return LOCAL_REQUESTS
    origin = report.origin_requests_per_minute
    if origin is None:
        said = "The origin's requests are not known"
    elif not any(origin):
        said = "API Gateway (the origin) counted no request"
    else:
        known = [o or 0 for o in origin]
        peak = max(known)
        said = (
            f"API Gateway (the origin) answered {sum(known):,} requests, at most {peak:,} in a "
            f"minute (at {timeline.at(known.index(peak))})"
        )
    edge = report.edge_requests_per_minute
    if not report.edge:
        return said + "; there is no edge (CloudFront) in front of this room."
    if edge is None or not any(edge):
        return said + "; CloudFront (the edge) counted no request."
    known_edge = [e or 0 for e in edge]
    return (
        f"{said}; CloudFront (the edge) answered {sum(known_edge):,}, at most "
        f"{max(known_edge):,} in a minute."
    )


# -- the charts --------------------------------------------------------------------------------


def _per_minute(report: EventReport, timeline: Timeline) -> Chart:
    return figures.per_minute(
        "per-minute",
        WHAT,
        timeline,
        arrivals=report.arrivals_per_minute,
        admitted=report.admitted_per_minute,
        rate=report.rate_per_minute,
    )


def _waiting(report: EventReport, timeline: Timeline) -> Chart:
    return figures.waiting(
        "waiting",
        WHAT,
        timeline,
        step_seconds=report.minute_seconds,
        waiting=report.waiting_per_minute,
    )


def _waits(report: EventReport, timeline: Timeline) -> Chart | None:
    waits = report.waits
    if waits is None:
        return None
    return figures.waits(
        "waits",
        WHAT,
        bin_seconds=waits.bin_seconds,
        counts=waits.counts,
        median=waits.p50,
        p90=waits.p90,
        p99=waits.p99,
        longest=waits.longest,
    )


def _waits_by_minute(report: EventReport, timeline: Timeline) -> Chart | None:
    p50, p90 = report.wait_p50_per_minute, report.wait_p90_per_minute
    if p50 is None or p90 is None or not any(v is not None for v in p50):
        return None
    peak = max(v for v in p90 if v is not None) if any(v is not None for v in p90) else 0
    at = timeline.at(list(p90).index(peak)) if peak else ""
    text = "The median and 90th percentile wait of the visitors let in in each minute" + (
        f"; 9 in 10 of those let in at {at} had waited {within(peak)}." if peak else "."
    )
    return figures.lines_per_minute(
        "waits-by-minute",
        WHAT,
        timeline,
        title="Waits by minute of admission",
        per_minute={"median": p50, "p90": p90},
        colours=[svg.MARKERS, svg.RATE],
        ylabel="seconds waited",
        caption="Waits of those let in, by minute",
        text=text,
        value=short_duration,
    )


def _inside(report: EventReport, timeline: Timeline) -> Chart | None:
    if report.capacity is None:
        return None
    c = report.capacity
    return figures.lines_per_minute(
        "inside",
        WHAT,
        timeline,
        title="Inside the shop, against its cap",
        per_minute={"inside": c.inside_per_minute, "cap": c.max_inside_per_minute},
        colours=[svg.ADMITTED, svg.RATE],
        ylabel="visitors inside",
        caption="Inside as each minute began",
        text=_full(report, timeline),
        stairs="cap",
    )


def _gone_chart(report: EventReport, timeline: Timeline) -> Chart | None:
    if report.capacity is not None:
        c = report.capacity
        per_minute = {
            "left the line": c.left_line_per_minute,
            "left the shop": c.left_shop_per_minute,
            "never arrived": c.no_shows_per_minute,
            "session ran out": c.sessions_ended_per_minute,
        }
        colours = [svg.ARRIVALS, svg.ADMITTED, svg.RATE, svg.WAITING]
    else:
        per_minute = {"came back after their admission expired": report.rejoined_per_minute}
        colours = [svg.RATE]
    if not any(any(v) for v in per_minute.values()):
        return None  # the summary says nobody did
    return figures.stacked_per_minute(
        "gone",
        WHAT,
        timeline,
        title="Visitors who left or never came",
        per_minute=per_minute,
        colours=colours,
        ylabel="visitors",
        caption="Who left, per minute",
        text=_gone(report),
    )


def _governor(report: EventReport, timeline: Timeline) -> Chart | None:
    g = report.governor_per_minute
    if not report.governor or not any(any(counts) for counts in g.values()):
        return None  # the summary says the governor is off, or changed nothing
    return figures.stacked_per_minute(
        "governor",
        WHAT,
        timeline,
        title="The governor's decisions per minute",
        per_minute={"halved": g["halved"], "held": g["held"], "raised": g["raised"]},
        colours=[svg.FAULT_COLOURS["crash"], svg.FAULT_COLOURS["throttle"], svg.ADMITTED],
        ylabel="checks",
        caption="Governor decisions per minute",
        text=_governed(report, timeline),
    )


def _requests_chart(report: EventReport, timeline: Timeline) -> Chart | None:
    series: dict[str, Sequence[float | None]] = {}
    if report.origin_requests_per_minute is not None and any(report.origin_requests_per_minute):
        series["origin (API Gateway)"] = report.origin_requests_per_minute
    if report.edge_requests_per_minute is not None and any(report.edge_requests_per_minute):
        series["edge (CloudFront)"] = report.edge_requests_per_minute
    if not series:
        return None
    return figures.lines_per_minute(
        "requests",
        WHAT,
        timeline,
        title="Requests per minute",
        per_minute=series,
        colours=[svg.ADMITTED, svg.WAITING][: len(series)],
        ylabel="requests per minute",
        caption="Requests per minute",
        text=_requests(report, timeline),
    )


# The report's charts, top to bottom; a builder returns None when its chart does not apply.
CHARTS: tuple[ChartBuilder, ...] = (
    _per_minute,
    _waiting,
    _waits,
    _waits_by_minute,
    _inside,
    _gone_chart,
    _governor,
    _requests_chart,
)


def _decisions(report: EventReport) -> str:
    """The governor's last decisions in the window with their reasons (the room keeps 10)."""
    if not report.governor_decisions:
        return ""
    rows = [
        (datetime.fromtimestamp(d.at, UTC).strftime("%H:%M:%S"), d.describe())
        for d in report.governor_decisions
    ]
    table = Table("The governor's last decisions (UTC)", ("time", "decision and why"), rows)
    said = (
        "The room keeps its governor's last 10 decisions with their reasons; these fall in "
        "the window."
    )
    return (
        '<section class="chart words" id="decisions" aria-labelledby="decisions-heading">'
        '<h2 id="decisions-heading">The governor\'s last decisions</h2>'
        f"<p>{html.escape(said)}</p>{table.to_html()}</section>"
    )
