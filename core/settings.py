"""The one room settings model, shared by the CLI, the CDK stack, the Lambdas and local mode.

A room is described by a `RoomSettings` value. It validates itself on construction, so an
invalid room can not exist in memory: every consumer (the CLI prompt, the stack, a Lambda
reading its environment, local mode) gets the same checks and the same error sentences.

This module is deliberately standard-library only: it is shipped inside the Lambda asset.

Three representations round-trip through the model:
- a human-editable TOML room file (`to_toml` / `from_toml`), comments included;
- plain mappings of strings, as typed at a prompt or on the command line (`from_mapping`);
- Lambda environment variables (`to_lambda_environment` / `from_lambda_environment`).

Each setting is described once, by its field: type, default, one sentence of help and the
`Rule` its values follow. `SETTINGS` is that description for everything outside the model: the
room file's comments, the prompts' coercion and every command's flags (cli/options.py) are
made from it, so a new setting is one field here and the same mistake gets the same sentence
wherever it is made.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from beekeeper.core.join_work import DEFAULT_JOIN_WORK_MS, MAX_JOIN_WORK_MS
from beekeeper.core.loopback import is_loopback_host
from beekeeper.core.names import ResourceNames
from beekeeper.core.schedule import (
    MAX_DAYS_AHEAD,
    TIME_EXAMPLE,
    ScheduleError,
    normalise_starts_at,
    parse_starts_at,
)

MIN_RATE = 1
MAX_RATE = 300_000
DEFAULT_ADMISSION_VALIDITY_MINUTES = 60
MAX_ADMISSION_VALIDITY_MINUTES = 7 * 24 * 60
DEFAULT_CONSUMER_CAPACITY = 6_000
MIN_CONSUMER_CAPACITY = 100
MAX_CONSUMER_CAPACITY = 30_000
DEFAULT_ARRIVAL_SHARDS = 8
MAX_ARRIVAL_SHARDS = 64
# WAF rate-based rules count requests per IP over a 5-minute window; AWS's minimum limit is 10.
MIN_WAF_LIMIT = 10
MAX_WAF_LIMIT = 2_000_000_000
# The edge's per-address limit on places taken (marketing-link requests) per 5 minutes: an
# office, a campus or a mobile carrier's NAT sends many visitors from one address, and 2,000 in
# five minutes still fit (docs/stack.md, "The edge's WAF"); a bot looping on the link is
# refused after 2,000 places instead of taking 418 a second.
DEFAULT_WAF_LIMIT = 2_000
# A custom domain for the room's public address (CloudFront's alternate domain name): a DNS
# name of at least two labels, lower case (docs/stack.md, "A domain of your own").
DOMAIN_PATTERN = re.compile(r"(?=.{4,253}\Z)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
# CloudFront takes certificates from ACM in us-east-1 only.
CERTIFICATE_REGION = "us-east-1"
CERTIFICATE_ARN_PATTERN = re.compile(
    r"arn:aws(?:-[a-z]+)*:acm:(?P<region>[a-z]{2}(?:-[a-z]+)+-\d{1,2}):\d{12}:"
    r"certificate/[0-9a-f-]{36}"
)
# The governor's optional absolute latency limit for the 90th percentile of a check, in ms. The
# governor gives each sample 5 s and counts a slower one as failed, so a limit must be below it.
MAX_SLOW_MS = 4_000
MAX_INSIDE = 1_000_000
DEFAULT_SESSION_MINUTES = 10.0
DEFAULT_CLAIM_MINUTES = 2.0
MIN_MINUTES = 0.05  # 3 s: short enough for any rehearsal
MAX_SESSION_MINUTES = 24 * 60.0
MAX_CLAIM_MINUTES = 60.0
# Presence (the script on the shop's pages, core/presence.py): the grace covers a reload or a
# network blip; 0 turns presence off.
MIN_PRESENCE_GRACE_SECONDS = 5
MAX_PRESENCE_GRACE_SECONDS = 600
DEFAULT_PRESENCE_IDLE_MINUTES = 10.0
LOG_RETENTION_DAYS_ALLOWED = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365)

# Room names become part of CloudFormation stack names, Lambda function names, queue names and
# S3 bucket names, so they follow the strictest of those rules: lower case (S3), letters,
# digits and single hyphens, starting with a letter (CloudFormation), short enough that
# "beekeeper-<name>-consumer" stays within Lambda's 64 characters.
# Every pattern here is applied with fullmatch: with `match`, `$` lets a trailing newline
# through, and "spring-sale\n" would pass here and fail later inside an AWS call.
ROOM_NAME_PATTERN = re.compile(r"^[a-z](?:[a-z0-9]|-(?=[a-z0-9])){0,31}$")
ROOM_NAME_RULE = (
    "1 to 32 characters: lower-case letters, digits and single hyphens, "
    "starting with a letter and not ending with a hyphen"
)
REGION_PATTERN = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$")
HEX_COLOUR_PATTERN = re.compile(r"^#[0-9a-fA-F]{6}$")
# An address SNS can deliver to: the usual characters, one @, a dotted domain. Deliberately
# plain (quoted local parts are refused): SNS itself asks the address to confirm.
EMAIL_PATTERN = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
MAX_EMAIL_LENGTH = 254


class Mode(StrEnum):
    """How a room decides who goes in, fixed at deploy: `RATE` lets visitors through at the
    rate alone; `CAPACITY` (a room deployed with `max_inside`) also keeps a place for each
    visitor inside the shop, with its sessions, /enter, /leave and presence. Read it from
    `RoomSettings.mode`; the live cap (`RoomConfig.max_inside`, which `beekeeper capacity`
    changes, and lifts with 0) is another fact: `capped`."""

    RATE = "rate"
    CAPACITY = "capacity"


def capped(max_inside: int) -> bool:
    """Whether a cap of `max_inside` (the live one, or the setting) limits who is inside:
    0 is no cap (`beekeeper capacity NAME 0` lifts a capacity-mode room's cap for a while)."""
    return max_inside > 0


class SettingsError(ValueError):
    """A room setting has a value that is not allowed.

    The message is one sentence naming the field, the value given and what is allowed, fit to
    show a user as it is.
    """

    def __init__(self, field_name: str, value: object, allowed: str) -> None:
        self.field_name = field_name
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field_name}: {value!r} is not allowed; {allowed}.")


