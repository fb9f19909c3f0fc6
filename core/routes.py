"""The routes API Gateway answers straight from DynamoDB through mapping templates: one record
per route, the one description the stack synthesizes from, local mode's gateway is built from,
the gateway answers and docs/vtl.md's route table read.

A new templated route is one `Route` here plus its templates (vtl/*.vtl). What the stack makes
of a record (the method, its integration and responses, in API Gateway's own shape) is
beekeeper.vtl.methods; what API Gateway then does with it is beekeeper.apigateway.

Standard library only: it ships in the Lambda asset with the rest of core/.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from beekeeper.core.presence import PRESENCE_ROUTE, PRESENT
from beekeeper.core.settings import Mode
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS, STATE_ROUTE
from beekeeper.core.tickets import JWKS_ROUTE

# The room's mode is core/settings.py's (`RoomSettings.mode`); short names for the registry.
RATE = Mode.RATE
CAPACITY = Mode.CAPACITY
MODES: tuple[Mode, ...] = tuple(Mode)

# Seconds the "unavailable" answer (the room could not read its table) asks a client to wait.
ERROR_RETRY_AFTER_SECONDS = 5
# Capacity mode's POST /leave: the producer Lambda's (room/leaving.py), which alone can tell
# a token the room issued from a forged one; the shop's pages may call it (CORS, a preflight).
# Not a template route, so not in the registry.
LEAVE_ROUTE = "leave"
LEAVE_METHOD = "POST"


@dataclass(frozen=True)
class Route:
    """One templated route: `method /name`, a DynamoDB action, its templates and answers."""

    name: str  # the path part: the route answers `/<name>`
    action: str  # the DynamoDB action the request template targets
    # The request template of each mode that has the route.
    request_templates: Mapping[Mode, str]
    response_template: str  # DynamoDB's 2xx
    method: str = "GET"
    # DynamoDB's 400 (a failed condition, or throttling) on a route that writes on a
    # condition: a template that answers the visitor and sets the status itself.
    refusal_template: str | None = None
    # The static "unavailable" answer (503, Retry-After) for any other DynamoDB error; None for
    # a redirect, whose one template answers whatever DynamoDB said.
    error_body: str | None = None
    # The request Content-Types a request template is kept under (anything else: 415).
    request_content_types: tuple[str, ...] = ("application/json",)
    # Every answer is a 302 to the shop whose Location the template sets.
    redirect: bool = False
    # The shop's own pages may call it with the visitor's cookie: CORS for the shop's origin
    # and an OPTIONS preflight.
    cors: bool = False
    # Its templates read the visitor's token (the shared READ_TOKEN fragment).
    reads_token: bool = False
    # Answers a cache may keep (public, for the key rotation's wait); every other answer is
    # about one visitor and is never stored.
    public_cache: bool = False
    # Seconds the edge (core/edge.py) and browsers may keep an answer: the same for everyone.
    # 0: the edge keeps nothing.
    edge_seconds: int = 0

    @property
    def modes(self) -> tuple[Mode, ...]:
        return tuple(mode for mode in MODES if mode in self.request_templates)

    def request_template(self, mode: Mode) -> str:
        return self.request_templates[mode]


def _unavailable(answer: Mapping[str, object]) -> str:
    return json.dumps(dict(answer))


REGISTRY: tuple[Route, ...] = (
    Route(
        "polling",
        "BatchGetItem",
        {RATE: "polling-request.vtl", CAPACITY: "polling-request.vtl"},
        "polling-response.vtl",
        error_body=_unavailable(
            {"allow": False, "state": "unavailable", "poll_after": ERROR_RETRY_AFTER_SECONDS}
        ),
        reads_token=True,
    ),
    # A check, or with redeem=1 a redeem: one conditional write either way (core/client_check);
    # in capacity mode the check renews the session.
    Route(
        "client",
        "UpdateItem",
        {RATE: "client-request.vtl", CAPACITY: "client-session-request.vtl"},
        "client-response.vtl",
        refusal_template="client-refused.vtl",
        error_body=_unavailable({"allow": False}),
        cors=True,
        reads_token=True,
    ),
    # Following the admission through /enter starts the session, then on to the shop.
    Route(
        "enter",
        "UpdateItem",
        {CAPACITY: "enter-request.vtl"},
        "enter-response.vtl",
        redirect=True,
        reads_token=True,
    ),
    # (POST /leave is the producer Lambda's in capacity mode, not a template's: only it can
    # tell a token the room issued from a forged one; room/leaving.py.)
    # The presence script's heartbeat from the shop's pages (core/presence.py): a POST without a
    # body or cookie, so a browser sends it without a preflight (a CORS simple request); every
    # answer is about one visitor and is never stored.
    Route(
        PRESENCE_ROUTE,
        "UpdateItem",
        {CAPACITY: "presence-request.vtl"},
        "presence-response.vtl",
        method="POST",
        refusal_template="presence-refused.vtl",
        error_body=_unavailable({PRESENT: False}),
        request_content_types=("application/json", "text/plain"),
        cors=True,
        reads_token=True,
        public_cache=False,
    ),
    # The shared state document: the same for every visitor, kept by the edge a moment.
    Route(
        STATE_ROUTE,
        "GetItem",
        {RATE: "state-request.vtl", CAPACITY: "state-request.vtl"},
        "state-response.vtl",
        error_body=_unavailable({"state": "unavailable", "retry_after": ERROR_RETRY_AFTER_SECONDS}),
        edge_seconds=STATE_MAX_AGE_SECONDS,
    ),
    Route(
        JWKS_ROUTE,
        "GetItem",
        {RATE: "jwks-request.vtl", CAPACITY: "jwks-request.vtl"},
        "jwks-response.vtl",
        # Not an empty key set: a shop's cache must keep the keys it has.
        error_body=_unavailable({"message": "the room's keys can not be read right now"}),
        public_cache=True,
    ),
)

_BY_NAME = {route.name: route for route in REGISTRY}


def routes(mode: Mode) -> dict[str, Route]:
    """The templated routes of a room in `mode`, by name, in the registry's order."""
    return {route.name: route for route in REGISTRY if mode in route.request_templates}


def route(name: str) -> Route:
    """The route `name` (any mode); KeyError names the unknown route."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no templated route named {name!r}") from None


def visitor_routes(mode: Mode) -> tuple[str, ...]:
    """The routes of `mode` whose templates read the visitor's token."""
    return tuple(name for name, found in routes(mode).items() if found.reads_token)


def template_files() -> frozenset[str]:
    """Every template file a route names (request, response, refusal)."""
    names: set[str] = set()
    for found in REGISTRY:
        names.update(found.request_templates.values())
        names.add(found.response_template)
        if found.refusal_template:
            names.add(found.refusal_template)
    return frozenset(names)


__all__ = [
    "CAPACITY",
    "ERROR_RETRY_AFTER_SECONDS",
    "LEAVE_METHOD",
    "LEAVE_ROUTE",
    "MODES",
    "RATE",
    "REGISTRY",
    "Mode",
    "Route",
    "route",
    "routes",
    "template_files",
    "visitor_routes",
]
