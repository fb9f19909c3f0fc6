"""The charts operators look at, each drawn from plain series and said in words beside it.

Every chart has three faces: the SVG (charts/svg.py), a text alternative that states what the
chart shows, and the numbers behind it as a table. The simulation report and the live view
of a local room draw the same charts from their own series.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from beekeeper.charts import svg
from beekeeper.charts.words import Timeline, WaitsSaid, duration, short_duration
from beekeeper.core.words import count

WIDE = (8.0, 3.0)  # inches: matplotlib's unit; the SVG scales to the page
# A chart scales with the page, but never so far down that its text (svg.FONT_SIZE points of
# the SVG's 72 to the inch) is drawn smaller than this: narrower than PLOT_MIN_WIDTH_PX (a
# phone's screen), the chart keeps that width and scrolls sideways in its box.
READABLE_TEXT_PX = 12
PLOT_MIN_WIDTH_PX = math.ceil(WIDE[0] * 72 * READABLE_TEXT_PX / svg.FONT_SIZE)

# The CSS of a page of charts (the report, the live view): each adds its own few rules.
PAGE_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       color: #111827; background: #f9fafb; line-height: 1.5; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
.chart { background: #fff; margin: 0 0 1.5rem; padding: 1rem; border-radius: 6px;
         box-shadow: 0 1px 2px rgba(0, 0, 0, .08); }
.chart svg { display: block; height: auto; min-width: PLOT_MIN_WIDTH; }
.plot { overflow-x: auto; }
figcaption { margin-top: .5rem; }
details { margin-top: .5rem; font-size: .9rem; }
table { border-collapse: collapse; margin-top: .5rem; }
caption { text-align: left; font-weight: 600; }
th, td { padding: .15rem .75rem .15rem 0; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.warning { color: #b91c1c; font-weight: 600; }
""".replace("PLOT_MIN_WIDTH", f"{PLOT_MIN_WIDTH_PX}px")


@dataclass(frozen=True)
class Table:
    caption: str
    header: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]

    def to_html(self) -> str:
        head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>"
            for row in self.rows
        )
        return (
            f"<table><caption>{html.escape(self.caption)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )


@dataclass(frozen=True)
class Chart:
    id: str
    title: str
    svg: str
    text: str  # the text alternative: what the chart shows, in a few sentences
    table: Table

    def to_html(self) -> str:
        return (
            f'<figure class="chart" id="{self.id}" aria-labelledby="{self.id}-heading">'
            f'<h2 id="{self.id}-heading">{html.escape(self.title)}</h2>'
            # A box of its own, which scrolls on a narrow screen (focusable, so that a keyboard
            # can scroll it too).
            f'<div class="plot" role="region" tabindex="0" aria-labelledby="{self.id}-heading">'
            f"{self.svg}</div>"
            f'<figcaption id="{self.id}-text">{html.escape(self.text)}</figcaption>'
            f"<details><summary>The numbers</summary>{self.table.to_html()}</details>"
            "</figure>"
        )


def _draw(what: str, chart_id: str, title: str, paint: svg.Paint) -> str:
    return svg.render_svg(
        what, paint, size=WIDE, chart_id=chart_id, title=title, described_by=f"{chart_id}-text"
    )


def _numbers(axes: Any) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axes.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=True, min_n_ticks=2))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.set_ylim(bottom=0)


def _time_axis(axes: Any, timeline: Timeline, first: float, last: float) -> None:
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True, min_n_ticks=1))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: timeline.at(value)))
    axes.set_xlim(first, last)


def _legend_above(axes: Any, columns: int) -> None:
    """Above the plot, where it hides no bar."""
    axes.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=columns, borderaxespad=0.2)


def _busiest(values: Sequence[int], timeline: Timeline) -> str:
    peak = max(values, default=0)
    return f"{peak:,} at {timeline.at(list(values).index(peak))}" if peak else "none"


