"""The route table: every public path of a room, one record each, and the one module that
spells them.

A record says what the path is (its name, path and integration kind), what it answers
(methods, the modes it exists in, CORS), what the edge does with it (what CloudFront caches
and forwards), who may call it, and for a templated route its DynamoDB action and templates.
Everything else is derived from TABLE:

- the stack's REST API (stacks/rest_api.py) and CloudFront behaviors (core/edge.py,
  stacks/edge.py), which local mode's gateway and edge load as they are (local/gateway.py,
  local/edge.py);
- what API Gateway answers for a path it has no method for (core/gateway_answers.py);
- the URLs the producer redirects to, the page's and the work page's URLs and their
  Content-Security-Policy (waiting_room_site), the shop's presence script, the stack's and
  local mode's URL outputs, the tickets' issuer and key set (core/tickets.py);
- the simulator's and the cost model's requests at the edge and the origin;
- the route tables of docs/vtl.md, docs/stack.md, docs/data-model.md and docs/local.md,
  which tests/unit/test_route_table.py holds to it.

A new path is one record here (and, by its kind, its templates, its page or its Lambda
route); no other product module spells a path (tests/unit/test_route_table.py holds that).
A record may also name an endpoint outside the room's address that the page connects to
(kind EXTERNAL: no path, no method, no edge behavior, its Content-Security-Policy source).

Standard library only: it ships in the Lambda asset with the rest of core/.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from beekeeper.core.datamodel import COOKIE_NAME, TOKEN_HEADER
from beekeeper.core.join_work import SHARED_SECONDS, WORK_PARAMETER
from beekeeper.core.presence import PRESENT
from beekeeper.core.settings import Mode
from beekeeper.core.shared_state import STATE_MAX_AGE_SECONDS

# The room's mode is core/settings.py's (`RoomSettings.mode`); short names for the registry.
RATE = Mode.RATE
CAPACITY = Mode.CAPACITY
MODES: tuple[Mode, ...] = tuple(Mode)

# Seconds the "unavailable" answer (the room could not read its table) asks a client to wait.
ERROR_RETRY_AFTER_SECONDS = 5
# The pages (and the presence script) are the same for everyone: the edge keeps them a minute
# (a redeployed page is seen within that), browsers ask again on every load (core/headers.py).
PAGE_EDGE_SECONDS = 60


class Kind(StrEnum):
    """How a path is answered."""

    TEMPLATE = "template"  # API Gateway's VTL templates against DynamoDB (vtl/methods.py)
    PRODUCER = "producer"  # the producer Lambda, a proxy integration (room/producer.py)
    PAGE = "page"  # an HTML page served by the API itself (a MOCK integration)
    SCRIPT = "script"  # a script served by the API itself (a MOCK integration)
    EXTERNAL = "external"  # an endpoint outside the room's address the page connects to


class Caller(StrEnum):
    """Who may call a path (its CORS and the page's URLs follow from it)."""

    VISITOR = "the visitor's browser"  # following a link; or the visitor's app (docs/apps.md)
    ROOM_PAGE = "the room's own page"  # the waiting room page and the work page
    SHOP_SERVER = "the shop's server"  # server to server, with the visitor's token
    SHOP_PAGES = "the shop's pages"  # the shop's own pages, in the visitor's browser


@dataclass(frozen=True)
class CacheKey:
    """What of a request a cached answer is kept under, beside its path (a cache policy's
    cookies, query string parameters and headers); empty: one copy for everyone."""

    cookies: tuple[str, ...] = ()
    query: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.cookies or self.query or self.headers)


# Nothing of the request: one copy for everyone.
ONE_COPY = CacheKey()


