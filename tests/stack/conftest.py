"""One synth of a fully featured room per pytest session, shared by every stack test (and one
of the same room with every setting changed, for the tests that compare the two).

The room turns on everything optional (governor schedule, WAF, a logo, API logging), so one
template shows every resource the stack can make; cdk-nag runs during the same synth
(stack_testkit.py).
"""

from __future__ import annotations

import pytest

from tests.support.stack_testkit import CHANGED_ROOM, Synthesized, synthesize


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("cdk.out"))


@pytest.fixture(scope="session")
def synthesized_changed(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    """The same room after its room file was edited in every way (and without API logs)."""
    return synthesize(tmp_path_factory.mktemp("cdk.out"), CHANGED_ROOM, api_logging=False)