def validate_room_name(value: object) -> str:
    if not isinstance(value, str) or not ROOM_NAME_PATTERN.fullmatch(value):
        raise SettingsError("name", value, f"use {ROOM_NAME_RULE}, for example 'spring-sale'")
    return value


def validate_display_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SettingsError(
            "display_name", value, "give the event's name as visitors should see it"
        )
    if len(value) > 80 or any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise SettingsError(
            "display_name", value, "use at most 80 printable characters on one line"
        )
    return value.strip()


def validate_region(value: object) -> str:
    if not isinstance(value, str) or not REGION_PATTERN.fullmatch(value):
        raise SettingsError("region", value, "use an AWS region code such as 'us-east-1'")
    return value


def validate_url(field_name: str, value: object, *, allow_loopback_http: bool) -> str:
    """An absolute https URL; plain http only for a loopback host when allowed."""
    rule = (
        "use an https:// URL (plain http:// only for localhost or 127.0.0.1)"
        if allow_loopback_http
        else "use an https:// URL"
    )
    if not isinstance(value, str) or not value or len(value) > 2048:
        raise SettingsError(field_name, value, rule)
    if any(ch.isspace() or ord(ch) < 32 or ch in "\"'<>\\`" for ch in value):
        raise SettingsError(field_name, value, f"{rule} without spaces, quotes or angle brackets")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError as error:
        raise SettingsError(field_name, value, rule) from error
    host = parts.hostname or ""
    if parts.username or parts.password:
        raise SettingsError(field_name, value, "leave credentials out of the URL")
    if parts.fragment:
        raise SettingsError(field_name, value, "leave the #fragment out of the URL")
    if not host:
        raise SettingsError(field_name, value, rule)
    if parts.scheme == "https":
        return value
    if parts.scheme == "http" and allow_loopback_http and is_loopback_host(host):
        return value
    raise SettingsError(field_name, value, rule)


def validate_email(field_name: str, value: object) -> str:
    if (
        not isinstance(value, str)
        or len(value) > MAX_EMAIL_LENGTH
        or not EMAIL_PATTERN.fullmatch(value)
    ):
        raise SettingsError(
            field_name,
            value,
            "use one email address such as 'ops@shop.example', or leave it empty",
        )
    return value