@dataclass(frozen=True)
class EdgeRule:
    """What CloudFront does with a path's requests; core/edge.py makes its behavior of it."""

    # The most the edge keeps an answer (the cache policy's maximum TTL; the answer's own
    # Cache-Control decides below that); 0: never.
    seconds: int = 0
    # The origin request carries the visitor's cookie, the query string and the headers the
    # room reads (core.edge.VISITOR_HEADERS); otherwise nothing of the viewer's request.
    per_visitor: bool = False
    # What a kept answer is kept under (empty: one copy for everyone).
    key: CacheKey = ONE_COPY


# Nothing kept, nothing of the viewer's request forwarded.
NOT_KEPT = EdgeRule()
# Never kept; the visitor's cookie, query and headers forwarded.
PER_VISITOR = EdgeRule(per_visitor=True)


def same_for_everyone(seconds: int) -> EdgeRule:
    """One copy for everyone, kept at most `seconds`."""
    return EdgeRule(seconds)


# The marketing link's key: everything its answer depends on (room/producer.py reads the
# cookie or the token header for a returning visitor, Accept for the JSON join, `work` for a
# solution), and nothing else: a marketing email's own per-recipient parameters stay out, so
# every browser that follows the link shares one copy.
MARKETING_LINK_KEY = CacheKey(
    cookies=(COOKIE_NAME,), query=(WORK_PARAMETER,), headers=("Accept", TOKEN_HEADER)
)


@dataclass(frozen=True)
class Vtl:
    """A templated route's DynamoDB integration: its action, templates and answers."""

    action: str  # the DynamoDB action the request template targets
    # The request template of each mode that has the route.
    request_templates: Mapping[Mode, str]
    response_template: str  # DynamoDB's 2xx
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
    # Its templates read the visitor's token (the shared READ_TOKEN fragment).
    reads_token: bool = False
    # Answers a cache may keep (public, for the key rotation's wait); every other answer is
    # about one visitor, or the same for everyone for the edge's seconds (EdgeRule).
    public_cache: bool = False

    def request_template(self, mode: Mode) -> str:
        return self.request_templates[mode]


@dataclass(frozen=True)
class External:
    """An endpoint outside the room's address (its URL comes from the deployment, not from
    this table): the Content-Security-Policy source its callers' pages must allow."""

    directive: str  # e.g. "connect-src"
    # The source; `{region}` is the room's region.
    source: str

    def source_for(self, region: str) -> str:
        return self.source.replace("{region}", region)


@dataclass(frozen=True)
class Route:
    """One public path of a room (or one endpoint outside it its pages connect to)."""

    name: str  # what the code and the docs call it
    path: str  # at the room's address, e.g. "/polling"; "" for an EXTERNAL endpoint
    kind: Kind
    methods: tuple[str, ...]  # what the API answers, the preflight aside
    modes: tuple[Mode, ...]
    callers: tuple[Caller, ...]
    edge: EdgeRule = NOT_KEPT
    # The shop's own pages may call it with the visitor's cookie: CORS for the shop's origin
    # and an OPTIONS preflight answered by API Gateway.
    cors: bool = False
    vtl: Vtl | None = None  # a TEMPLATE route's integration
    external: External | None = None  # an EXTERNAL endpoint's

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise ValueError(f"route {self.name}: {problem}")

    @property
    def relative(self) -> str:
        """The path relative to any other path of the room's address, which keeps the stage
        prefix a URL has before it: ".../beekeeper" -> ".../room"."""
        return self.path.removeprefix("/")

    @property
    def api_methods(self) -> tuple[str, ...]:
        """Every method the API has at the path, the preflight included."""
        return (*self.methods, "OPTIONS") if self.cors else self.methods

    @property
    def method(self) -> str:
        """The one method of a route that has one (a templated route, /leave)."""
        (only,) = self.methods
        return only

    @property
    def at_room(self) -> bool:
        """A path of the room's own address (not an EXTERNAL endpoint)."""
        return self.kind is not Kind.EXTERNAL

    def templates(self) -> Vtl:
        """A TEMPLATE route's integration; ValueError for any other kind."""
        if self.vtl is None:
            raise ValueError(f"route {self.name} is a {self.kind} route, not a templated one")
        return self.vtl


