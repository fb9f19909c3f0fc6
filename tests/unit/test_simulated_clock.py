"""The simulated clock's order: by moment, and the actions of one moment in the order they
were scheduled, whenever they were scheduled (simulator/clock.py)."""

from __future__ import annotations

from beekeeper.simulator.clock import Scheduler


def test_actions_run_by_moment_then_in_the_order_they_were_scheduled() -> None:
    scheduler = Scheduler(start=0.0)
    ran: list[str] = []

    def first() -> None:
        ran.append("first")
        # Scheduled while its moment runs: after what was due at it already...
        scheduler.at(2.0, lambda: ran.append("same moment, later"))
        # ... and an earlier moment scheduled late still runs before the rest of this one.
        scheduler.at(1.0, lambda: ran.append("earlier moment"))

    scheduler.at(2.0, first)
    scheduler.at(3.0, lambda: ran.append("third"))
    scheduler.at(2, lambda: ran.append("second"))  # the same moment, as an int
    scheduler.at(0.5, lambda: ran.append("start"))
    scheduler.run_until(10.0)
    assert ran == ["start", "first", "earlier moment", "second", "same moment, later", "third"]
    assert scheduler.now == 10.0


def test_a_sleep_runs_what_is_due_before_its_end_first() -> None:
    scheduler = Scheduler(start=0.0)
    ran: list[tuple[str, float]] = []

    def process() -> None:
        scheduler.sleep(1.0)  # nothing due before 1.0: the clock just moves on
        ran.append(("awake", scheduler.now))
        scheduler.sleep(2.0)
        ran.append(("awake", scheduler.now))

    scheduler.spawn(0.0, process)
    scheduler.at(2.0, lambda: ran.append(("at", scheduler.now)))
    scheduler.run_until(5.0)
    assert ran == [("awake", 1.0), ("at", 2.0), ("awake", 3.0)]