def validate_domain(value: object) -> str:
    """A host name the room answers on, lower case, without scheme, port or path."""
    text = value.lower() if isinstance(value, str) else value
    if not isinstance(text, str) or not DOMAIN_PATTERN.fullmatch(text):
        raise SettingsError(
            "domain",
            value,
            "give a host name such as 'queue.shop.example' (no https:// and no path), or "
            "leave it empty for the distribution's own cloudfront.net address",
        )
    return text


def validate_certificate_arn(value: object) -> str:
    """An ACM certificate's ARN in us-east-1, the only region CloudFront takes one from."""
    match = CERTIFICATE_ARN_PATTERN.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise SettingsError(
            "certificate_arn",
            value,
            "give an ACM certificate ARN such as 'arn:aws:acm:us-east-1:123456789012:"
            "certificate/...', or leave it empty and `beekeeper deploy` finds an issued "
            "certificate for the domain",
        )
    if match.group("region") != CERTIFICATE_REGION:
        raise SettingsError(
            "certificate_arn",
            value,
            f"CloudFront takes certificates from {CERTIFICATE_REGION} only: request or import "
            f"the certificate in ACM in {CERTIFICATE_REGION} (N. Virginia) and give that ARN",
        )
    return match.group(0)


# -- rules: what a setting's values may be, each with the sentence that says so ------------------