def _problem(route: Route) -> str:
    """What makes a record inconsistent, or ""."""
    if not route.modes or not set(route.modes) <= set(MODES):
        return f"modes must be some of {MODES}"
    if (route.kind is Kind.TEMPLATE) != (route.vtl is not None):
        return "a templated route, and only one, has its templates"
    if route.vtl is not None and set(route.vtl.request_templates) != set(route.modes):
        return "a request template for each of its modes, and no other"
    if route.vtl is not None and len(route.methods) != 1:
        return "a templated route answers one method"
    if (route.kind is Kind.EXTERNAL) != (route.external is not None):
        return "an EXTERNAL endpoint, and only one, names its source"
    if route.kind is Kind.EXTERNAL:
        if route.path or route.methods or route.cors or route.edge != NOT_KEPT:
            return "an EXTERNAL endpoint has no path, method, CORS or edge behavior"
    elif not route.path.startswith("/") or not route.methods:
        return "a path of the room starts with / and has a method"
    if route.kind in (Kind.PAGE, Kind.SCRIPT) and route.methods != ("GET",):
        return "a page or a script is served to GET alone"
    if route.cors and Caller.SHOP_PAGES not in route.callers:
        return "CORS is for the shop's pages: name them among its callers"
    return ""


def _unavailable(answer: Mapping[str, object]) -> str:
    return json.dumps(dict(answer))


_BOTH: tuple[Mode, ...] = (RATE, CAPACITY)
_CAPACITY_ONLY: tuple[Mode, ...] = (CAPACITY,)

