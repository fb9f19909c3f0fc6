"""The work a place costs: the marketing link's proof-of-work challenge, defined once.

A new place in line is given only for a solved challenge (`join_work` > 0). The challenge is
stateless: the producer issues it and checks it later with nothing stored in between.

    1.<issued_at>.<target>.<count>.<nonce>.<mac>

- `issued_at`: epoch seconds; a challenge is good for CHALLENGE_LIFETIME_SECONDS.
- `target`, `count`: the difficulty: `count` sub-puzzles, each solved by a counter c for which
  the first 32 bits of SHA-256(seed || uint32be(i) || uint32be(c)), big-endian, are below
  `target`; `seed` is SHA-256 of the challenge's text. A try succeeds with probability
  target / 2^32, so a sub-puzzle takes 2^32 / target tries on average and the challenge
  `count` times that. One puzzle's time is exponential (its p95 is 4.3 times its median); the
  sum of SUBPUZZLES of them is a gamma distribution whose p95 is 1.5 times its median, so a
  visitor's wait is predictable.
- `nonce`: 16 CSPRNG bytes, base64url: what makes the challenge usable once (the producer
  records it with a conditional write when it gives the place).
- `mac`: HMAC-SHA256 under a key derived from the room's join secret (a Secrets Manager secret
  only the producer reads), over the room's name and every field before it, cut to 16 bytes.
  The binding: a challenge counts only for the marketing link of the room that issued it, for
  one place, within its lifetime. It is deliberately not bound to the client's address: a
  phone moving between networks, a dual-stack browser and a room behind an edge all change
  the address a request arrives from, and a refused solution costs an honest visitor another
  round of work while costing a bot nothing it could not pay anyway.

A solution is the `work` query parameter of the marketing link:

    <challenge>~<c0>.<c1>...              the challenge given to this client alone
    <challenge>~<visitor>~<c0>.<c1>...    a challenge given to many (a shared one)

`visitor` is the solver's own 16 CSPRNG bytes, base64url. The browser's challenge is shared:
every browser that follows the bare link in the same SHARED_SECONDS gets the edge's copy of one
answer (core/edge.py), so a join costs the origin one request, not two. Each browser adds its
own `visitor` nonce, which goes into the seed, so each solves its own puzzles; what is spent
once is the pair (the challenge's nonce, the visitor's). A bot gains nothing from sharing: a
place still costs a whole solve, and a challenge could always be had for free. An app's JSON
challenge is never shared (its answer is not kept at the edge), so a solution without a
visitor nonce, the form apps have always sent (docs/apps.md), keeps working.

Solving is the client's (the page's solver, waiting_room_site/work/solver.js; apps:
docs/apps.md); `solve` here is the reference the tests and benchmarks use.

Standard library only: shipped in the Lambda asset.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass

VERSION = "1"
# The marketing link's query parameter carrying a solution.
WORK_PARAMETER = "work"
SOLUTION_SEPARATOR = "~"
# How long the edge gives one browser challenge to everyone who follows the bare link (its
# answer's s-maxage, and the marketing link's cache lifetime at the edge: core/edge.py): short,
# so a raised difficulty (a flood) reaches new visitors within seconds.
SHARED_SECONDS = 2
SUBPUZZLES = 16
TARGET_SPACE = 2**32
# A challenge's lifetime; also how long its nonce's record stays. Long enough for a slow phone
# at the highest difficulty a flood brings (MAX_JOIN_WORK_MS x FLOOD_MAX_FACTOR of a typical
# phone's time, 80 s), short enough that challenges collected before a flood are spent early.
CHALLENGE_LIFETIME_SECONDS = 300
# A challenge dated this far after the producer's clock is refused too (clocks of two
# containers differ by far less).
CLOCK_SKEW_SECONDS = 30
NONCE_BYTES = 16
MAC_BYTES = 16
VISITOR_NONCE_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")

# How fast a typical phone's browser runs the page's solver on one core: an estimate, not a
# measurement. The page's solver makes 2.4 to 3.2 million tries a second on one thread of
# headless Chromium on the 2-core server the benchmarks run on (bench/join_work.py); a mid-range
# phone's single core scores about a third of a current desktop core's in Geekbench 6 (which
# sets 2,500 at an Intel Core i7-12700's). The page runs up to MAX_WORKERS solvers at once, so
# on a phone with several cores a visitor waits less than `join_work` says; a phone slower than
# typical waits more.
PHONE_TRIES_PER_SECOND = 1_000_000
MAX_WORKERS = 4

DEFAULT_JOIN_WORK_MS = 1_000
MAX_JOIN_WORK_MS = 10_000

# A flood: new places taken faster than FLOOD_RATE_MINUTES minutes of admissions a minute
# (the line grows ten times faster than it moves), and at least FLOOD_MIN_JOINS_PER_SECOND.
# The join rate is the one the producer already reads: the growth of the arrival counters
# between two of its config reads (at most CONFIG_FRESH_SECONDS apart), for the whole room.
# Under a flood the work rises in proportion to the join rate, up to FLOOD_MAX_FACTOR: a
# bot farm with c core-seconds a second then takes about sqrt(c x threshold / work) places
# a second instead of c / work.
FLOOD_RATE_MINUTES = 10
FLOOD_MIN_JOINS_PER_SECOND = 50
FLOOD_MAX_FACTOR = 8.0

_B64 = r"[A-Za-z0-9_-]"
CHALLENGE_PATTERN = re.compile(
    rf"^{VERSION}\.([0-9]{{1,12}})\.([0-9]{{1,10}})\.([0-9]{{1,3}})\.({_B64}{{22}})\.({_B64}{{22}})$"
)
_COUNTER = re.compile(r"^[0-9]{1,10}$")
# A solution's longest text: the challenge, a visitor nonce and 64 counters of 10 digits.
MAX_SOLUTION_LENGTH = 120 + 23 + 64 * 11


class Verdict(enum.Enum):
    """What a solution is worth; every refusal has a sentence that says what to do."""

    OK = "ok"
    MALFORMED = "malformed"
    FORGED = "forged"
    EXPIRED = "expired"
    WRONG = "wrong"
    USED = "used"

    @property
    def message(self) -> str:
        return _MESSAGES[self]


_MESSAGES = {
    Verdict.OK: "the work is done",
    Verdict.MALFORMED: (
        f"{WORK_PARAMETER} must be a challenge, '{SOLUTION_SEPARATOR}' (optionally your own "
        f"22-character nonce and '{SOLUTION_SEPARATOR}') and one counter per sub-puzzle joined "
        "by '.': solve the challenge in this answer"
    ),
    Verdict.FORGED: "this challenge was not issued by this room: solve the one in this answer",
    Verdict.EXPIRED: (
        f"this challenge is older than {CHALLENGE_LIFETIME_SECONDS} seconds: solve the one in "
        "this answer"
    ),
    Verdict.WRONG: "a counter does not solve its sub-puzzle: solve the challenge in this answer",
    Verdict.USED: "this challenge has given its place already: solve the one in this answer",
}


@dataclass(frozen=True)
class JoinKeys:
    """The keys derived from the room's join secret: one signs challenges, one marks tokens."""

    challenge: bytes
    token: bytes

    @classmethod
    def from_secret(cls, secret: str) -> JoinKeys:
        if len(secret) < 32:
            raise ValueError("the join secret must hold at least 32 characters")
        material = secret.encode("utf-8")
        return cls(
            challenge=hmac.new(material, b"beekeeper join challenge", hashlib.sha256).digest(),
            token=hmac.new(material, b"beekeeper token id", hashlib.sha256).digest(),
        )


