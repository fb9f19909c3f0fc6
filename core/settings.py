"""The one room settings model, shared by the CLI, the CDK stack, the Lambdas and local mode.

A room is described by a `RoomSettings` value. It validates itself on construction, so an
invalid room can not exist in memory: every consumer (the CLI prompt, the stack, a Lambda
reading its environment, local mode) gets the same checks and the same error sentences.

This module is deliberately standard-library only: it is shipped inside the Lambda asset.

Three representations round-trip through the model:
- a human-editable TOML room file (`to_toml` / `from_toml`), comments included;
- plain mappings of strings, as typed at a prompt or on the command line (`from_mapping`);
- Lambda environment variables (`to_lambda_environment` / `from_lambda_environment`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from beekeeper.core.names import ResourceNames
from beekeeper.core.schedule import (
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
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


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


def is_loopback_host(host: str) -> bool:
    """localhost or a loopback address (127.0.0.0/8, ::1), as a URL's host names it."""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    if not isinstance(value, str) or not DOMAIN_PATTERN.fullmatch(value):
        raise SettingsError(
            "domain",
            value,
            "give a host name such as 'queue.shop.example' (lower case, no https:// and no "
            "path), or leave it empty for the distribution's own cloudfront.net address",
        )
    return value


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


def _int_in_range(field_name: str, value: object, low: int, high: int, hint: str = "") -> int:
    allowed = f"use a whole number from {low:,} to {high:,}{hint}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingsError(field_name, value, allowed)
    if not low <= value <= high:
        raise SettingsError(field_name, value, allowed)
    return value


def _minutes(field_name: str, value: object, low: float, high: float) -> float:
    """A positive number of minutes; fractions allowed (a local rehearsal uses 0.25)."""
    allowed = f"use a number of minutes from {low:g} to {high:g} (fractions such as 0.5 are fine)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SettingsError(field_name, value, allowed)
    if not math.isfinite(value) or not low <= value <= high:
        raise SettingsError(field_name, value, allowed)
    return float(value)


