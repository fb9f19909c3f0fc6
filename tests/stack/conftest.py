"""One synth of a fully featured room per pytest run, shared by every stack test (and one of
the same room with every setting changed, for the tests that compare the two).

The room turns on everything optional (governor schedule, WAF, a logo, API logging), so one
template shows every resource the stack can make; cdk-nag runs during the same synth
(stack_testkit.py). In a parallel run the first worker to need a synth makes it, under a lock
in the folder the run's workers share; the others read what it wrote (each synth is seconds
of CPU, the same for every worker).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from beekeeper.core.settings import RoomSettings
from tests.support.stack_testkit import CHANGED_ROOM, FULL_ROOM, Synthesized, synthesize


def once_per_run(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    settings: RoomSettings,
    make: Callable[[Path], Synthesized],
) -> Synthesized:
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, every worker's basetemp in it
    record = root / f"synth-{name}.json"
    with (root / f"synth-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.exists():
            return Synthesized.load(record, settings)
        made = make(root / f"synth-{name}.cdk.out")
        made.save(record)
        return made


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return once_per_run(tmp_path_factory, "full", FULL_ROOM, synthesize)


@pytest.fixture(scope="session")
def synthesized_changed(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The same room after its room file was edited in every way (and without API logs)."""
    return once_per_run(
        tmp_path_factory,
        "changed",
        CHANGED_ROOM,
        lambda outdir: synthesize(outdir, CHANGED_ROOM, api_logging=False),
    )
