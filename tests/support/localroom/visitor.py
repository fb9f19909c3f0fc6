"""A visitor of a local room over HTTP: joins the line by the marketing link, polls /polling."""

from __future__ import annotations

from typing import Any

from beekeeper.core import datamodel
from tests.support.localroom.http import cookie_value, follow_link, get
from tests.support.localroom.process import LocalProcess


def join(room: LocalProcess) -> str:
    """The token of a new place in line (the marketing link's cookie)."""
    answer = follow_link(room.urls["marketing URL"])
    assert answer.status == 302, answer.text
    (set_cookie,) = answer.headers_named("Set-Cookie")
    token = cookie_value(set_cookie, datamodel.COOKIE_NAME)
    assert token is not None
    return token


def polling(room: LocalProcess, token: str) -> dict[str, Any]:
    """/polling's answer for the visitor holding `token`."""
    answer = get(
        room.urls["page URL"].replace("/room", "/polling"),
        cookie=f"{datamodel.COOKIE_NAME}={token}",
    )
    assert answer.status == 200
    return answer.json()  # type: ignore[no-any-return]
