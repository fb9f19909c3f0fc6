"""API Gateway mapping templates for /polling, /client, /state and /jwks.json (and, in capacity
mode, /enter and /presence): which route uses which template is the route table's
(beekeeper.core.routes); what the stack configures around them is beekeeper.vtl.methods.

The templates (*.vtl beside this file) hold synth-time placeholders written `{{NAME}}`; the
stack and local mode fill them with the same function, so both run the very same template.
`{{` is not Velocity syntax, so a placeholder can not be mistaken for a template reference.

Files whose names start with `_` are shared fragments, not templates: `template_values`
inserts them where a template says `{{READ_TOKEN}}`, `{{READ_REDEEM}}`, `{{READ_FETCH_SITE}}`,
`{{PARSE_NUMBER}}` or `{{SESSION_REQUEST}}` (API Gateway has no #parse, and one copy of the
token check is easier to trust than four). A fragment's own placeholders are filled before it
is inserted, and it is inserted without its last line break (the placeholder's line has one).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping

from beekeeper.core import client_check, polling, schedule, sessions, shared_state, tickets
from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    CLIENT_TOKEN_PARAMETER,
    ORIGIN_TICKET_PARAMETER,
    ORIGIN_TOKEN_PARAMETER,
    STATE_ENDED,
    STATE_KEY,
    TICKET_KEYS_KEY,
    TICKET_KEYS_PUBLISHED,
)
from beekeeper.core.paths import VTL_DIR
from beekeeper.core.presence import NO_PRESENCE, Presence
from beekeeper.core.routes import ENTER
from beekeeper.core.settings import Mode

_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")

# The key the request templates read when a request carries no usable token: visitor ids are
# 22 characters, so no item can have it, and the request stays a valid DynamoDB request.
NO_VISITOR_KEY = "v#!"


def template_names() -> list[str]:
    """The template files beside this module (fragments aside); the route table's routes name
    every one of them (a test holds that)."""
    return sorted(path.name for path in VTL_DIR.glob("*.vtl") if not path.name.startswith("_"))


def load_template(name: str, values: Mapping[str, str]) -> str:
    """The template `name` with every `{{PLACEHOLDER}}` replaced; a missing value is an error."""
    return _filled(name, values)


def _filled(name: str, values: Mapping[str, str]) -> str:
    """The file `name` (a template or a fragment) with its placeholders replaced, in one pass:
    a value's text is never searched for placeholders again."""
    text = _source(name)

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"{name} needs a value for {{{{{key}}}}}")
        return values[key]

    return _PLACEHOLDER.sub(substitute, text)


# The status of a refusal a template answers the visitor with ({"allow": false}, {"left":
# false}): an answer, not an error. DynamoDB's 400 reaches the refusal template through an
# integration response of its own status (400, vtl.methods); the template sets the status the
# visitor sees with $context.responseOverride.status.
REFUSED_STATUS = 200
# The status a refusal template gives an answer that is the room's trouble (throttling).
ERROR_STATUS = 503
# The status of /client's answer to a redeem parameter other than CLIENT_REDEEM_VALUE, and to a
# redeem without the token in the query.
BAD_REQUEST_STATUS = 400
MALFORMED_REDEEM_ANSWER = {
    "allow": False,
    "message": (
        f"{CLIENT_REDEEM_PARAMETER} takes one value, {CLIENT_REDEEM_VALUE}: send "
        f"{CLIENT_REDEEM_PARAMETER}={CLIENT_REDEEM_VALUE} to admit a token once, or leave "
        f"{CLIENT_REDEEM_PARAMETER} out to check it"
    ),
}
# /client's answer to a redeem without the token in the query: the cookie alone redeems nothing
# (vtl/_read-redeem.vtl says why).
REDEEM_WITHOUT_TOKEN_ANSWER = {
    "allow": False,
    "message": (
        f"a redeem takes the visitor's token in the query, as a shop's server sends it: send "
        f"{CLIENT_TOKEN_PARAMETER}=<token>&{CLIENT_REDEEM_PARAMETER}={CLIENT_REDEEM_VALUE}; "
        f"the visitor's cookie alone redeems nothing"
    ),
}


@functools.cache
def _source(name: str) -> str:
    """A template file's text. Read once: the files ship with the package and never change
    while it runs, and local mode renders them on every request."""
    return (VTL_DIR / name).read_text(encoding="utf-8")