def per_minute(
    chart_id: str,
    what: str,
    timeline: Timeline,
    *,
    arrivals: Sequence[int | None],
    admitted: Sequence[int],
    rate: Sequence[int | None],
) -> Chart:
    """Arrivals and admissions per minute as bars side by side, the rate as a line above (a
    minute whose arrivals or rate are not known: "-" in the table, a gap in the line)."""
    minutes = len(admitted)
    known_arrivals = [a or 0 for a in arrivals]
    title = "Arrivals and admissions per minute, against the rate"

    def paint(axes: Any) -> None:
        positions = range(minutes)
        axes.bar(
            [m - 0.2 for m in positions],
            known_arrivals,
            width=0.4,
            color=svg.ARRIVALS,
            label="arrived",
        )
        axes.bar([m + 0.2 for m in positions], admitted, width=0.4, color=svg.ADMITTED,
                 label="admitted")  # fmt: skip
        edges = [m - 0.5 for m in positions] + [minutes - 0.5]
        axes.stairs(
            [math.nan if r is None else r for r in rate],
            edges,
            baseline=None,
            color=svg.RATE,
            linewidth=2,
            linestyle="--",
            label="rate",
        )
        _numbers(axes)
        _time_axis(axes, timeline, -0.5, minutes - 0.5)
        axes.set_ylabel("visitors per minute")
        _legend_above(axes, columns=3)

    rates = sorted({r for r in rate if r is not None})
    if not rates:
        rate_words = "the rate is not known"
    elif len(rates) == 1:
        rate_words = f"the rate was {rates[0]:,} a minute throughout"
    else:
        rate_words = f"the rate was between {rates[0]:,} and {rates[-1]:,} a minute"
    span = f"{timeline.at(0)} to {timeline.at(minutes)}"
    text = (
        f"From {span}: {count(sum(known_arrivals), 'visitor')} arrived (the most in one minute "
        f"{_busiest(known_arrivals, timeline)}) and {sum(admitted):,} were admitted (the most "
        f"in one minute {_busiest(admitted, timeline)}); {rate_words}."
    )
    rows = [
        (
            timeline.at(m),
            "-" if a is None else f"{a:,}",
            f"{admitted[m]:,}",
            "-" if rate[m] is None else f"{rate[m]:,}",
        )
        for m, a in enumerate(arrivals)
    ]
    table = Table("Per minute", ("minute starting", "arrived", "admitted", "rate"), rows)
    return Chart(chart_id, title, _draw(what, chart_id, title, paint), text, table)


def waiting(
    chart_id: str,
    what: str,
    timeline: Timeline,
    *,
    step_seconds: float,
    waiting: Sequence[int | None],
) -> Chart:
    """Visitors in line over time: a filled line, one point every `step_seconds` (a point not
    known: a gap, "-" in the table)."""
    title = "Visitors waiting in line"
    times = [i * step_seconds / timeline.minute_seconds for i in range(len(waiting))]
    end = times[-1] if times else 0.0
    known = [w if w is not None else math.nan for w in waiting]

    def paint(axes: Any) -> None:
        axes.fill_between(times, known, step=None, color=svg.WAITING, alpha=0.18, linewidth=0)
        axes.plot(times, known, color=svg.WAITING, linewidth=2, label="waiting")
        _numbers(axes)
        _time_axis(axes, timeline, 0, max(end, 1 / 60))
        axes.set_ylabel("visitors in line")

    longest = max((w for w in waiting if w is not None), default=0)
    if longest == 0:
        text = f"Nobody waited in line from {timeline.at(0)} to {timeline.at(end)}."
    else:
        at = times[list(waiting).index(longest)]
        text = f"The line was longest at {timeline.at(at)}, with {count(longest, 'visitor')}"
        last = waiting[-1]
        if last == 0:
            last_busy = max(i for i, w in enumerate(waiting) if w)
            text += f", and empty from {timeline.at(times[last_busy + 1])} on."
        elif last is None:
            text += "."
        else:
            text += f"; {count(last, 'visitor')} still waited at {timeline.at(end)}."
    per_minute_step = max(1, round(timeline.minute_seconds / step_seconds))
    rows = [
        (timeline.at(times[i]), "-" if waiting[i] is None else f"{waiting[i]:,}")
        for i in range(0, len(waiting), per_minute_step)
    ]
    table = Table("In line at each minute", ("time", "visitors waiting"), rows)
    return Chart(chart_id, title, _draw(what, chart_id, title, paint), text, table)


def waits(
    chart_id: str,
    what: str,
    *,
    bin_seconds: int,
    counts: Sequence[int],
    median: float | None,
    p90: float | None,
    p99: float | None,
    longest: float | None = None,
) -> Chart:
    """How long the admitted visitors waited: a histogram with the median, p90 and p99 marked
    (each at most the longest wait, when it is given)."""
    if longest is not None:
        median, p90, p99 = (None if p is None else min(p, longest) for p in (median, p90, p99))
    title = "How long visitors waited, from joining the line to being let in"
    in_minutes = bin_seconds >= 60 or bin_seconds * len(counts) > 180
    unit = 60.0 if in_minutes else 1.0
    marks = [
        ("median", median, svg.MARKERS, ":"),
        ("p90", p90, svg.RATE, "--"),
        ("p99", p99, svg.WAITING, "-."),
    ]

    def paint(axes: Any) -> None:
        lefts = [i * bin_seconds / unit for i in range(len(counts))]
        axes.bar(
            lefts, counts, width=bin_seconds / unit, align="edge", color=svg.ARRIVALS, linewidth=0
        )
        for name, value, colour, style in marks:
            if value is not None:
                label = f"{name} {short_duration(value)}"
                axes.axvline(value / unit, color=colour, linewidth=2, linestyle=style, label=label)
        _legend_above(axes, columns=3)
        _numbers(axes)
        axes.set_xlim(left=0)
        axes.set_xlabel("wait, minutes" if in_minutes else "wait, seconds")
        axes.set_ylabel("visitors")

    admitted = sum(counts)
    if admitted == 0 or median is None or p90 is None or p99 is None:
        text = "Nobody was admitted, so there are no waits to show."
    else:
        said = WaitsSaid.of(median, p90, p99, p99 if longest is None else longest)
        text = (
            f"Of {count(admitted, 'visitor')} admitted, half got in {said.p50} "
            f"(the median, {short_duration(median)}), 9 in 10 {said.p90} "
            f"({short_duration(p90)}) and 99 in 100 {said.p99} ({short_duration(p99)})."
        )
    rows = [
        (duration(i * bin_seconds), duration((i + 1) * bin_seconds), f"{n:,}")
        for i, n in enumerate(counts)
        if n
    ]
    table = Table("Visitors by wait", ("waited at least", "and less than", "visitors"), rows)
    return Chart(chart_id, title, _draw(what, chart_id, title, paint), text, table)