def _bool(field_name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise SettingsError(field_name, value, "use true or false")
    return value


@dataclass(frozen=True, kw_only=True)
class RoomSettings:
    """Everything that describes one waiting room. Validated on construction."""

    name: str
    display_name: str
    region: str
    origin: str
    rate: int
    dynamic_rate_throttling: bool = False
    admission_validity_minutes: int = DEFAULT_ADMISSION_VALIDITY_MINUTES
    # What /beekeeper does when the queue can not take a new visitor: False shows a 503 page
    # with Retry-After (the safe default: the shop stays protected); True sends the visitor
    # straight to the origin (the shop prefers selling to protecting).
    fail_open: bool = False
    # How many visitors one consumer Lambda admits per minute at most; the trigger plans
    # ceil(rate / consumer_capacity) consumers.
    consumer_capacity: int = DEFAULT_CONSUMER_CAPACITY
    # Arrival counter shards: each takes about 1,000 writes/s, so 8 take 8,000 new visitors/s.
    arrival_shards: int = DEFAULT_ARRIVAL_SHARDS
    # Places (marketing-link requests) one address may take per 5 minutes before the edge's WAF
    # refuses it; 0 deploys no WAF.
    waf_requests_per_5_minutes: int = DEFAULT_WAF_LIMIT
    # The URL the governor samples for latency; empty means the origin itself.
    health_check_url: str = ""
    # The governor also counts a check as slow when its 90th percentile exceeds this many ms;
    # 0 judges latency only against the shop's own baseline.
    slow_ms: int = 0
    accent_colour: str = "#1f5fbf"
    logo_url: str = ""
    # A file that replaces the default waiting room page, keeping its data hooks.
    custom_template: str = ""
    log_retention_days: int = 30
    # Who every alarm notifies (SNS email; AWS asks the address to confirm once); empty: nobody.
    alert_email: str = ""
    # Capacity mode: at most this many visitors inside the shop at once (0: no cap, rate only).
    # Rate and cap apply together; the stricter one holds at every moment.
    max_inside: int = 0
    # A visitor inside stays inside while active: each /client check renews the session for
    # this many minutes; without one for that long it ends and its place goes to the next.
    session_minutes: float = DEFAULT_SESSION_MINUTES
    # An admitted visitor who has not arrived at the shop (followed the redirect, or been
    # checked by /client) within this many minutes is a no-show: their place frees.
    claim_minutes: float = DEFAULT_CLAIM_MINUTES
    # A scheduled event's start (UTC, ISO 8601; empty: no schedule). Before it visitors join a
    # pre-queue; at it they are drawn into a random order. `beekeeper schedule` sets it live.
    starts_at: str = ""
    # The room's public address on a domain of your own (the edge's alternate domain name);
    # empty: the distribution's own cloudfront.net address.
    domain: str = ""
    # The ACM certificate (us-east-1) for `domain`; empty: `beekeeper deploy` finds an issued
    # one that covers the domain.
    certificate_arn: str = ""

    def __post_init__(self) -> None:
        validate_room_name(self.name)
        object.__setattr__(self, "display_name", validate_display_name(self.display_name))
        validate_region(self.region)
        validate_url("origin", self.origin, allow_loopback_http=True)
        _int_in_range("rate", self.rate, MIN_RATE, MAX_RATE, " visitors per minute")
        _bool("dynamic_rate_throttling", self.dynamic_rate_throttling)
        _int_in_range(
            "admission_validity_minutes",
            self.admission_validity_minutes,
            1,
            MAX_ADMISSION_VALIDITY_MINUTES,
            " minutes",
        )
        _bool("fail_open", self.fail_open)
        _int_in_range(
            "consumer_capacity",
            self.consumer_capacity,
            MIN_CONSUMER_CAPACITY,
            MAX_CONSUMER_CAPACITY,
            " visitors per consumer per minute",
        )
        _int_in_range("arrival_shards", self.arrival_shards, 1, MAX_ARRIVAL_SHARDS)
        if self.waf_requests_per_5_minutes != 0:
            _int_in_range(
                "waf_requests_per_5_minutes",
                self.waf_requests_per_5_minutes,
                MIN_WAF_LIMIT,
                MAX_WAF_LIMIT,
                ", or 0 for no WAF",
            )
        if self.health_check_url:
            validate_url("health_check_url", self.health_check_url, allow_loopback_http=True)
        if self.slow_ms != 0 or isinstance(self.slow_ms, bool):
            _int_in_range("slow_ms", self.slow_ms, 1, MAX_SLOW_MS, " milliseconds, or 0 for none")
        if not isinstance(self.accent_colour, str) or not HEX_COLOUR_PATTERN.fullmatch(
            self.accent_colour
        ):
            raise SettingsError("accent_colour", self.accent_colour, "use a colour like '#1f5fbf'")
        if self.logo_url:
            validate_url("logo_url", self.logo_url, allow_loopback_http=True)
        if not isinstance(self.custom_template, str):
            raise SettingsError("custom_template", self.custom_template, "use a file path")
        if self.alert_email:
            validate_email("alert_email", self.alert_email)
        _int_in_range("max_inside", self.max_inside, 0, MAX_INSIDE, " visitors, or 0 for no cap")
        object.__setattr__(
            self,
            "session_minutes",
            _minutes("session_minutes", self.session_minutes, MIN_MINUTES, MAX_SESSION_MINUTES),
        )
        object.__setattr__(
            self,
            "claim_minutes",
            _minutes("claim_minutes", self.claim_minutes, MIN_MINUTES, MAX_CLAIM_MINUTES),
        )
        if not isinstance(self.starts_at, str):
            raise SettingsError("starts_at", self.starts_at, f"use a time such as {TIME_EXAMPLE}")
        try:
            object.__setattr__(self, "starts_at", normalise_starts_at(self.starts_at))
        except ScheduleError as error:
            raise SettingsError("starts_at", self.starts_at, str(error)) from None
        if self.domain:
            # Host names are case-insensitive; the room keeps the form CloudFront lists.
            object.__setattr__(self, "domain", validate_domain(str(self.domain).lower()))
        if self.certificate_arn:
            validate_certificate_arn(self.certificate_arn)
            if not self.domain:
                raise SettingsError(
                    "certificate_arn",
                    self.certificate_arn,
                    "a certificate is for a domain: set domain too, or leave both empty",
                )
        if self.log_retention_days not in LOG_RETENTION_DAYS_ALLOWED:
            raise SettingsError(
                "log_retention_days",
                self.log_retention_days,
                "use one of " + ", ".join(str(d) for d in LOG_RETENTION_DAYS_ALLOWED),
            )

    # -- derived values -------------------------------------------------------------------

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
        return {f.name: getattr(self, f.name) for f in _FIELDS}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, coerce_strings: bool = False) -> RoomSettings:
        """Build from a mapping; unknown keys and missing required keys are errors.

        With coerce_strings, values given as text (a prompt, a flag, an environment variable)
        are converted to the field's type first, with the same clear errors.
        """
        unknown = sorted(set(data) - _FIELD_NAMES)
        if unknown:
            raise SettingsError(
                unknown[0],
                data[unknown[0]],
                "this is not a room setting; known settings are " + ", ".join(sorted(_FIELD_NAMES)),
            )
        missing = [name for name in _REQUIRED if name not in data]
        if missing:
            raise SettingsError(missing[0], None, "this setting is required")
        values = dict(data)
        if coerce_strings:
            values = {key: _coerce(key, value) for key, value in values.items()}
        return cls(**values)

    # -- TOML room file ----------------------------------------------------------------------

    def to_toml(self) -> str:
        lines = [
            "# Beekeeper room settings. Edit freely; `beekeeper` checks every value when it",
            "# reads this file and names the field and what is allowed if one is wrong.",
            "",
        ]
        for f in _FIELDS:
            lines.append(f"# {_FIELD_HELP[f.name]}")
            lines.append(f"{f.name} = {_toml_value(getattr(self, f.name))}")
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