def template_values(
    *,
    table_name: str,
    origin: str,
    mode: Mode = Mode.RATE,
    session_seconds: int = 0,
    presence: Presence = NO_PRESENCE,
) -> dict[str, str]:
    """Synth-time values for the placeholders; the stack passes its table's name token.

    In a room of `mode` capacity, /polling's admission sends the page through /enter ("via"),
    which starts a session of `session_seconds`. `presence`: the room's presence settings,
    which the heartbeat's templates take (core/presence.py).

    ORIGIN_JSON is the origin URL as a JSON string literal (quotes included).
    ORIGIN_TOKEN_PREFIX is `<origin>?beekeeper_token=` (or `&`), placed inside a single-quoted
    Velocity string, where neither `$` nor `#` is interpreted; the room settings already refuse
    quotes, backslashes and control characters in the origin, which keeps it JSON-safe too.
    """
    if any(ch in origin for ch in "'\"\\") or any(ord(ch) < 32 for ch in origin):
        raise ValueError("the origin must not contain quotes, backslashes or control characters")
    separator = "&" if "?" in origin else "?"
    values = {
        "TABLE_NAME": table_name,
        "ORIGIN_JSON": json.dumps(origin),
        "ORIGIN_TOKEN_PREFIX": f"{origin}{separator}{ORIGIN_TOKEN_PARAMETER}=",
        "ORIGIN_TICKET_QUERY": f"&{ORIGIN_TICKET_PARAMETER}=",
        "TICKET_PATTERN": tickets.TICKET_PATTERN.pattern,
        "TICKET_KEYS_KEY": TICKET_KEYS_KEY,
        "TICKET_KEYS_PUBLISHED": TICKET_KEYS_PUBLISHED,
        "JWK_PATTERN": tickets.PUBLIC_JWK_PATTERN.pattern,
        "READ_TOKEN": _fragment(_source("_read-token.vtl")),
        "PARSE_NUMBER": _fragment(_source("_parse-number.vtl")),
        "POLL_AFTER_MIN": str(polling.POLL_AFTER_MIN_SECONDS),
        "POLL_AFTER_MAX": str(polling.POLL_AFTER_MAX_SECONDS),
        "POLLS_PER_CLAIM": str(polling.POLLS_PER_CLAIM),
        "POLL_AFTER_WITHOUT_RATE": str(polling.POLL_AFTER_WITHOUT_RATE_SECONDS),
        "POLL_AFTER_ROOM_OFF": str(polling.POLL_AFTER_ROOM_OFF_SECONDS),
        "UNKNOWN_AFTER_MINUTES": str(polling.UNKNOWN_AFTER_MINUTES),
        "UNKNOWN_MIN_MARGIN": str(polling.UNKNOWN_MIN_MARGIN),
        "PREQUEUE_POLL_MIN": str(schedule.PREQUEUE_POLL_MIN_SECONDS),
        "PREQUEUE_POLL_MAX": str(schedule.PREQUEUE_POLL_MAX_SECONDS),
        "PREQUEUE_LAST_MINUTE": str(schedule.PREQUEUE_LAST_MINUTE_SECONDS),
        "PREQUEUE_DRAWING_POLL": str(schedule.PREQUEUE_DRAWING_POLL_SECONDS),
        "PAUSED_POLL": str(schedule.PAUSED_POLL_SECONDS),
        "MESSAGE_PATTERN": schedule.MESSAGE_PATTERN,
        "STATE_KEY": STATE_KEY,
        "HISTORY_PATTERN": shared_state.HISTORY_PATTERN,
        **{f"STATE_{state.upper()}": state for state in shared_state.STATES},
        "ORIGIN": origin,
        # The route the admission goes through, by its name: the page knows its URL.
        "ENTER_VIA": f', "via": {json.dumps(ENTER.name)}' if mode is Mode.CAPACITY else "",
        "SESSION_SECONDS": str(session_seconds),
        "STATE_ENDED": STATE_ENDED,
        "ERROR_STATUS": str(ERROR_STATUS),
        "REFUSED_STATUS": str(REFUSED_STATUS),
        "BAD_REQUEST_STATUS": str(BAD_REQUEST_STATUS),
        "MALFORMED_REDEEM_ANSWER": json.dumps(MALFORMED_REDEEM_ANSWER),
        "REDEEM_WITHOUT_TOKEN_ANSWER": json.dumps(REDEEM_WITHOUT_TOKEN_ANSWER),
        "TOKEN_PARAMETER": CLIENT_TOKEN_PARAMETER,
        **sessions.template_values(),
        **client_check.template_values(),
        **presence.template_values(session_seconds),
    }
    # Fragments that hold placeholders themselves, filled in order (each may use the ones
    # before it).
    values["READ_REDEEM"] = _fragment(_filled("_read-redeem.vtl", values))
    values["READ_FETCH_SITE"] = _fragment(_source("_read-fetch-site.vtl"))
    values["SESSION_REQUEST"] = _fragment(_filled("_session-request.vtl", values))
    return values


def _fragment(text: str) -> str:
    """A fragment as it replaces its placeholder: a placeholder stands on a line of its own,
    whose line break ends the fragment's last line. Kept, the fragment's own final line break
    would be a blank line of text, which Velocity renders: answers would start with them."""
    return text.removesuffix("\n")