class Rule:
    """What one setting's values may be. Called with the field's name and a value, it returns
    the value as the room keeps it, or raises SettingsError with the sentence for a user.
    `metavar` names the value in a command-line flag's help."""

    metavar = "TEXT"

    def __call__(self, field_name: str, value: object) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class WholeNumber(Rule):
    """A whole number from low to high; with `zero`, 0 too, meaning what `zero` says."""

    low: int
    high: int
    unit: str = ""  # after the range in the sentence: " visitors per minute"
    zero: str = ""  # what 0 means when it is allowed outside the range: "no WAF"
    metavar = "N"

    @property
    def allowed(self) -> str:
        text = f"use a whole number from {self.low:,} to {self.high:,}{self.unit}"
        return f"{text}, or 0 for {self.zero}" if self.zero else text

    def __call__(self, field_name: str, value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingsError(field_name, value, self.allowed)
        if value == 0 and self.zero:
            return 0
        if not self.low <= value <= self.high:
            raise SettingsError(field_name, value, self.allowed)
        return value


@dataclass(frozen=True)
class Minutes(Rule):
    """A number of minutes from low to high; fractions allowed (a local rehearsal uses 0.25)."""

    low: float
    high: float
    metavar = "MINUTES"

    def __call__(self, field_name: str, value: object) -> float:
        allowed = (
            f"use a number of minutes from {self.low:g} to {self.high:g} "
            "(fractions such as 0.5 are fine)"
        )
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingsError(field_name, value, allowed)
        if not math.isfinite(value) or not self.low <= value <= self.high:
            raise SettingsError(field_name, value, allowed)
        return float(value)


@dataclass(frozen=True)
class OneOf(Rule):
    """One of a few whole numbers."""

    values: tuple[int, ...]
    metavar = "N"

    def __call__(self, field_name: str, value: object) -> int:
        if isinstance(value, bool) or value not in self.values:
            raise SettingsError(
                field_name, value, "use one of " + ", ".join(str(v) for v in self.values)
            )
        assert isinstance(value, int)
        return value


@dataclass(frozen=True)
class Flag(Rule):
    """true or false."""

    metavar = "BOOLEAN"

    def __call__(self, field_name: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise SettingsError(field_name, value, "use true or false")
        return value


@dataclass(frozen=True)
class Text(Rule):
    """Text checked by `check` (which takes the field's name and the value); with `optional`,
    the empty text too, meaning the setting is not used."""

    check: Callable[[str, object], str]
    metavar: str = "TEXT"  # how a flag's help names the value: URL, ADDRESS, TIME ...
    optional: bool = False

    def __call__(self, field_name: str, value: object) -> str:
        if self.optional and value == "":
            return ""
        return self.check(field_name, value)


def _room_name(_field_name: str, value: object) -> str:
    return validate_room_name(value)


def _display_name(_field_name: str, value: object) -> str:
    return validate_display_name(value)


def _region(_field_name: str, value: object) -> str:
    return validate_region(value)


def _domain(_field_name: str, value: object) -> str:
    return validate_domain(value)


def _certificate_arn(_field_name: str, value: object) -> str:
    return validate_certificate_arn(value)


def _url(field_name: str, value: object) -> str:
    return validate_url(field_name, value, allow_loopback_http=True)


def _colour(field_name: str, value: object) -> str:
    if not isinstance(value, str) or not HEX_COLOUR_PATTERN.fullmatch(value):
        raise SettingsError(field_name, value, "use a colour like '#1f5fbf'")
    return value


def _file_path(field_name: str, value: object) -> str:
    if not isinstance(value, str):
        raise SettingsError(field_name, value, "use a file path")
    return value


def _starts_at(field_name: str, value: object) -> str:
    if not isinstance(value, str):
        raise SettingsError(field_name, value, f"use a time such as {TIME_EXAMPLE}")
    try:
        return normalise_starts_at(value)
    except ScheduleError as error:
        raise SettingsError(field_name, value, str(error)) from None


@dataclass(frozen=True)
class Setting:
    """One room setting as the room file, the command line and the prompts describe it: one
    sentence of help (the room file's comment, the flag's help and `init`'s question), the
    rule its values follow, beside `--field-name` any older names of its command-line flag,
    and whether `init` asks for it although it has a default (it asks for every required one)."""

    help: str
    rule: Rule
    flags: tuple[str, ...] = ()
    asked: bool = False


_SETTING = "beekeeper.setting"


def setting(
    help: str, rule: Rule, *, flags: tuple[str, ...] = (), asked: bool = False
) -> dict[str, Setting]:
    """A field's metadata: `name: int = field(metadata=setting(...))` declares a setting."""
    return {_SETTING: Setting(help, rule, flags, asked)}


@dataclass(frozen=True, kw_only=True)
class RoomSettings:
    """Everything that describes one waiting room. Validated on construction.

    Each field is one setting: its type, its default, its help and the rule its values follow
    (`setting`). The room file, the Lambda environment, the prompts and every command's flags
    (cli/options.py) are made from these declarations, so a new setting is one field here.
    """

    name: str = field(
        metadata=setting(
            f"Room name, used in AWS resource names: {ROOM_NAME_RULE}.", Text(_room_name, "NAME")
        )
    )
    display_name: str = field(
        metadata=setting(
            "The event's name as visitors see it on the waiting room page.", Text(_display_name)
        )
    )
    region: str = field(
        metadata=setting(
            "AWS region the room is deployed to, e.g. us-east-1.", Text(_region, "REGION")
        )
    )
    origin: str = field(
        metadata=setting(
            "The shop's URL visitors are let through to (https; http only for localhost).",
            Text(_url, "URL"),
        )
    )
    rate: int = field(
        metadata=setting(
            f"Visitors let through per minute, {MIN_RATE} to {MAX_RATE:,}.",
            WholeNumber(MIN_RATE, MAX_RATE, " visitors per minute"),
        )
    )
    dynamic_rate_throttling: bool = field(
        default=False,
        metadata=setting(
            "Slow the rate automatically when the origin slows down.",
            Flag(),
            flags=("--drt",),
            asked=True,
        ),
    )
    admission_validity_minutes: int = field(
        default=DEFAULT_ADMISSION_VALIDITY_MINUTES,
        metadata=setting(
            "How long an admitted visitor stays admitted, in minutes.",
            WholeNumber(1, MAX_ADMISSION_VALIDITY_MINUTES, " minutes"),
        ),
    )
    # What /beekeeper does when the queue can not take a new visitor: False shows a 503 page
    # with Retry-After (the safe default: the shop stays protected); True sends the visitor
    # straight to the origin (the shop prefers selling to protecting).
    fail_open: bool = field(
        default=False,
        metadata=setting(
            "When the queue is unavailable: true sends visitors to the origin, "
            "false shows a 'try again' page.",
            Flag(),
        ),
    )
    # The trigger plans ceil(rate / consumer_capacity) consumers.
    consumer_capacity: int = field(
        default=DEFAULT_CONSUMER_CAPACITY,
        metadata=setting(
            "Visitors one consumer Lambda admits per minute at most.",
            WholeNumber(
                MIN_CONSUMER_CAPACITY, MAX_CONSUMER_CAPACITY, " visitors per consumer per minute"
            ),
        ),
    )
    arrival_shards: int = field(
        default=DEFAULT_ARRIVAL_SHARDS,
        metadata=setting(
            "Arrival counter shards; each takes about 1,000 new visitors/s.",
            WholeNumber(1, MAX_ARRIVAL_SHARDS),
        ),
    )
    # The edge's per-address limit (core/edge.py builds the rule): a NAT's visitors still fit.
    waf_requests_per_5_minutes: int = field(
        default=DEFAULT_WAF_LIMIT,
        metadata=setting(
            "Places one address may take per 5 minutes before the edge's WAF refuses it "
            "(marketing-link requests); 0 = no WAF.",
            WholeNumber(MIN_WAF_LIMIT, MAX_WAF_LIMIT, zero="no WAF"),
        ),
    )
    health_check_url: str = field(
        default="",
        metadata=setting(
            "URL the governor samples; empty = the origin.", Text(_url, "URL", optional=True)
        ),
    )
    slow_ms: int = field(
        default=0,
        metadata=setting(
            "Governor: a check whose 90th percentile takes longer than this many ms is slow; "
            "0 = judge latency only against the shop's own baseline.",
            WholeNumber(1, MAX_SLOW_MS, " milliseconds", zero="none"),
        ),
    )
    accent_colour: str = field(
        default="#1f5fbf",
        metadata=setting(
            "Accent colour of the waiting room page, #rrggbb.", Text(_colour, "COLOUR")
        ),
    )
    logo_url: str = field(
        default="",
        metadata=setting(
            "Optional logo shown on the waiting room page (https).",
            Text(_url, "URL", optional=True),
        ),
    )
    custom_template: str = field(
        default="",
        metadata=setting(
            "Optional HTML file replacing the default waiting room page.", Text(_file_path, "FILE")
        ),
    )
    log_retention_days: int = field(
        default=30,
        metadata=setting(
            "Days CloudWatch keeps the room's logs.", OneOf(LOG_RETENTION_DAYS_ALLOWED)
        ),
    )
    alert_email: str = field(
        default="",
        metadata=setting(
            "Email address every alarm notifies (AWS asks it to confirm once); "
            "empty = nobody is told.",
            Text(validate_email, "ADDRESS", optional=True),
        ),
    )
    # Rate and cap apply together; the stricter one holds at every moment.
    max_inside: int = field(
        default=0,
        metadata=setting(
            "Capacity mode: at most this many visitors inside the shop at once; 0 = no cap.",
            WholeNumber(1, MAX_INSIDE, " visitors", zero="no cap"),
        ),
    )
    session_minutes: float = field(
        default=DEFAULT_SESSION_MINUTES,
        metadata=setting(
            "Capacity mode: a session ends after this many minutes without a /client "
            "check (each check renews it).",
            Minutes(MIN_MINUTES, MAX_SESSION_MINUTES),
        ),
    )
    claim_minutes: float = field(
        default=DEFAULT_CLAIM_MINUTES,
        metadata=setting(
            "Capacity mode: an admitted visitor who has not arrived at the shop within "
            "this many minutes is a no-show, and their place frees.",
            Minutes(MIN_MINUTES, MAX_CLAIM_MINUTES),
        ),
    )
    # A shop whose pages load the presence script: heartbeats hold the place for a grace.
    presence_grace_seconds: int = field(
        default=0,
        metadata=setting(
            "Capacity mode, shops that load the presence script: a place whose heartbeats "
            "stopped this many seconds ago (tab closed or hidden) frees; 0 = no presence "
            "(a heartbeat renews the session like a /client check).",
            WholeNumber(
                MIN_PRESENCE_GRACE_SECONDS,
                MAX_PRESENCE_GRACE_SECONDS,
                " seconds",
                zero="no presence",
            ),
        ),
    )
    presence_idle_minutes: float = field(
        default=DEFAULT_PRESENCE_IDLE_MINUTES,
        metadata=setting(
            "Capacity mode, presence script: it stops its heartbeats after this many minutes "
            "without the visitor using the page.",
            Minutes(MIN_MINUTES, MAX_SESSION_MINUTES),
        ),
    )
    # `beekeeper schedule` sets it live.
    starts_at: str = field(
        default="",
        metadata=setting(
            f"Scheduled start, ISO 8601 with a time zone (e.g. {TIME_EXAMPLE}), at most "
            f"{MAX_DAYS_AHEAD} days ahead; before it visitors join a pre-queue, drawn into a "
            "random order at the start; empty = no schedule.",
            Text(_starts_at, "TIME"),
        ),
    )

    # The marketing link gives a place only for a solved proof-of-work challenge
    # (core/join_work.py).
    join_work: int = field(
        default=DEFAULT_JOIN_WORK_MS,
        metadata=setting(
            "The work a new place in line costs, in milliseconds of a typical phone's time "
            "(a proof of work the waiting room's page does before the visitor joins); 0 = none.",
            WholeNumber(1, MAX_JOIN_WORK_MS, " milliseconds", zero="no work"),
        ),
    )
    # The edge's alternate domain name (stacks/edge.py); host names are case-insensitive and
    # the room keeps the form CloudFront lists.
    domain: str = field(
        default="",
        metadata=setting(
            "The room's public address on your own domain, e.g. queue.shop.example (point it "
            "at the distribution after the deploy); empty = the distribution's cloudfront.net "
            "address.",
            Text(_domain, "DOMAIN", optional=True),
        ),
    )
    certificate_arn: str = field(
        default="",
        metadata=setting(
            "ACM certificate in us-east-1 for the domain; empty = `beekeeper deploy` finds an "
            "issued one that covers it.",
            Text(_certificate_arn, "ARN", optional=True),
        ),
    )

    def __post_init__(self) -> None:
        for description in SETTINGS.values():
            value = description.rule(description.name, getattr(self, description.name))
            object.__setattr__(self, description.name, value)
        if self.certificate_arn and not self.domain:
            raise SettingsError(
                "certificate_arn",
                self.certificate_arn,
                "a certificate is for a domain: set domain too, or leave both empty",
            )

    # -- derived values -------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        """The room's mode: capacity mode when it was given a cap on the visitors inside."""
        return Mode.CAPACITY if capped(self.max_inside) else Mode.RATE

    @property
    def names(self) -> ResourceNames:
        return ResourceNames(self.name)

    @property
    def stack_name(self) -> str:
        return self.names.stack

    @property
    def admission_validity_seconds(self) -> int:
        return self.admission_validity_minutes * 60

    @property
    def session_seconds(self) -> int:
        return max(1, round(self.session_minutes * 60))

    @property
    def claim_seconds(self) -> int:
        return max(1, round(self.claim_minutes * 60))

    @property
    def presence_idle_seconds(self) -> int:
        return max(1, round(self.presence_idle_minutes * 60))

    @property
    def starts_at_epoch(self) -> int:
        """The scheduled start in epoch seconds (0: no schedule)."""
        return parse_starts_at(self.starts_at)

    @property
    def sampled_url(self) -> str:
        return self.health_check_url or self.origin

    def replace(self, **changes: Any) -> RoomSettings:
        """A copy with some fields changed, validated again."""
        return dataclasses.replace(self, **changes)

    # -- mappings ----------------------------------------------------------------------------

    def to_mapping(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SETTINGS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, coerce_strings: bool = False) -> RoomSettings:
        """Build from a mapping; unknown keys and missing required keys are errors.

        With coerce_strings, values given as text (a prompt, a flag, an environment variable)
        are converted to the field's type first, with the same clear errors.
        """
        unknown = sorted(set(data) - set(SETTINGS))
        if unknown:
            raise SettingsError(
                unknown[0],
                data[unknown[0]],
                "this is not a room setting; known settings are " + ", ".join(sorted(SETTINGS)),
            )
        missing = [name for name in _REQUIRED if name not in data]
        if missing:
            raise SettingsError(missing[0], None, "this setting is required")
        values = dict(data)
        if coerce_strings:
            values = {key: _coerce(key, SETTINGS[key].kind, value) for key, value in values.items()}
        return cls(**values)

    # -- TOML room file ----------------------------------------------------------------------

    def to_toml(self) -> str:
        lines = [
            "# Beekeeper room settings. Edit freely; `beekeeper` checks every value when it",
            "# reads this file and names the field and what is allowed if one is wrong.",
            "",
        ]
        for name, description in SETTINGS.items():
            lines.append(f"# {description.help}")
            lines.append(f"{name} = {_toml_value(getattr(self, name))}")
            lines.append("")
        return "\n".join(lines)

    @classmethod
    def from_toml(cls, text: str) -> RoomSettings:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise SettingsError("room file", "(TOML)", f"fix the file's syntax: {error}") from error
        except RecursionError as error:
            # A room file is a flat list of settings; nesting this deep is never one.
            raise SettingsError(
                "room file", "(TOML)", "it nests values too deeply: write one setting per line"
            ) from error
        return cls.from_mapping(data)

    # -- Lambda environment --------------------------------------------------------------------

    def to_lambda_environment(self) -> dict[str, str]:
        """The room as one JSON environment variable: every Lambda reads the same model."""
        return {ENVIRONMENT_VARIABLE: json.dumps(self.to_mapping(), separators=(",", ":"))}

    @classmethod
    def from_lambda_environment(cls, environ: Mapping[str, str]) -> RoomSettings:
        raw = environ.get(ENVIRONMENT_VARIABLE)
        if not raw:
            raise SettingsError(ENVIRONMENT_VARIABLE, raw, "the deployment must set it")
        return cls.from_mapping(json.loads(raw))


ENVIRONMENT_VARIABLE = "BEEKEEPER_ROOM"

_KINDS: dict[str, type] = {"str": str, "int": int, "float": float, "bool": bool}


@dataclass(frozen=True)
class SettingDescription:
    """A setting as everything outside the model sees it: made from its field's declaration."""

    name: str
    kind: type  # str, int, float or bool: the field's annotation
    default: Any  # dataclasses.MISSING for a required setting
    help: str
    rule: Rule
    flags: tuple[str, ...]  # its command-line flag's names: --field-name first
    asked: bool  # `init` asks for it although it has a default

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    @property
    def question(self) -> str:
        """What `init` asks: the help sentence, a question for a yes or no."""
        text = self.help.removesuffix(".")
        return f"{text}?" if self.kind is bool else text

    def parse(self, value: object) -> Any:
        """The value as the room keeps it, from text typed by a person (a flag, a prompt, an
        environment variable) or from a value of the field's type; SettingsError otherwise."""
        return self.rule(self.name, _coerce(self.name, self.kind, value))


def _describe(f: dataclasses.Field[Any]) -> SettingDescription:
    declared: Setting = f.metadata[_SETTING]
    return SettingDescription(
        name=f.name,
        kind=_KINDS[str(f.type)],
        default=f.default,
        help=declared.help,
        rule=declared.rule,
        flags=("--" + f.name.replace("_", "-"), *declared.flags),
        asked=declared.asked,
    )


# Every setting, in the room file's order.
SETTINGS: dict[str, SettingDescription] = {
    f.name: _describe(f) for f in dataclasses.fields(RoomSettings)
}
_REQUIRED = tuple(name for name, d in SETTINGS.items() if d.required)

_TRUE_WORDS = frozenset({"true", "yes", "y", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "n", "off", "0"})


def _coerce(key: str, kind: type, value: Any) -> Any:
    """Text typed by a person, converted to the field's type; anything else is left alone."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if kind is int:
        cleaned = text.replace(",", "").replace("_", "")
        if re.fullmatch(r"[+-]?\d+", cleaned):
            return int(cleaned)
        raise SettingsError(key, value, "use a whole number")
    if kind is float:
        try:
            number = float(text.replace(",", "").replace("_", ""))
        except ValueError:
            raise SettingsError(key, value, "use a number") from None
        return int(number) if number.is_integer() else number
    if kind is bool:
        if text.lower() in _TRUE_WORDS:
            return True
        if text.lower() in _FALSE_WORDS:
            return False
        raise SettingsError(key, value, "use yes or no")
    return text


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # a TOML float: 2.0, 0.25
    # A JSON string with non-ASCII kept literal is a valid TOML basic string.
    return json.dumps(str(value), ensure_ascii=False)


def changes(before: RoomSettings, after: RoomSettings) -> list[str]:
    """Each setting `after` changes against `before`, in the room file's order, its values as
    the room file writes them: "max_inside 50 -> 80"."""
    return [
        f"{name} {_toml_value(getattr(before, name))} -> {_toml_value(getattr(after, name))}"
        for name in SETTINGS
        if getattr(before, name) != getattr(after, name)
    ]


def default_for(field_name: str) -> Any:
    """The default of an optional setting (used by prompts to fill what was not asked)."""
    default = SETTINGS[field_name].default
    if default is dataclasses.MISSING:
        raise KeyError(f"{field_name} is required: it has no default")
    return default