# What each fault is, said to an operator.
FAULT_WORDS = {
    "crash": ("AWS call crashed", "AWS calls crashed"),
    "throttle": ("write throttled", "writes throttled"),
    "duplicates": ("message delivered twice", "messages delivered twice"),
    "double-trigger": ("second trigger delivery", "second trigger deliveries"),
}


def fault_words(kind: str, n: int) -> str:
    one, many = FAULT_WORDS.get(kind, (kind, kind))
    return count(n, one, many)


def faults(
    chart_id: str, what: str, timeline: Timeline, *, per_minute: Mapping[str, Sequence[int]]
) -> Chart:
    """The faults that struck, per minute, stacked by kind."""
    totals = {kind: sum(counts) for kind, counts in per_minute.items()}
    if not any(totals.values()):
        text = "The faults were switched on but none struck."
    else:
        text = (
            "Over the run: "
            + ", ".join(fault_words(kind, n) for kind, n in totals.items() if n)
            + "."
        )
    return stacked_per_minute(
        chart_id,
        what,
        timeline,
        title="Faults injected per minute",
        per_minute={FAULT_WORDS.get(k, (k, k))[1]: v for k, v in per_minute.items()},
        colours=[svg.FAULT_COLOURS.get(kind, svg.MARKERS) for kind in per_minute],
        ylabel="faults",
        caption="Faults per minute",
        text=text,
    )


def stacked_per_minute(
    chart_id: str,
    what: str,
    timeline: Timeline,
    *,
    title: str,
    per_minute: Mapping[str, Sequence[int]],
    colours: Sequence[str],
    ylabel: str,
    caption: str,
    text: str,
) -> Chart:
    """Counts per minute as bars stacked by kind (`per_minute`: label -> counts)."""
    minutes = len(next(iter(per_minute.values()), []))

    def paint(axes: Any) -> None:
        bottom = [0] * minutes
        for (label, counts), colour in zip(per_minute.items(), colours, strict=True):
            axes.bar(range(minutes), counts, bottom=bottom, width=0.8, color=colour, label=label)
            bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
        _numbers(axes)
        _time_axis(axes, timeline, -0.5, minutes - 0.5)
        axes.set_ylabel(ylabel)
        _legend_above(axes, columns=2)

    labels = list(per_minute)
    rows = [
        (timeline.at(m), *(f"{per_minute[label][m]:,}" for label in labels)) for m in range(minutes)
    ]
    table = Table(caption, ("minute starting", *labels), rows)
    return Chart(chart_id, title, _draw(what, chart_id, title, paint), text, table)


def lines_per_minute(
    chart_id: str,
    what: str,
    timeline: Timeline,
    *,
    title: str,
    per_minute: Mapping[str, Sequence[float | None]],
    colours: Sequence[str],
    ylabel: str,
    caption: str,
    text: str,
    value: Callable[[float], str] = lambda v: f"{v:,.0f}",
    stairs: str | None = None,
) -> Chart:
    """Values per minute as lines (a minute without a value: a gap); the series named by
    `stairs` as a dashed step (a limit, such as the shop's cap)."""
    minutes = len(next(iter(per_minute.values()), []))

    def paint(axes: Any) -> None:
        for (label, values), colour in zip(per_minute.items(), colours, strict=True):
            points = [math.nan if v is None else v for v in values]
            if label == stairs:
                edges = [m - 0.5 for m in range(minutes)] + [minutes - 0.5]
                axes.stairs(points, edges, baseline=None, color=colour, linewidth=2,
                            linestyle="--", label=label)  # fmt: skip
            else:
                axes.plot(range(minutes), points, color=colour, linewidth=2, marker=".",
                          label=label)  # fmt: skip
        _numbers(axes)
        _time_axis(axes, timeline, -0.5, minutes - 0.5)
        axes.set_ylabel(ylabel)
        _legend_above(axes, columns=min(3, len(per_minute)))

    labels = list(per_minute)
    rows = [
        (
            timeline.at(m),
            *("-" if per_minute[label][m] is None else value(per_minute[label][m] or 0)
              for label in labels),
        )
        for m in range(minutes)
    ]  # fmt: skip
    table = Table(caption, ("minute starting", *labels), rows)
    return Chart(chart_id, title, _draw(what, chart_id, title, paint), text, table)
