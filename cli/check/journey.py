"""The test visitors' journey through a room's public address, step by step.

Each step sends what a browser, the room's page or the shop's server sends, looks at the answer
as they would, and says in a few words what it saw; a step that finds something wrong raises
`StepFailed` with what the room answered and what to look at. `Journey.steps()` lists them in
order for `beekeeper check` (cli/check/run.py) and the opt-in real-AWS test alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from beekeeper.cli.check import tickets
from beekeeper.cli.check.channel import ChannelConfig, ChannelTrouble, subscribed
from beekeeper.cli.check.http import Answer, send
from beekeeper.core.datamodel import (
    CLIENT_REDEEM_PARAMETER,
    CLIENT_REDEEM_VALUE,
    CLIENT_TOKEN_PARAMETER,
    COOKIE_NAME,
    ORIGIN_TICKET_PARAMETER,
    ORIGIN_TOKEN_PARAMETER,
    TEST_PASS_PARAMETER,
    Token,
)
from beekeeper.core.headers import browser_origin
from beekeeper.core.join_work import WORK_PARAMETER, Challenge, solve, visitor_nonce
from beekeeper.core.routes import ENTER, JWKS, LEAVE, POLLING, ROOM_PAGE, STATE, WORK_PAGE, Route
from beekeeper.core.tickets import issuer_of
from beekeeper.core.words import count
from beekeeper.room.push import PublishError

# A room switched on at its rate admits a visitor of a short line within seconds; the check
# waits about a minute (a quiet room's first minute may still be starting its consumer).
ADMISSION_SECONDS = 75.0
# A change reaches every open page at most 2 s after its publish (docs/pipeline.md, the push
# channel); the check's one subscriber gives the channel a little more before it fails.
PUSH_SEEN_SECONDS = 5.0
# Between two of a test visitor's own /polling: as the page does near its turn.
POLL_SECONDS = 1.0
# Where the marketing link sends a browser: relative to it, as the producer writes them.
WORK_LOCATION = f"{WORK_PAGE.relative}#"
PAGE_LOCATION = ROOM_PAGE.relative
# The room's own page as the browser marks its navigation to /enter (docs/pipeline.md, "Who
# may cause each write").
SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}
BEACON = {"Content-Type": "text/plain;charset=UTF-8"}
# Sources a page's policy may name without being a request to another site.
_KEYWORD = re.compile(r"^'(none|self|unsafe-inline|strict-dynamic|sha(256|384|512)-[^']+)'$")
# AWS's own endpoints (the room's own services), which a page may connect to.
_AWS_HOST = re.compile(r"^(?:wss?|https)://[a-z0-9.-]+\.amazonaws\.com(?::443)?/?$")


class StepFailed(Exception):
    """A step found the room not doing what a visitor or the shop relies on."""

    def __init__(self, saw: str, look: str) -> None:
        super().__init__(f"{saw} {look}")
        self.saw = saw  # what the room answered
        self.look = look  # what to look at


@dataclass(frozen=True)
class RoomAddress:
    """Where the room answers, and what its answers must name."""

    name: str
    marketing_url: str
    page_url: str
    client_check_url: str
    shop_origin: str  # the room's `origin`: where admitted visitors go
    display_name: str
    capacity: bool  # capacity mode: admission goes through /enter, and visitors leave
    logo_url: str = ""
    # The room's push channel's real-time endpoint (ws(s)://host), which its page connects to.
    channel_source: str = ""

    @property
    def base(self) -> str:
        """The room's base URL (the tickets' issuer): the marketing link without /beekeeper."""
        return issuer_of(self.marketing_url)

    def route(self, route: Route) -> str:
        return f"{self.base}{route.path}"


@dataclass
class TestVisitor:
    """One test visitor as the check follows them."""

    __test__ = False  # not a pytest test class

    number: int
    solved_url: str = ""
    spent: str | None = None  # the work's record, removed at the end
    token: Token | None = None
    joined_at: float = 0.0  # the check's clock when the place was given
    admitted_url: str = ""
    ticket: str = ""
    waited: float = 0.0  # from the place to the first /polling that let them in

    @property
    def cookie(self) -> dict[str, str]:
        return {"Cookie": f"{COOKIE_NAME}={self.token}"} if self.token else {}

    @property
    def query_token(self) -> str:
        return quote(str(self.token), safe="")


@dataclass(frozen=True)
class Step:
    name: str
    run: Callable[[], str]  # what it saw, in a few words


@dataclass
class Journey:
    address: RoomAddress
    pass_id: str
    visitors: int
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    http: Callable[..., Answer] = send
    token_bytes: Callable[[int], bytes] | None = None
    # The operator's publish of the room's shared document to its push channel (its sequence
    # number): what the check's subscription must see (cli/check/operator_side.py).
    publish_resync: Callable[[], int] | None = None
    people: list[TestVisitor] = field(default_factory=list)
    page_html: str = ""

    def __post_init__(self) -> None:
        self.people = [TestVisitor(number) for number in range(1, self.visitors + 1)]

    def steps(self) -> list[Step]:
        found = [
            Step("marketing link", self.marketing_link),
            Step("cookie and redirect", self.cookie_and_redirect),
            Step("page", self.page),
            Step("shared state", self.shared_state),
            Step("own /polling", self.own_polling),
            Step("admission", self.admission),
            Step("ticket", self.ticket),
            Step("shop's check", self.shops_check),
            Step("redeem", self.redeem),
        ]
        if self.address.capacity:
            found.append(Step("leave", self.leave))
        if self.address.channel_source:
            found.append(Step("push channel", self.push_channel))
        return found

    @property
    def tokens(self) -> list[Token]:
        return [person.token for person in self.people if person.token is not None]

    @property
    def spent(self) -> list[str]:
        return [person.spent for person in self.people if person.spent]

    # -- the visitor ------------------------------------------------------------------------

    def _link(self, extra: str = "") -> str:
        return f"{self.address.marketing_url}?{extra}{TEST_PASS_PARAMETER}={self.pass_id}"

    def marketing_link(self) -> str:
        """The link as the marketing email has it: a challenge to solve (the work page's), or
        a place at once in a room whose places cost no work. The test pass rides along."""
        solved_in = 0.0
        for person in self.people:
            answer = self.http(self._link())
            location = answer.header("location") or ""
            if answer.status == 302 and location.startswith(WORK_LOCATION):
                challenge = Challenge.parse(location.removeprefix(WORK_LOCATION))
                if challenge is None:
                    raise StepFailed(
                        f"The marketing link answered {answer.shown()}, a challenge this "
                        "Beekeeper can not read.",
                        "Deploy this version of Beekeeper to the room (`beekeeper deploy "
                        f"{self.address.name}`).",
                    )
                started = self.clock()
                nonce = visitor_nonce(self.token_bytes) if self.token_bytes else None
                solution = solve(challenge, nonce)
                solved_in += self.clock() - started
                person.spent = solution.spent_as
                person.solved_url = self._link(f"{WORK_PARAMETER}={quote(str(solution), safe='')}&")
            elif answer.status == 302 and answer.header("set-cookie"):
                person.solved_url = ""  # no work: this answer is the place
                self._take_place(person, answer)
            else:
                raise StepFailed(
                    f"The marketing link answered {answer.shown()}.",
                    "A room that is on answers a new visitor with a redirect to its work page "
                    f"(or, without work, to its page); `beekeeper status {self.address.name}` "
                    "shows whether it is on.",
                )
        if not self.spent:
            return f"302 with a place at once for {self._each()} (this room asks no work)"
        return (
            f"302 to the work page for {self._each()}; its challenge solved in "
            f"{solved_in / len(self.people):.1f} s each"
        )

    def cookie_and_redirect(self) -> str:
        for person in self.people:
            if person.token is None:
                self._take_place(person, self.http(person.solved_url))
        return f"302 to the page with an HttpOnly first-party cookie for {self._each()}"

    def _take_place(self, person: TestVisitor, answer: Answer) -> None:
        name = self.address.name
        if answer.status == 403:
            raise StepFailed(
                f"The marketing link refused the check's test pass: {answer.shown()}.",
                "The pass expired or was used up before the visitor joined; run the check again.",
            )
        cookies = [c for c in answer.headers.get("set-cookie", ()) if c.startswith(COOKIE_NAME)]
        if answer.status != 302 or len(cookies) != 1:
            raise StepFailed(
                f"The marketing link with a solved challenge answered {answer.shown()}, "
                f"with {len(cookies)} visitor cookie(s).",
                "A place is a 302 to the page with one `beekeeper_token` cookie; the room's "
                "producer logs say why it gave none.",
            )
        cookie = cookies[0]
        attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
        token = Token.parse(cookie.split(";", 1)[0].partition("=")[2])
        location = answer.header("location") or ""
        if token is None or not {"httponly", "samesite", "path"} <= attributes:
            raise StepFailed(
                f"The visitor's cookie is {cookie.split(';', 1)[0][:30]}... with "
                f"{', '.join(sorted(attributes)) or 'no attributes'}.",
                "It must be HttpOnly, SameSite and Path=/, holding a well-formed token.",
            )
        if not token.is_test:
            raise StepFailed(
                f"The room gave the test visitor a real place (place {token.ordinal}): it "
                "does not know test passes, so this visitor counts as a real one.",
                f"Deploy this version of Beekeeper to the room (`beekeeper deploy {name}`).",
            )
        if not location.startswith(PAGE_LOCATION):
            raise StepFailed(
                f"The place's redirect goes to {location!r}, not the waiting room page.",
                "The producer sends a new visitor to `room#turn=<place>`.",
            )
        person.token = token
        person.joined_at = self.clock()

    def page(self) -> str:
        person = self.people[0]
        answer = self.http(self.address.page_url, headers=person.cookie)
        html = answer.body.decode("utf-8", "replace")
        if answer.status != 200 or "text/html" not in (answer.header("content-type") or ""):
            raise StepFailed(
                f"The page answered {answer.shown()}.",
                "The waiting room page is the room's /room, the same for everyone; the "
                "stack's API serves it.",
            )
        if self.address.display_name not in unescape(html):
            raise StepFailed(
                f"The page does not name the room ({self.address.display_name!r}).",
                "Is this the room you deployed? `beekeeper list` shows every room's address.",
            )
        self.page_html = html
        policy = _meta_policy(html)
        framing = answer.header("content-security-policy") or ""
        if policy is None or "frame-ancestors 'none'" not in framing:
            raise StepFailed(
                "The page has no Content-Security-Policy"
                + (" that forbids framing" if policy is not None else "")
                + ".",
                "The page carries its own policy in a meta tag and the API adds "
                "`frame-ancestors 'none'`; a proxy in front of the room may have removed it.",
            )
        foreign = self._foreign_sources(policy, html)
        if foreign:
            raise StepFailed(
                f"The page may load from another site: {', '.join(foreign)}.",
                "A waiting room page loads nothing from a third party; look at the room's "
                "custom template (`custom_template`) and logo_url.",
            )
        return f"200, {len(answer.body):,} bytes, its Content-Security-Policy allows no other site"

    def _foreign_sources(self, policy: str, html: str) -> list[str]:
        own = {browser_origin(self.address.base)}
        if self.address.logo_url:
            own.add(browser_origin(self.address.logo_url))
        if self.address.channel_source:
            own.add(self.address.channel_source)
        foreign: list[str] = []
        for directive in policy.split(";"):
            for source in directive.split()[1:]:
                if _KEYWORD.match(source) or source.rstrip("/") in own or _AWS_HOST.match(source):
                    continue
                foreign.append(source)
        for url in _UrlAttributes.of(html):
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") and browser_origin(url) not in own:
                foreign.append(url)
        return sorted(set(foreign))

    def shared_state(self) -> str:
        answer = self.http(self.address.route(STATE))
        document = answer.json()
        if answer.status != 200 or not isinstance(document, dict) or "state" not in document:
            raise StepFailed(
                f"The shared state answered {answer.shown()}.",
                "/state is read from the room's status copies, which the trigger writes every "
                "minute: a room deployed a moment ago has them within a minute.",
            )
        cache = answer.header("cache-control") or ""
        if not cache.startswith("public"):
            raise StepFailed(
                f"The shared state's Cache-Control is {cache!r}.",
                "It is the same for everyone and kept by the edge for a moment (public).",
            )
        return f"{document['state']}, serving {document.get('serving')} ({cache})"

    def own_polling(self) -> str:
        seen = []
        for person in self.people:
            body = self._poll(person)
            if body.get("allow"):
                self._admitted(person, body)
                seen.append("admitted already")
            elif body.get("state") == "waiting":
                seen.append(f"waiting at place {body.get('position')}")
            else:
                raise _not_waiting(body, self.address.name)
        return "; ".join(f"visitor {n}: {what}" for n, what in enumerate(seen, 1))

    def _poll(self, person: TestVisitor) -> dict[str, Any]:
        answer = self.http(self.address.route(POLLING), headers=person.cookie)
        body = answer.json()
        if answer.status != 200 or not isinstance(body, dict):
            raise StepFailed(
                f"/polling answered {answer.shown()}.",
                "/polling is answered from the room's table by API Gateway; its execution logs "
                "or the table's throttling say why it failed.",
            )
        return body

    def admission(self) -> str:
        started = self.clock()
        deadline = started + ADMISSION_SECONDS
        waiting = [person for person in self.people if not person.admitted_url]
        while waiting:
            for person in list(waiting):
                body = self._poll(person)
                if body.get("allow"):
                    self._admitted(person, body)
                    waiting.remove(person)
                elif body.get("state") != "waiting":
                    raise _not_waiting(body, self.address.name)
            if not waiting:
                break
            if self.clock() >= deadline:
                raise StepFailed(
                    f"{count(len(waiting), 'test visitor')} still waiting after "
                    f"{ADMISSION_SECONDS:.0f} s.",
                    "A room that is on admits a short line within seconds: the trigger starts "
                    "consumers every minute and a new visitor wakes one. The trigger's and "
                    f"consumers' logs and `beekeeper status {self.address.name}` say why "
                    "nobody was let in.",
                )
            self.sleep(POLL_SECONDS)
        slowest = max(person.waited for person in self.people)
        with_ticket = sum(bool(person.ticket) for person in self.people)
        return (
            f"{self._each()} admitted within {slowest:.1f} s of joining, sent to the shop with "
            f"{with_ticket} ticket(s)"
        )

    def _admitted(self, person: TestVisitor, body: dict[str, Any]) -> None:
        url = str(body.get("origin", ""))
        if body.get("via") == ENTER.name:
            # Capacity mode: the page goes through /enter, which records the arrival.
            answer = self.http(self.address.route(ENTER), headers={**person.cookie, **SAME_ORIGIN})
            url = answer.header("location") or ""
            if answer.status != 302:
                raise StepFailed(
                    f"/enter answered {answer.shown()}.",
                    "/enter records the arrival and sends the visitor to the shop (302).",
                )
        query = parse_qs(urlsplit(url).query)
        if not url.startswith(self.address.shop_origin) or query.get(ORIGIN_TOKEN_PARAMETER) != [
            str(person.token)
        ]:
            raise StepFailed(
                f"The admitted visitor is sent to {url[:80]!r}.",
                f"The room sends admitted visitors to its origin, {self.address.shop_origin}, "
                "with their token.",
            )
        person.admitted_url = url
        person.waited = self.clock() - person.joined_at
        person.ticket = (query.get(ORIGIN_TICKET_PARAMETER) or [""])[0]

    # -- the shop ---------------------------------------------------------------------------

    def ticket(self) -> str:
        name = self.address.name
        if not all(person.ticket for person in self.people):
            raise StepFailed(
                "The room admitted a test visitor without a signed ticket.",
                f"No key signs tickets yet: `beekeeper keys {name}` shows the keys and when "
                "each signs; a shop that verifies tickets turns such visitors away.",
            )
        answer = self.http(self.address.route(JWKS))
        key_set = answer.json()
        if answer.status != 200 or not isinstance(key_set, dict):
            raise StepFailed(
                f"/jwks.json answered {answer.shown()}.",
                "Shops verify tickets against it; the room's table holds the published keys "
                f"(`beekeeper keys {name}`).",
            )
        for person in self.people:
            assert person.token is not None
            try:
                tickets.verify(
                    person.ticket,
                    key_set,
                    issuer=self.address.base,
                    audience=browser_origin(self.address.shop_origin),
                    room=name,
                    token_id=person.token.id,
                    now=self.clock(),
                )
            except tickets.TicketRefused as refused:
                raise StepFailed(
                    f"Visitor {person.number}'s ticket does not verify: {refused}.",
                    "A shop that verifies tickets offline (docs/shop-integration.md) would turn "
                    f"this visitor away; `beekeeper keys {name}` shows the keys and their "
                    "timing.",
                ) from refused
        published = len(key_set.get("keys") or [])
        return (
            f"{len(self.people)} ES256 ticket(s) verified offline against {published} published "
            "key(s); each says test: true"
        )

    def _client(self, person: TestVisitor, redeem: bool = False) -> Answer:
        url = f"{self.address.client_check_url}?{CLIENT_TOKEN_PARAMETER}={person.query_token}"
        if redeem:
            url += f"&{CLIENT_REDEEM_PARAMETER}={CLIENT_REDEEM_VALUE}"
        return self.http(url)

    def shops_check(self) -> str:
        for person in self.people:
            answer = self._client(person)
            if (answer.status, answer.json()) != (200, {"allow": True}):
                raise StepFailed(
                    f"/client?token= for an admitted visitor answered {answer.shown()}.",
                    'The shop\'s check of an admitted visitor answers {"allow": true}; the '
                    "API's execution logs for /client say why it did not.",
                )
        return f'{{"allow": true}} for {self._each()}'

    def redeem(self) -> str:
        """What any page could make the visitor's browser send (the cookie alone) is refused and
        spends nothing; then the shop's server's redeem (`?token=`) is taken once."""
        person = self.people[0]
        forged = self.http(
            f"{self.address.client_check_url}?{CLIENT_REDEEM_PARAMETER}={CLIENT_REDEEM_VALUE}",
            headers=person.cookie,
        )
        if forged.status != 400 or (forged.json() or {}).get("allow") is not False:
            raise StepFailed(
                f"A redeem with the visitor's cookie alone answered {forged.shown()}.",
                "Any web page can send that; a redeem is taken only with `?token=` from the "
                "shop's server. Deploy this version of Beekeeper to the room (`beekeeper "
                f"deploy {self.address.name}`).",
            )
        first = self._client(person, redeem=True)
        second = self._client(person, redeem=True)
        if (first.status, first.json()) != (200, {"allow": True}):
            raise StepFailed(
                f"The shop's first redeem answered {first.shown()}.",
                'A first redeem of an admission answers {"allow": true}.',
            )
        if (second.status, second.json()) != (200, {"allow": False, "state": "redeemed"}):
            raise StepFailed(
                f"A second redeem of the same admission answered {second.shown()}.",
                "An admission redeems once: a copied link must not let a second person in.",
            )
        return (
            'the cookie alone refused (400); the shop\'s first {"allow": true}, then '
            '{"allow": false, "state": "redeemed"}'
        )

    def leave(self) -> str:
        """Capacity mode: every test visitor leaves as the shop's server tells the room (its
        places go back at once); the last one's second leave and check are looked at too."""
        for person in self.people:
            left = self._leave(person)
            if (left.status, left.json()) != (200, {"left": True}):
                raise StepFailed(
                    f"The shop's leave answered {left.shown()}.",
                    'A visitor inside who leaves is answered {"left": true}; the producer\'s '
                    "logs say why not.",
                )
        person = self.people[-1]
        again, after = self._leave(person), self._client(person)
        if (again.json(), after.json()) != ({"left": False}, {"allow": False}):
            raise StepFailed(
                f"After the leave, a second leave answered {again.shown()} and the shop's "
                f"check {after.shown()}.",
                "A visitor who left holds no place: a second leave changes nothing and the "
                "shop's check says no.",
            )
        return 'each place given back ({"left": true}); after it the shop\'s check says no'

    def _leave(self, person: TestVisitor) -> Answer:
        url = f"{self.address.route(LEAVE)}?{CLIENT_TOKEN_PARAMETER}="
        return self.http(url + person.query_token, method="POST", headers=BEACON, body=b"")

    def push_channel(self) -> str:
        """The room's push channel as a waiting page meets it: a subscription with the key
        the page carries, which may not publish, and the operator's publish seen through it
        (a copy of the shared document as it stands, which changes nothing for real pages)."""
        config = ChannelConfig.of_page(self.page_html)
        if config is None:
            raise StepFailed(
                "The page's config names no push channel, although the room has one.",
                "The channel's address and key are written into the page at deploy: run "
                f"`beekeeper deploy {self.address.name}` again.",
            )
        if self.publish_resync is None:
            raise ValueError("a journey that checks the push channel publishes through it")
        try:
            with subscribed(config, self.clock) as subscription:
                refused = subscription.publish_with_page_key()
                if refused["type"] != "publish_error":
                    raise StepFailed(
                        "The pages' API key could publish to the room's channel.",
                        "Publishing is by IAM only: the channel namespace's publish auth mode "
                        "must be AWS_IAM (docs/stack.md, the push channel).",
                    )
                published = self.clock()
                seq = self._publish()
                try:
                    subscription.wait_for(lambda event: event.get("seq") == seq, PUSH_SEEN_SECONDS)
                    took = self.clock() - published
                except TimeoutError as error:
                    raise ChannelTrouble(
                        f"the room's publish was not delivered within {PUSH_SEEN_SECONDS:g} s"
                    ) from error
        except ChannelTrouble as trouble:
            raise StepFailed(
                f"A waiting page's subscription failed: {trouble.saw}.",
                "Pages then learn of a hold or a close from the shared state alone, in up to "
                "30 s instead of 2 s. `beekeeper status` says when the pages' key expires; "
                "the channel's metrics are on the room's dashboard.",
            ) from trouble
        return (
            f"subscribed as a page; the room's publish seen after {took:.2f} s; the pages' key "
            "may not publish"
        )

    def _publish(self) -> int:
        assert self.publish_resync is not None
        try:
            return self.publish_resync()
        except PublishError as error:
            raise StepFailed(
                f"The room's channel refused the operator's publish: {error}.",
                "The operator's credentials need appsync:EventPublish on the room's channel "
                "namespace (docs/stack.md, the push channel), as `hold` and `resume` do.",
            ) from error
        except LookupError as error:
            raise StepFailed(
                f"Nothing to publish: {error}.",
                "The room writes its shared state every minute once it runs; check again in "
                "a minute.",
            ) from error

    def give_back_places(self) -> None:
        """Capacity mode, when the journey stopped early: every admitted test visitor leaves,
        so no place stays taken from the shop's real visitors."""
        for person in self.people:
            if person.admitted_url:
                self._leave(person)

    def _each(self) -> str:
        return (
            "the test visitor"
            if len(self.people) == 1
            else f"each of {len(self.people)} test visitors"
        )


