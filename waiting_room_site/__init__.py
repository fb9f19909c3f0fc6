"""The waiting room page's files (package data) and how a room's settings go into them.

`render_page(settings)` is the contract with the stack (which serves the page from API Gateway)
and local mode (which serves it at /room): it returns one complete, self-contained HTML document
for one room. The sources stay separate for maintenance and are inlined here:

- index.html (or the room's custom template): the markup, with `{{PLACEHOLDER}}` hooks;
- page.css: the styles, preceded by the room's colours as CSS custom properties;
- page.js (pure logic), channel.js (the push channel's client) and room.js (the page
  controller): one inline module script, with the
  page's timing written in from core/page_timing.py (as the templates get the poll rule's);
- locales/*.json: every visible string, one file per language, put into the room's JSON config.

The page makes no request except the room's routes its config names (the route table's
routes the room's page calls, core/routes.py: the shared state, its own poll near its turn,
in capacity mode its leave), its socket to the room's push channel (the table's PUSH_CHANNEL;
core/push.py: the config's `channel` says where, as whom and to what) and the room's logo,
when one is set; a Content-Security-Policy with the hashes of the inline script and styles,
and the channel's endpoint, says so to the browser.
Every figure of its rule (core/serving.py) reaches it in the room config's `timing`.
docs/page.md documents the hooks a custom template must keep.

Beside the page's files lives the presence script the shop's own pages load (presence.js, and
presence.py: its bytes as served and its integrity hash); it is no part of the page.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from beekeeper.core import push, schedule, serving, shared_state
from beekeeper.core.colours import theme_properties
from beekeeper.core.page_timing import PAGE_CONSTANTS
from beekeeper.core.paths import SITE_DIR
from beekeeper.core.push import PageChannel
from beekeeper.core.routes import (
    ENTER,
    LEAVE,
    MARKETING_LINK,
    POLLING,
    PUSH_CHANNEL,
    STATE,
    TABLE,
    Caller,
    Route,
    called_by,
)
from beekeeper.core.settings import RoomSettings, SettingsError
from beekeeper.room.pacing import MINUTE_SECONDS

# The size the page must stay under, uncompressed (so it holds whatever the transport; a
# browser gets it compressed, about a quarter of it): 28% of API Gateway's mapping template
# limit once base64'd (docs/stack.md), with room for a custom template's own markup and styles.
# It holds the push channel's endpoints and key (about 300 bytes) and its client (channel.js).
MAX_PAGE_BYTES = 64_000

# The room's routes the page calls (core/routes.py), by the key of the page's config its script
# reads each under; the URLs are relative to the page's own (the public address's root, the
# stage prefix kept). Capacity mode's: an admission names ENTER in `via` and the page goes
# there instead of straight to the shop; the "Leave the line" button posts to LEAVE.
PAGE_ROUTES: dict[str, Route] = {
    "pollUrl": POLLING,
    "stateUrl": STATE,
    "joinUrl": MARKETING_LINK,
    "enterUrl": ENTER,
    "leaveUrl": LEAVE,
}
DEFAULT_LANGUAGE = "en"

# Placeholders a template must contain: without them the page has no script, config or policy.
REQUIRED_PLACEHOLDERS = ("SECURITY_POLICY", "ROOM_CONFIG", "PAGE_SCRIPT")
OPTIONAL_PLACEHOLDERS = ("PAGE_STYLE", "DISPLAY_NAME", "LOGO", "NOSCRIPT", "JOIN_URL")
# Elements the script writes into, found by data-bk="<name>"; others (docs/page.md) are optional.
REQUIRED_HOOKS = (
    "status",
    "position",
    "waiting",
    "notice",
    "notice-title",
    "notice-text",
    "notice-link",
)
SCRIPT_FILES = ("page.js", "channel.js", "room.js")

_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
_LOCAL_IMPORT = re.compile(r"^import\s*\{[^}]*\}\s*from\s*\"\./[\w.-]+\";\s*$", re.MULTILINE)
_EXPORT = re.compile(r"^export\s+", re.MULTILINE)
_INLINE_STYLE = re.compile(r"<style>(.*?)</style>", re.DOTALL)


class PageTemplateError(SettingsError):
    """The room's custom template can not make a working page; says which hook is missing."""

    def __init__(self, path: str, problem: str, *, missing_hook: str = "") -> None:
        self.missing_hook = missing_hook
        super().__init__("custom_template", path, problem)