# The marketing link: the producer. Per visitor, but the bare link's answer (a browser's
# challenge, core/join_work.py) is the same for everyone for SHARED_SECONDS under its key.
MARKETING_LINK = Route(
    "marketing_link",
    "/beekeeper",
    Kind.PRODUCER,
    ("GET",),
    _BOTH,
    (Caller.VISITOR, Caller.ROOM_PAGE),
    edge=EdgeRule(SHARED_SECONDS, per_visitor=True, key=MARKETING_LINK_KEY),
)
# The waiting room page (waiting_room_site.render_page), the same for everyone.
ROOM_PAGE = Route(
    "room_page",
    "/room",
    Kind.PAGE,
    ("GET",),
    _BOTH,
    (Caller.VISITOR,),
    edge=same_for_everyone(PAGE_EDGE_SECONDS),
)
# The page that does a place's work before the join (core/join_work.py); its challenge comes
# from the marketing link in the fragment, so it too is the same for everyone.
WORK_PAGE = Route(
    "work_page",
    "/work",
    Kind.PAGE,
    ("GET",),
    _BOTH,
    (Caller.VISITOR,),
    edge=same_for_everyone(PAGE_EDGE_SECONDS),
)
# The presence script the shop's pages load (core/presence.py), byte for byte.
PRESENCE_SCRIPT = Route(
    "presence_script",
    "/presence.js",
    Kind.SCRIPT,
    ("GET",),
    _CAPACITY_ONLY,
    (Caller.SHOP_PAGES,),
    edge=same_for_everyone(PAGE_EDGE_SECONDS),
)
POLLING = Route(
    "polling",
    "/polling",
    Kind.TEMPLATE,
    ("GET",),
    _BOTH,
    (Caller.ROOM_PAGE, Caller.VISITOR),
    edge=PER_VISITOR,
    vtl=Vtl(
        "BatchGetItem",
        {RATE: "polling-request.vtl", CAPACITY: "polling-request.vtl"},
        "polling-response.vtl",
        error_body=_unavailable(
            {"allow": False, "state": "unavailable", "poll_after": ERROR_RETRY_AFTER_SECONDS}
        ),
        reads_token=True,
    ),
)
# A check, or with redeem=1 a redeem: one conditional write either way (core/client_check);
# in capacity mode the check renews the session.
CLIENT = Route(
    "client",
    "/client",
    Kind.TEMPLATE,
    ("GET",),
    _BOTH,
    (Caller.SHOP_SERVER, Caller.SHOP_PAGES),
    edge=PER_VISITOR,
    cors=True,
    vtl=Vtl(
        "UpdateItem",
        {RATE: "client-request.vtl", CAPACITY: "client-session-request.vtl"},
        "client-response.vtl",
        refusal_template="client-refused.vtl",
        error_body=_unavailable({"allow": False}),
        reads_token=True,
    ),
)
# Following the admission through /enter starts the session, then on to the shop.
ENTER = Route(
    "enter",
    "/enter",
    Kind.TEMPLATE,
    ("GET",),
    _CAPACITY_ONLY,
    (Caller.ROOM_PAGE,),
    edge=PER_VISITOR,
    vtl=Vtl(
        "UpdateItem",
        {CAPACITY: "enter-request.vtl"},
        "enter-response.vtl",
        redirect=True,
        reads_token=True,
    ),
)
# The presence script's heartbeat from the shop's pages (core/presence.py): a POST without a
# body or cookie, so a browser sends it without a preflight (a CORS simple request); every
# answer is about one visitor and is never stored.
PRESENCE = Route(
    "presence",
    "/presence",
    Kind.TEMPLATE,
    ("POST",),
    _CAPACITY_ONLY,
    (Caller.SHOP_PAGES,),
    edge=PER_VISITOR,
    cors=True,
    vtl=Vtl(
        "UpdateItem",
        {CAPACITY: "presence-request.vtl"},
        "presence-response.vtl",
        refusal_template="presence-refused.vtl",
        error_body=_unavailable({PRESENT: False}),
        request_content_types=("application/json", "text/plain"),
        reads_token=True,
    ),
)
# The shared state document: the same for every visitor, kept by the edge a moment.
STATE = Route(
    "state",
    "/state",
    Kind.TEMPLATE,
    ("GET",),
    _BOTH,
    (Caller.ROOM_PAGE,),
    edge=same_for_everyone(STATE_MAX_AGE_SECONDS),
    vtl=Vtl(
        "GetItem",
        {RATE: "state-request.vtl", CAPACITY: "state-request.vtl"},
        "state-response.vtl",
        error_body=_unavailable({"state": "unavailable", "retry_after": ERROR_RETRY_AFTER_SECONDS}),
    ),
)
# The tickets' public keys (core/tickets.py). Public, but kept by whoever fetches it (the key
# set's own Cache-Control), not by the edge: a copy aged at the edge would shorten the key
# timing shops rely on.
JWKS = Route(
    "jwks",
    "/jwks.json",
    Kind.TEMPLATE,
    ("GET",),
    _BOTH,
    (Caller.SHOP_SERVER,),
    vtl=Vtl(
        "GetItem",
        {RATE: "jwks-request.vtl", CAPACITY: "jwks-request.vtl"},
        "jwks-response.vtl",
        # Not an empty key set: a shop's cache must keep the keys it has.
        error_body=_unavailable({"message": "the room's keys can not be read right now"}),
        public_cache=True,
    ),
)
# Capacity mode's POST /leave: the producer Lambda's (room/leaving.py), which alone can tell
# a token the room issued from a forged one: from the room's page ("Leave the line", with the
# cookie), an app (its token header), the shop's pages (CORS) or the shop's server (?token=).
LEAVE = Route(
    "leave",
    "/leave",
    Kind.PRODUCER,
    ("POST",),
    _CAPACITY_ONLY,
    (Caller.ROOM_PAGE, Caller.VISITOR, Caller.SHOP_PAGES, Caller.SHOP_SERVER),
    edge=PER_VISITOR,
    cors=True,
)
# The room's push channel (core/push.py): AWS AppSync Events' real-time endpoint, outside the
# room's address, which every waiting page subscribes to with the pages' key; a local room's is
# its loopback channel's (local/channel.py). The room gives the page its exact address.
PUSH_CHANNEL = Route(
    "push",
    "",
    Kind.EXTERNAL,
    (),
    (RATE, CAPACITY),
    (Caller.ROOM_PAGE,),
    external=External("connect-src", "wss://*.appsync-realtime-api.{region}.amazonaws.com"),
)