def _not_waiting(body: dict[str, Any], name: str) -> StepFailed:
    """A test visitor's /polling that is neither waiting nor admitted."""
    state = body.get("state")
    why = {
        "paused": f"the room was held meanwhile (`beekeeper resume {name}` carries on)",
        "closed": f"the room was closed meanwhile (`beekeeper resume {name}` opens it again)",
        "room_off": f"the room was switched off meanwhile (`beekeeper on {name}`)",
        "prequeue": "the room was scheduled meanwhile: the visitor is in the pre-queue",
    }.get(str(state), "the room does not know the visitor's place")
    return StepFailed(
        f"/polling answered {body} for a test visitor: {why}.",
        f"`beekeeper status {name}` shows the room's state.",
    )


def _meta_policy(html: str) -> str | None:
    match = re.search(
        r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', html, re.IGNORECASE
    )
    if match is None:
        return None
    return unescape(match.group(1))


class _UrlAttributes(HTMLParser):
    """The URLs a page's elements would fetch (src, href, srcset, action, poster, data)."""

    NAMES = frozenset({"src", "href", "action", "poster", "data", "srcset"})

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in self.NAMES and value:
                self.urls += [part.split()[0] for part in value.split(",") if part.split()]

    @classmethod
    def of(cls, html: str) -> list[str]:
        parser = cls()
        parser.feed(html)
        return parser.urls