def render_page(
    settings: RoomSettings,
    *,
    minute_seconds: float = MINUTE_SECONDS,
    channel: PageChannel | None = None,
) -> str:
    """The room's page: one HTML document with its styles, script, strings and settings inlined.
    `minute_seconds`: the admission lattice's minute (local mode may shorten it); `channel`: the
    room's push channel (None: the page follows the shared state alone)."""
    template = _read_template(settings.custom_template)
    locales = load_locales()
    script = bundle_script()
    style = f":root{{{theme_properties(settings.accent_colour)}}}\n" + _compact_css(
        _read("page.css")
    )
    values = {
        "DISPLAY_NAME": html.escape(settings.display_name),
        "LOGO": _logo_element(settings.logo_url),
        "NOSCRIPT": "".join(
            f'<p lang="{lang}">{html.escape(str(strings["noscript"]))}</p>'
            for lang, strings in locales.items()
        ),
        "PAGE_STYLE": f"<style>{style}</style>",
        "ROOM_CONFIG": (
            '<script type="application/json" id="beekeeper-room">'
            + room_config_json(settings, locales, minute_seconds=minute_seconds, channel=channel)
            + "</script>"
        ),
        "PAGE_SCRIPT": f'<script type="module">{script}</script>',
        "JOIN_URL": html.escape(MARKETING_LINK.relative),
        "SECURITY_POLICY": "",  # filled last: it hashes what the others put in
    }
    page = _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)
    endpoints = {PUSH_CHANNEL.name: channel.connect_source} if channel is not None else {}
    connect = connect_sources(endpoints)
    page = with_policy(page, security_policy(page, script, settings.logo_url, connect))
    return within_size(page, settings.custom_template or "index.html")


def with_policy(page: str, policy: str) -> str:
    """The page with its Content-Security-Policy in the place its template marks for it."""
    return page.replace(
        "<!--beekeeper-security-policy-->",
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(policy)}">',
        1,
    )


def within_size(page: str, name: str) -> str:
    """The page, if it stays under MAX_PAGE_BYTES; else PageTemplateError naming `name`."""
    size = len(page.encode("utf-8"))
    if size > MAX_PAGE_BYTES:
        raise PageTemplateError(
            name, f"the page would be {size:,} bytes; keep it under {MAX_PAGE_BYTES:,} bytes"
        )
    return page


def page_timing(minute_seconds: float = MINUTE_SECONDS) -> dict[str, float | int | str]:
    """The figures of the page's rule, from their owners (core/serving.py, core/schedule.py)."""
    return {
        "minuteSeconds": minute_seconds,
        "spanMarginFraction": serving.SPAN_MARGIN_FRACTION,
        "slotToleranceSeconds": serving.SLOT_TOLERANCE_SECONDS,
        "slotMomentsAtMost": serving.SLOT_MOMENTS_AT_MOST,
        "fastMomentSeconds": serving.FAST_MOMENT_SECONDS,
        "documentEverySeconds": serving.DOCUMENT_EVERY_SECONDS,
        "stateMaxAgeSeconds": shared_state.STATE_MAX_AGE_SECONDS,
        "hiddenDocumentMaxSeconds": serving.HIDDEN_DOCUMENT_MAX_SECONDS,
        "closedDocumentEverySeconds": serving.CLOSED_DOCUMENT_EVERY_SECONDS,
        "outOfReachSeconds": serving.OUT_OF_REACH_SECONDS,
        "displayDelaySeconds": serving.DISPLAY_DELAY_SECONDS,
        "ownPollEverySeconds": serving.OWN_POLL_EVERY_SECONDS,
        "extrapolateAtMostSeconds": serving.EXTRAPOLATE_AT_MOST_SECONDS,
        "marginPlaces": serving.MARGIN_PLACES,
        "minMarginSeconds": serving.MIN_MARGIN_SECONDS,
        "maxMarginSeconds": serving.MAX_MARGIN_SECONDS,
        "turnFragment": serving.TURN_FRAGMENT,
        "prequeueFragment": serving.PREQUEUE_FRAGMENT,
        "startJitterSeconds": schedule.START_JITTER_SECONDS,
        "drawingPollSeconds": schedule.PREQUEUE_DRAWING_POLL_SECONDS,
        **push.page_timing(),
    }