_FIELDS = dataclasses.fields(RoomSettings)
_FIELD_NAMES = frozenset(f.name for f in _FIELDS)
_REQUIRED = tuple(f.name for f in _FIELDS if f.default is dataclasses.MISSING)
_FIELD_HELP = {
    "name": f"Room name, used in AWS resource names: {ROOM_NAME_RULE}.",
    "display_name": "The event's name as visitors see it on the waiting room page.",
    "region": "AWS region the room is deployed to, e.g. us-east-1.",
    "origin": "The shop's URL visitors are let through to (https; http only for localhost).",
    "rate": f"Visitors let through per minute, {MIN_RATE} to {MAX_RATE:,}.",
    "dynamic_rate_throttling": "Slow the rate automatically when the origin slows down.",
    "admission_validity_minutes": "How long an admitted visitor stays admitted, in minutes.",
    "fail_open": "When the queue is unavailable: true sends visitors to the origin, "
    "false shows a 'try again' page.",
    "consumer_capacity": "Visitors one consumer Lambda admits per minute at most.",
    "arrival_shards": "Arrival counter shards; each takes about 1,000 new visitors/s.",
    "waf_requests_per_5_minutes": "Places one address may take per 5 minutes before the edge's "
    "WAF refuses it (marketing-link requests); 0 = no WAF.",
    "health_check_url": "URL the governor samples; empty = the origin.",
    "slow_ms": "Governor: a check whose 90th percentile takes longer than this many ms is slow; "
    "0 = judge latency only against the shop's own baseline.",
    "accent_colour": "Accent colour of the waiting room page, #rrggbb.",
    "logo_url": "Optional logo shown on the waiting room page (https).",
    "custom_template": "Optional HTML file replacing the default waiting room page.",
    "log_retention_days": "Days CloudWatch keeps the room's logs.",
    "alert_email": "Email address every alarm notifies (AWS asks it to confirm once); "
    "empty = nobody is told.",
    "max_inside": "Capacity mode: at most this many visitors inside the shop at once; 0 = no cap.",
    "session_minutes": "Capacity mode: a session ends after this many minutes without a /client "
    "check (each check renews it).",
    "claim_minutes": "Capacity mode: an admitted visitor who has not arrived at the shop within "
    "this many minutes is a no-show, and their place frees.",
    "starts_at": "Scheduled start, UTC ISO 8601 (e.g. 2030-06-01T09:00:00Z); before it visitors "
    "join a pre-queue, drawn into a random order at the start; empty = no schedule.",
    "domain": "The room's public address on your own domain, e.g. queue.shop.example (point it "
    "at the distribution after the deploy); empty = the distribution's cloudfront.net address.",
    "certificate_arn": "ACM certificate in us-east-1 for the domain; empty = `beekeeper deploy` "
    "finds an issued one that covers it.",
}
_FIELD_DEFAULTS = {f.name: f.default for f in _FIELDS if f.default is not dataclasses.MISSING}
_FIELD_KINDS: dict[str, type] = {
    "name": str,
    "display_name": str,
    "region": str,
    "origin": str,
    "rate": int,
    "dynamic_rate_throttling": bool,
    "admission_validity_minutes": int,
    "fail_open": bool,
    "consumer_capacity": int,
    "arrival_shards": int,
    "waf_requests_per_5_minutes": int,
    "health_check_url": str,
    "slow_ms": int,
    "accent_colour": str,
    "logo_url": str,
    "custom_template": str,
    "log_retention_days": int,
    "alert_email": str,
    "max_inside": int,
    "session_minutes": float,
    "claim_minutes": float,
    "starts_at": str,
    "domain": str,
    "certificate_arn": str,
}
assert set(_FIELD_KINDS) == _FIELD_NAMES == set(_FIELD_HELP), "document every setting"

_TRUE_WORDS = frozenset({"true", "yes", "y", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "n", "off", "0"})


def _coerce(key: str, value: Any) -> Any:
    """Text typed by a person, converted to the field's type; anything else is left alone."""
    if not isinstance(value, str):
        return value
    kind = _FIELD_KINDS[key]
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


def default_for(field_name: str) -> Any:
    """The default of an optional setting (used by prompts to fill what was not asked)."""
    return _FIELD_DEFAULTS[field_name]