# In the order the stack creates the API's methods (their order is part of the deployment's
# logical ID) and CloudFront lists the behaviors (all exact paths: the order does not matter).
TABLE: tuple[Route, ...] = (
    MARKETING_LINK,
    ROOM_PAGE,
    WORK_PAGE,
    PRESENCE_SCRIPT,
    POLLING,
    CLIENT,
    ENTER,
    PRESENCE,
    STATE,
    JWKS,
    LEAVE,
    PUSH_CHANNEL,
)


def check_table(table: tuple[Route, ...]) -> tuple[Route, ...]:
    """`table`, after refusing two records of one name or one path."""
    names = [found.name for found in table]
    paths = [found.path for found in table if found.at_room]
    for label, values in (("name", names), ("path", paths)):
        twice = sorted({value for value in values if values.count(value) > 1})
        if twice:
            raise ValueError(f"the route table has two routes of the {label} {twice[0]}")
    return table


check_table(TABLE)


def served(mode: Mode, table: tuple[Route, ...] = TABLE) -> tuple[Route, ...]:
    """The paths a room in `mode` has at its address, in the table's order."""
    return tuple(found for found in table if found.at_room and mode in found.modes)


def templated(mode: Mode) -> dict[str, Route]:
    """The templated routes of a room in `mode`, by name, in the table's order."""
    return {found.name: found for found in served(mode) if found.kind is Kind.TEMPLATE}


def route(name: str) -> Route:
    """The route `name` (any mode); KeyError names the unknown route."""
    for found in TABLE:
        if found.name == name:
            return found
    raise KeyError(f"no route named {name!r}")


def visitor_routes(mode: Mode) -> tuple[str, ...]:
    """The templated routes of `mode` whose templates read the visitor's token."""
    return tuple(name for name, found in templated(mode).items() if found.templates().reads_token)


def template_files() -> frozenset[str]:
    """Every template file a route names (request, response, refusal)."""
    names: set[str] = set()
    for found in TABLE:
        if found.vtl is None:
            continue
        names.update(found.vtl.request_templates.values())
        names.add(found.vtl.response_template)
        if found.vtl.refusal_template:
            names.add(found.vtl.refusal_template)
    return frozenset(names)


def called_by(caller: Caller, table: tuple[Route, ...] = TABLE) -> tuple[Route, ...]:
    """The routes `caller` may call, in any mode."""
    return tuple(found for found in table if caller in found.callers)


__all__ = [
    "CAPACITY",
    "CLIENT",
    "ENTER",
    "ERROR_RETRY_AFTER_SECONDS",
    "JWKS",
    "LEAVE",
    "MARKETING_LINK",
    "MARKETING_LINK_KEY",
    "MODES",
    "NOT_KEPT",
    "ONE_COPY",
    "PAGE_EDGE_SECONDS",
    "PER_VISITOR",
    "POLLING",
    "PRESENCE",
    "PRESENCE_SCRIPT",
    "PUSH_CHANNEL",
    "RATE",
    "ROOM_PAGE",
    "STATE",
    "TABLE",
    "WORK_PAGE",
    "CacheKey",
    "Caller",
    "EdgeRule",
    "External",
    "Kind",
    "Mode",
    "Route",
    "Vtl",
    "called_by",
    "check_table",
    "route",
    "same_for_everyone",
    "served",
    "template_files",
    "templated",
    "visitor_routes",
]