def room_config_json(
    settings: RoomSettings,
    locales: dict[str, dict[str, object]],
    *,
    minute_seconds: float = MINUTE_SECONDS,
    channel: PageChannel | None = None,
) -> str:
    """The room's config for the script, safe inside a <script> element.

    Every `<`, `>` and `&` is written as a JSON \\u escape, so no setting can close the element
    (`</script>`) or open a comment that changes how the parser reads the rest of the page.
    """
    config: dict[str, object] = {
        "displayName": settings.display_name,
        **{key: found.relative for key, found in PAGE_ROUTES.items()},
        "defaultLanguage": DEFAULT_LANGUAGE,
        "timing": page_timing(minute_seconds),
        "strings": locales,
    }
    if channel is not None:
        config["channel"] = channel.config()
    return script_json(config)


def script_json(value: object) -> str:
    """`value` as JSON safe inside a <script> element: every <, > and & as a JSON escape."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def load_locales(folder: Path = SITE_DIR / "locales") -> dict[str, dict[str, object]]:
    """Every language's strings, English first (the fallback), then by language tag."""
    found = {path.stem: path for path in folder.glob("*.json")}
    order = sorted(found, key=lambda lang: (lang != DEFAULT_LANGUAGE, lang))
    return {lang: json.loads(found[lang].read_text(encoding="utf-8")) for lang in order}


def bundle_script(
    files: tuple[str, ...] = SCRIPT_FILES,
    folder: Path = SITE_DIR,
    constants: Mapping[str, int | float] = PAGE_CONSTANTS,
) -> str:
    """page.js and room.js (or `files` of `folder`) as one module: their local import line,
    `export` keywords and comments dropped (the sources keep them; the page carries only the
    code), and the page's timing (`constants`, core/page_timing.py's) written in."""
    parts = []
    for name in files:
        source = _LOCAL_IMPORT.sub("", (folder / name).read_text(encoding="utf-8"))
        parts.append(_EXPORT.sub("", source))
    return _without_comments(with_constants("\n".join(parts), constants))


def with_constants(script: str, constants: Mapping[str, int | float]) -> str:
    """`script` with each `const NAME = ...;` of `constants` given the value there."""
    for name, value in constants.items():
        declaration = re.compile(rf"^const {name} = [^;\n]+;$", re.MULTILINE)
        script, found = declaration.subn(f"const {name} = {json.dumps(value)};", script)
        if found != 1:
            raise ValueError(f"the page's script declares {name} {found} times, not once")
    return script


def _without_comments(source: str) -> str:
    """The source without its whole-line comments (`// ...` lines, `/* ... */` blocks that start
    a line), blank lines and indentation; a comment after code on the same line stays (it may
    sit in a string). The sources are written so that no string spans lines (a test holds
    it)."""
    kept = []
    in_block = False
    for line in source.splitlines():
        stripped = line.strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped
            continue
        if not stripped or stripped.startswith("//"):
            continue
        kept.append(stripped)
    return "\n".join(kept)


