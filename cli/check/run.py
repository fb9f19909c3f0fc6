"""One check of a room: whether it may send test visitors now, the journey, the clean-up, and
what is printed (a line per step, or JSON).

The check sends visitors only to a room that would let them through without delaying anyone:
on, not held, closed or scheduled, and with nobody waiting (nor, in capacity mode, a full
shop). Otherwise it says why in one sentence and what to do, and sends nobody.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from beekeeper.cli.check.http import Answer, Unreachable, send
from beekeeper.cli.check.journey import Journey, RoomAddress, StepFailed
from beekeeper.cli.check.operator_side import OperatorSide
from beekeeper.cli.room_status import StatusReport
from beekeeper.core.datamodel import DRAW_DRAWN
from beekeeper.core.schedule import format_starts_at
from beekeeper.core.settings import capped
from beekeeper.core.words import count

# Enough to see the line at work (two places, one after the other) at a few requests' cost.
VISITORS = 2
# How long the clean-up waits for the room to free a test visitor's place (capacity mode: the
# warden frees a leaver's within seconds while a consumer runs, within a minute otherwise).
FREED_WAIT_SECONDS = 75.0


@dataclass
class StepResult:
    step: str
    passed: bool | None  # None: not run (an earlier step failed)
    seconds: float = 0.0
    saw: str = ""
    look: str = ""  # for a failed step: what to look at


@dataclass
class CheckReport:
    room: str
    url: str
    visitors: int
    steps: list[StepResult] = field(default_factory=list)
    # Why the check sent no visitor (the room's state); empty when it ran.
    refused: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.refused and all(step.passed for step in self.steps)

    @property
    def failed(self) -> StepResult | None:
        return next((step for step in self.steps if step.passed is False), None)

    def text(self) -> str:
        return render_text(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "url": self.url,
            "visitors": self.visitors,
            "passed": self.passed,
            "refused": self.refused or None,
            "seconds": round(self.seconds, 2),
            "steps": [{**asdict(step), "seconds": round(step.seconds, 2)} for step in self.steps],
        }


def why_not_now(state: StatusReport, now: float) -> str:
    """Why test visitors must not go through the room now (a sentence), or ''."""
    name = state.room
    if not state.enabled:
        return (
            f"Room {name!r} is off: every visitor goes straight to the shop, so there is no "
            f"line to check. Switch it on with `beekeeper on {name}`, check it, and switch it "
            f"off again with `beekeeper off {name}` if it should wait."
        )
    if state.closed:
        return (
            f"Room {name!r} is closed: the event is over, nobody joins and nobody more is let "
            f"in. `beekeeper resume {name}` opens it again."
        )
    if state.held:
        return (
            f"Room {name!r} is held: nobody is let in and every place is kept until "
            f"`beekeeper resume {name}`, so a test visitor could only wait. Resume it, then "
            "check."
        )
    if state.starts_at and (state.starts_at > now or state.draw_state not in ("", DRAW_DRAWN)):
        return (
            f"Room {name!r} is scheduled to start at {format_starts_at(state.starts_at)}: until "
            "its draw, a visitor takes a pre-queue place in the draw, which is for the event's "
            "visitors alone. Check it after the start, or before you schedule it."
        )
    if state.waiting > 0:
        return (
            f"{count(state.waiting, 'visitor')} {'is' if state.waiting == 1 else 'are'} "
            f"waiting in room {name!r}'s line: the check sends test visitors only when nobody "
            f"waits, so that none is delayed. Run it again when the line is empty (`beekeeper "
            f"status {name}` shows it)."
        )
    if capped(state.max_inside) and state.inside >= state.max_inside:
        return (
            f"The shop behind room {name!r} is full ({state.inside} of {state.max_inside} "
            "places held): a test visitor would take the next free place from a real one. "
            "Run the check when a place is free."
        )
    return ""


def _room_seen(state: StatusReport) -> str:
    line = f"on at {state.rate}/min, nobody waiting"
    if capped(state.max_inside):
        line += f", {state.inside} of {state.max_inside} places held"
    return line


@dataclass
class Check:
    operator: OperatorSide
    address: RoomAddress
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    http: Callable[..., Answer] = send
    visitors: int = VISITORS
    # Solving uses the machine's CSPRNG for the solver's nonce (the work page's own).
    token_bytes: Callable[[int], bytes] | None = None

    def run(self) -> CheckReport:
        started = self.clock()
        report = CheckReport(self.address.name, self.address.base + "/", self.visitors)
        state = self._timed(report, "room", self.operator.state)
        if state is None:
            return self._done(report, started)
        report.refused = why_not_now(state, self.clock())
        if report.refused:
            report.steps[-1] = StepResult(
                "room", False, report.steps[-1].seconds, report.refused, ""
            )
            return self._done(report, started)
        report.steps[-1].saw = _room_seen(state)
        pass_id = self.operator.issue_pass(self.visitors)
        journey = Journey(
            self.address,
            pass_id,
            self.visitors,
            clock=self.clock,
            sleep=self.sleep,
            http=self.http,
            token_bytes=self.token_bytes,
            publish_resync=self.operator.publish_resync,
        )
        try:
            for step in journey.steps():
                if report.failed is not None:
                    report.steps.append(StepResult(step.name, None))
                else:
                    self._timed(report, step.name, step.run)
        finally:
            self._timed(report, "clean up", lambda: self._clean_up(journey, pass_id))
        return self._done(report, started)

    def _timed(self, report: CheckReport, name: str, run: Callable[[], Any]) -> Any:
        began = self.clock()
        result = StepResult(name, True)
        report.steps.append(result)
        value = None
        try:
            value = run()
        except StepFailed as failed:
            result.passed, result.saw, result.look = False, failed.saw, failed.look
        except Unreachable as error:
            result.passed = False
            result.saw = f"No answer from {error.url}: {error.reason}."
            result.look = (
                "Is the room's address right (`beekeeper list`) and reachable from this "
                "machine? A room deployed a moment ago may need a few minutes for its edge."
            )
        result.seconds = self.clock() - began
        if result.passed and isinstance(value, str):
            result.saw = value
        return value

    def _clean_up(self, journey: Journey, pass_id: str) -> str:
        """The pass, the test visitors' items and their spent work, removed; in capacity mode
        once the room has freed their places (an item removed first would keep its place)."""
        tokens = journey.tokens
        if self.address.capacity:
            # Unreachable: the places then end with the claim window, as a no-show's do.
            with contextlib.suppress(Unreachable):
                journey.give_back_places()
            deadline = self.clock() + FREED_WAIT_SECONDS
            while not all(self.operator.place_freed(token.id) for token in tokens):
                if self.clock() >= deadline:
                    raise StepFailed(
                        "The room has not freed the test visitors' places yet, so their items "
                        "stay (removing them would keep the places taken).",
                        "The room frees them when their claim window ends; `beekeeper status "
                        f"{self.address.name}` shows the places held.",
                    )
                self.sleep(1.0)
        still_waiting = [t for t in tokens if self.operator.visitor(t.id) is None]
        removed = self.operator.remove(pass_id, [t.id for t in tokens], journey.spent)
        line = f"{count(removed, 'item')} removed: the pass, the test visitors' and their work's"
        if still_waiting:
            line += (
                f"; {count(len(still_waiting), 'test visitor')} still in line is let in later, "
                "counted nowhere, and its item expires by itself"
            )
        return line

    def _done(self, report: CheckReport, started: float) -> CheckReport:
        report.seconds = self.clock() - started
        return report


def render_text(report: CheckReport) -> str:
    """A line per step (its time and what it saw), then one sentence: the verdict, or the
    first failure with what the room answered and what to look at."""
    width = max(len(step.step) for step in report.steps) if report.steps else 0
    lines = [
        f"Checking room {report.room!r} at {report.url} with "
        f"{count(report.visitors, 'test visitor')}:"
    ]
    for step in report.steps:
        mark = {True: "ok  ", False: "FAIL", None: "--  "}[step.passed]
        seen = step.saw if step.passed is not None else "not run"
        lines.append(f"  {mark}  {step.step:<{width}}  {step.seconds:6.2f} s  {seen}")
    failed = report.failed
    if report.refused:
        lines.append(f"Nothing was sent: {report.refused}")
    elif failed is not None:
        lines.append(f"The check failed at {failed.step!r}: {failed.saw} {failed.look}".rstrip())
    else:
        lines.append(
            f"Every step passed in {report.seconds:.1f} s: room {report.room!r} lets visitors "
            "through to the shop, with tickets the shop can verify."
        )
    return "\n".join(lines)
