"""One synth of a fully featured room per pytest session, shared by every stack test.

The room turns on everything optional (governor schedule, WAF, a logo, API logging), so one
template shows every resource the stack can make; cdk-nag runs during the same synth
(stack_testkit.py).
"""

from __future__ import annotations

import pytest

from tests.support.stack_testkit import Synthesized, synthesize


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    return synthesize(tmp_path_factory.mktemp("cdk.out"))