@dataclass(frozen=True)
class Challenge:
    issued_at: int
    target: int
    count: int
    nonce: str
    mac: str

    def __str__(self) -> str:
        return f"{self.unsigned}.{self.mac}"

    @property
    def unsigned(self) -> str:
        return f"{VERSION}.{self.issued_at}.{self.target}.{self.count}.{self.nonce}"

    @property
    def expires_at(self) -> int:
        return self.issued_at + CHALLENGE_LIFETIME_SECONDS

    @property
    def expected_tries(self) -> float:
        return self.count * TARGET_SPACE / self.target

    @classmethod
    def parse(cls, text: object) -> Challenge | None:
        if not isinstance(text, str):
            return None
        match = CHALLENGE_PATTERN.fullmatch(text)
        if match is None:
            return None
        issued, target, count, nonce, mac = match.groups()
        if not 1 <= int(target) < TARGET_SPACE or not 1 <= int(count) <= 64:
            return None
        return cls(int(issued), int(target), int(count), nonce, mac)


def flood_factor(joins_per_second: float | None, rate_per_minute: int) -> float:
    """How many times the set work a place costs now (1: no flood; see FLOOD_*)."""
    threshold = max(FLOOD_MIN_JOINS_PER_SECOND, rate_per_minute * FLOOD_RATE_MINUTES / 60)
    if joins_per_second is None or joins_per_second <= threshold:
        return 1.0
    return min(FLOOD_MAX_FACTOR, joins_per_second / threshold)


def target_for(work_ms: float) -> int:
    """The sub-puzzles' target that costs `work_ms` of a typical phone's time on average."""
    tries = max(1.0, work_ms / 1000 * PHONE_TRIES_PER_SECOND / SUBPUZZLES)
    return max(1, min(TARGET_SPACE - 1, round(TARGET_SPACE / tries)))