def connect_sources(endpoints: Mapping[str, str], table: tuple[Route, ...] = TABLE) -> str:
    """The policy's connect-src: the room's own address (every route the page calls is one of
    its paths), and each endpoint outside it the page connects to (core/routes.py) at the
    address the room gives it in `endpoints`, by the record's name (one the room does not give
    is one the page does not connect to)."""
    outside = {
        found.name
        for found in called_by(Caller.ROOM_PAGE, table)
        if found.external is not None and found.external.directive == "connect-src"
    }
    unknown = sorted(set(endpoints) - outside)
    if unknown:
        raise ValueError(f"the page connects to no endpoint named {unknown[0]} (core/routes.py)")
    return " ".join(["'self'", *(endpoints[name] for name in sorted(outside & set(endpoints)))])


def security_policy(page: str, script: str, logo_url: str, connect: str = "'self'") -> str:
    """Nothing may load but the page's own inline script and styles, the logo, and the room's
    routes (and any endpoint outside the room the page connects to: `connect`)."""
    styles = " ".join(f"'{_sha256(match)}'" for match in _INLINE_STYLE.findall(page))
    style_source = styles or "'none'"
    return (
        "default-src 'none'; "
        f"script-src '{_sha256(script)}'; "
        f"style-src {style_source}; "
        f"img-src {image_source(logo_url)}; "
        f"connect-src {connect}; "
        "base-uri 'none'; form-action 'none'"
    )


def image_source(logo_url: str) -> str:
    """The policy's img-src: the logo's origin, or nothing at all."""
    if not logo_url:
        return "'none'"
    parts = urlsplit(logo_url)
    return f"{parts.scheme}://{parts.netloc}"


_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_SPACE = re.compile(r"\s*([{};:,])\s*")


def _compact_css(source: str) -> str:
    """The styles without their comments, indentation, blank lines and the spaces around
    their punctuation (the source keeps them; no value in page.css spans lines, holds a
    comment's marks or a space that matters beside `{};:,`)."""
    lines = (line.strip() for line in _CSS_COMMENT.sub("", source).splitlines())
    return _CSS_SPACE.sub(r"\1", "\n".join(line for line in lines if line)).replace(";}", "}")


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _logo_element(logo_url: str) -> str:
    if not logo_url:
        return ""
    # Decorative: the display name next to it says what it would.
    return f'<img src="{html.escape(logo_url)}" alt="" referrerpolicy="no-referrer">'


def _read(name: str) -> str:
    return (SITE_DIR / name).read_text(encoding="utf-8")


def _read_template(custom_template: str) -> str:
    if not custom_template:
        text = _read("index.html")
        label = "index.html"
    else:
        path = Path(custom_template).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as error:
            raise PageTemplateError(
                custom_template, "the file does not exist; give the path of an HTML file"
            ) from error
        except (OSError, UnicodeDecodeError) as error:
            raise PageTemplateError(
                custom_template, f"the file can not be read as UTF-8 text ({error})"
            ) from error
        label = custom_template
    check_template(text, label)
    # The policy meta element must come before anything it governs; it is filled in last.
    return text.replace("{{SECURITY_POLICY}}", "<!--beekeeper-security-policy-->", 1)


def check_template(text: str, label: str) -> None:
    """A clear error naming the first hook the template lacks, or an unknown placeholder."""
    known = set(REQUIRED_PLACEHOLDERS) | set(OPTIONAL_PLACEHOLDERS)
    for name in _PLACEHOLDER.findall(text):
        if name not in known:
            raise PageTemplateError(
                label,
                f"{{{{{name}}}}} is not a page placeholder; the placeholders are "
                + ", ".join(f"{{{{{p}}}}}" for p in sorted(known)),
            )
    for name in REQUIRED_PLACEHOLDERS:
        if f"{{{{{name}}}}}" not in text:
            raise PageTemplateError(
                label, f"add the placeholder {{{{{name}}}}} (see docs/page.md)", missing_hook=name
            )
    for hook in REQUIRED_HOOKS:
        if not re.search(rf"""data-bk\s*=\s*["']{re.escape(hook)}["']""", text):
            raise PageTemplateError(
                label,
                f'add an element with the data hook data-bk="{hook}" (see docs/page.md)',
                missing_hook=f'data-bk="{hook}"',
            )
