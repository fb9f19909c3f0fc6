"""The templates' rules on who may write, as the local renderer and Velocity 1.7 evaluate them.

The lines below are taken from the template files themselves (a redeem without the token in
the query, a heartbeat that never reads the cookie, /enter from another page), fed literal
values in place of what `$input` gives, and rendered by the local renderer and, where Java and
Debian's `velocity` package are installed, by Velocity 1.7 itself: a flag left unset (null) in
a condition, `||` and `&&` over parenthesized comparisons, `trim` and `toLowerCase`.
"""

from __future__ import annotations

import pytest

from beekeeper.apigateway.velocity.renderer import RenderInput, render
from beekeeper.core.paths import VTL_DIR
from tests.support.velocity_java import assert_velocity_1_7_renders, needs_velocity_1_7


def line(file: str, starting: str) -> str:
    """The one line of template `file` that starts with `starting`, with its line break."""
    (found,) = [
        text for text in (VTL_DIR / file).read_text().splitlines() if text.startswith(starting)
    ]
    return found + "\n"


REDEEM_REFUSED = line("_read-redeem.vtl", "#set($redeemRefused")
COOKIE_GUARD = line("_read-token.vtl", "#if($cookieAllowed &&")
FROM_ANOTHER_PAGE = line("_read-fetch-site.vtl", "#if(($fetchSite ==")
SESSION_TARGET = line("_session-request.vtl", "#if(($redeemRefused || $fromAnotherPage)")
ENTER_SHOP = line("enter-response.vtl", "#if(($tokenState == 'ok') && !$fromAnotherPage)")
QUERY_ONLY = (
    "#set($cookieAllowed = true)\n#if($queryTokenOnly)\n#set($cookieAllowed = false)\n#end\n"
)


def fetch_site(value: str) -> str:
    return (
        f"#set($fromAnotherPage = false)\n#set($fetchSite = '{value}')\n"
        "#set($fetchSite = $fetchSite.trim())\n#set($fetchSite = $fetchSite.toLowerCase())\n"
        f"{FROM_ANOTHER_PAGE}#set($fromAnotherPage = true)\n#end\n$fromAnotherPage\n"
    )


CASES = [
    # (template, what Velocity 1.7 renders)
    *[
        (f"#set($redeemState = '{state}')\n{REDEEM_REFUSED}$redeemRefused\n", f"{refused}\n")
        for state, refused in [
            ("none", "false"),
            ("redeem", "false"),
            ("malformed", "true"),
            ("without_token", "true"),
        ]
    ],
    # Only /presence sets $queryTokenOnly; every other template leaves it unset.
    (f"{QUERY_ONLY}$cookieAllowed\n", "true\n"),
    (f"#set($queryTokenOnly = true)\n{QUERY_ONLY}$cookieAllowed\n", "false\n"),
    (
        f"{QUERY_ONLY}#set($tokenState = 'no_token')\n{COOKIE_GUARD}read\n#end\ndone\n",
        "read\ndone\n",
    ),
    (
        f"#set($queryTokenOnly = true)\n{QUERY_ONLY}#set($tokenState = 'no_token')\n"
        f"{COOKIE_GUARD}read\n#end\ndone\n",
        "done\n",
    ),
    *[
        (fetch_site(value), f"{other}\n")
        for value, other in [
            (" Cross-Site ", "true"),
            ("SAME-SITE", "true"),
            ("same-origin", "false"),
            ("none", "false"),
            ("", "false"),
        ]
    ],
    *[
        (
            f"#set($redeemRefused = {refused})\n#set($fromAnotherPage = {other})\n"
            f"#set($requestTimeKnown = {known})\n"
            f"{SESSION_TARGET}nobody\n#else\nthe visitor\n#end\n",
            f"{expected}\n",
        )
        for refused, other, known, expected in [
            ("false", "false", "true", "the visitor"),
            ("true", "false", "true", "nobody"),
            ("false", "true", "true", "nobody"),
            ("false", "false", "false", "nobody"),
        ]
    ],
    *[
        (
            f"#set($tokenState = '{state}')\n#set($fromAnotherPage = {other})\n"
            f"{ENTER_SHOP}with the token\n#else\nbare\n#end\n",
            f"{expected}\n",
        )
        for state, other, expected in [
            ("ok", "false", "with the token"),
            ("ok", "true", "bare"),
            ("malformed", "false", "bare"),
        ]
    ],
]  # fmt: skip


@pytest.mark.parametrize(("template", "velocity_1_7"), CASES)
def test_the_write_rules_render_as_in_velocity_1_7(template: str, velocity_1_7: str) -> None:
    assert render(template, RenderInput()) == velocity_1_7


@pytest.mark.slow
@needs_velocity_1_7
def test_the_cases_are_velocity_1_7s_own_output() -> None:
    assert_velocity_1_7_renders(CASES)