def phone_seconds(target: int, count: int = SUBPUZZLES) -> float:
    """A typical phone's average time, on one core, for a challenge of this difficulty."""
    return count * TARGET_SPACE / target / PHONE_TRIES_PER_SECOND


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _mac(key: bytes, room: str, unsigned: str) -> str:
    message = f"beekeeper join work|{room}|{unsigned}".encode()
    return _b64(hmac.new(key, message, hashlib.sha256).digest()[:MAC_BYTES])


def issue(
    keys: JoinKeys,
    room: str,
    *,
    now: float,
    work_ms: float,
    token_bytes: Callable[[int], bytes],
) -> Challenge:
    """A new challenge costing `work_ms` of a typical phone's time (the flood already in)."""
    nonce = _b64(token_bytes(NONCE_BYTES))
    unsigned = Challenge(int(now), target_for(work_ms), SUBPUZZLES, nonce, "")
    return Challenge(
        unsigned.issued_at,
        unsigned.target,
        unsigned.count,
        nonce,
        _mac(keys.challenge, room, unsigned.unsigned),
    )


def seed(challenge: Challenge, visitor: str | None = None) -> bytes:
    """SHA-256 of the challenge's text, or of `<challenge>~<visitor>` with a visitor nonce."""
    text = str(challenge) if visitor is None else f"{challenge}{SOLUTION_SEPARATOR}{visitor}"
    return hashlib.sha256(text.encode("ascii")).digest()


def visitor_nonce(token_bytes: Callable[[int], bytes]) -> str:
    """A solver's own nonce for a shared challenge (what the page's work.js draws)."""
    return _b64(token_bytes(NONCE_BYTES))


def solves(seed_bytes: bytes, index: int, counter: int, target: int) -> bool:
    message = seed_bytes + index.to_bytes(4, "big") + counter.to_bytes(4, "big")
    return int.from_bytes(hashlib.sha256(message).digest()[:4], "big") < target


@dataclass(frozen=True)
class Solution:
    challenge: Challenge
    counters: tuple[int, ...]
    visitor: str | None = None  # the solver's own nonce (a shared challenge)

    def __str__(self) -> str:
        visitor = "" if self.visitor is None else f"{self.visitor}{SOLUTION_SEPARATOR}"
        counters = ".".join(map(str, self.counters))
        return f"{self.challenge}{SOLUTION_SEPARATOR}{visitor}{counters}"

    @property
    def seed(self) -> bytes:
        return seed(self.challenge, self.visitor)

    @property
    def spent_as(self) -> str:
        """What is recorded once when the solution gives its place: the challenge's nonce, and
        the visitor's when there is one (a shared challenge gives one place per visitor)."""
        if self.visitor is None:
            return self.challenge.nonce
        return f"{self.challenge.nonce}.{self.visitor}"

    @classmethod
    def parse(cls, text: object) -> Solution | None:
        if not isinstance(text, str) or len(text) > MAX_SOLUTION_LENGTH:
            return None
        fields = text.split(SOLUTION_SEPARATOR)
        if len(fields) not in (2, 3):
            return None
        challenge = Challenge.parse(fields[0])
        visitor = fields[1] if len(fields) == 3 else None
        if challenge is None:
            return None
        if visitor is not None and not VISITOR_NONCE_PATTERN.fullmatch(visitor):
            return None
        parts = fields[-1].split(".")
        if len(parts) != challenge.count or not all(_COUNTER.fullmatch(p) for p in parts):
            return None
        counters = tuple(int(p) for p in parts)
        if any(c >= TARGET_SPACE for c in counters):
            return None
        return cls(challenge, counters, visitor)


def check(keys: JoinKeys, room: str, solution: Solution, *, now: float) -> Verdict:
    """Whether `solution` earns a place (its single use is the producer's to record)."""
    challenge = solution.challenge
    expected = _mac(keys.challenge, room, challenge.unsigned)
    if not hmac.compare_digest(expected, challenge.mac):
        return Verdict.FORGED
    if not challenge.issued_at - CLOCK_SKEW_SECONDS <= now < challenge.expires_at:
        return Verdict.EXPIRED
    seed_bytes = solution.seed
    for index, counter in enumerate(solution.counters):
        if not solves(seed_bytes, index, counter, challenge.target):
            return Verdict.WRONG
    return Verdict.OK


def solve(challenge: Challenge, visitor: str | None = None) -> Solution:
    """The reference solver: each sub-puzzle's first counter (hashlib; tests, benchmarks);
    with `visitor`, as one of the many a shared challenge was given to."""
    seed_bytes = seed(challenge, visitor)
    counters = []
    for index in range(challenge.count):
        prefix = hashlib.sha256(seed_bytes + index.to_bytes(4, "big"))
        counter = 0
        while True:
            attempt = prefix.copy()
            attempt.update(counter.to_bytes(4, "big"))
            if int.from_bytes(attempt.digest()[:4], "big") < challenge.target:
                break
            counter += 1
        counters.append(counter)
    return Solution(challenge, tuple(counters), visitor)
