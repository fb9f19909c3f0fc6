"""The marketing link's work, done as the work page does it, for the tests' clients."""

from __future__ import annotations

import secrets
from urllib.parse import quote

from beekeeper.core.join_work import WORK_PARAMETER, Challenge, solve, visitor_nonce

WORK_LOCATION = "work#"


def solved_link(marketing_url: str, status: int, location: str | None) -> str | None:
    """The marketing link with the solution of the challenge its answer (`status`, `location`)
    asked for, solved with a nonce of its own as the work page does (the challenge may be the
    edge's shared copy), or None when the answer asked for no work."""
    if status != 302 or not (location or "").startswith(WORK_LOCATION):
        return None
    challenge = Challenge.parse(str(location).removeprefix(WORK_LOCATION))
    assert challenge is not None, location
    solution = solve(challenge, visitor_nonce(secrets.token_bytes))
    return f"{marketing_url}?{WORK_PARAMETER}={quote(str(solution), safe='')}"
