"""The work page: where the marketing link sends a new visitor when a place costs work.

`render_work_page(settings)` returns one self-contained HTML document (served by GET /work from
the API's own stage, like the waiting room page): the room's name, accent colour and logo, the
waiting room page's styles, the strings of work/locales/*.json, and one inline module script
(work/solver.js and work/work.js). It reads its challenge from the URL's fragment, solves it
in Web Workers made from its own script's text, and goes back to the marketing link with the
solution. Its Content-Security-Policy allows only its own inline script and styles, the logo
and workers from `blob:` URLs (which only a script already on the page can make); it makes no
request at all. docs/page.md describes it.
"""

from __future__ import annotations

import html

from beekeeper.core.colours import theme_properties
from beekeeper.core.join_work import MAX_WORKERS, WORK_PARAMETER
from beekeeper.core.paths import SITE_DIR
from beekeeper.core.routes import MARKETING_LINK
from beekeeper.core.settings import RoomSettings
from beekeeper.waiting_room_site import (
    _PLACEHOLDER,
    DEFAULT_LANGUAGE,
    _logo_element,
    _sha256,
    bundle_script,
    image_source,
    load_locales,
    script_json,
    with_policy,
    within_size,
)

WORK_DIR = SITE_DIR / "work"
WORK_SCRIPT_FILES = ("solver.js", "work.js")


def render_work_page(settings: RoomSettings) -> str:
    locales = work_locales()
    script = bundle_work_script()
    style = f":root{{{theme_properties(settings.accent_colour)}}}\n" + (
        SITE_DIR / "page.css"
    ).read_text(encoding="utf-8")
    config = {
        "joinUrl": MARKETING_LINK.relative,
        "parameter": WORK_PARAMETER,
        "maxWorkers": MAX_WORKERS,
        "defaultLanguage": DEFAULT_LANGUAGE,
        "strings": locales,
    }
    config_text = script_json(config)  # nothing in it can close the element
    values = {
        "DISPLAY_NAME": html.escape(settings.display_name),
        "LOGO": _logo_element(settings.logo_url),
        "NOSCRIPT": "".join(
            f'<p lang="{lang}">{html.escape(str(strings["noscript"]))}</p>'
            for lang, strings in locales.items()
        ),
        "PAGE_STYLE": f"<style>{style}</style>",
        "WORK_CONFIG": (
            f'<script type="application/json" id="beekeeper-work">{config_text}</script>'
        ),
        "PAGE_SCRIPT": f'<script type="module">{script}</script>',
        "JOIN_URL": html.escape(MARKETING_LINK.relative),
        "SECURITY_POLICY": "<!--beekeeper-security-policy-->",
    }
    template = (WORK_DIR / "index.html").read_text(encoding="utf-8")
    page = _PLACEHOLDER.sub(lambda match: values[match.group(1)], template)
    page = with_policy(page, work_security_policy(style, script, settings.logo_url))
    return within_size(page, "work page")


def work_locales() -> dict[str, dict[str, object]]:
    """Every language's strings, the default language first."""
    return load_locales(WORK_DIR / "locales")


def bundle_work_script() -> str:
    """solver.js and work.js as one module: their local import line and `export` dropped."""
    return bundle_script(WORK_SCRIPT_FILES, WORK_DIR, constants={})


def work_security_policy(style: str, script: str, logo_url: str) -> str:
    """Its own inline script and styles, the logo, workers from blob: URLs; nothing else."""
    return (
        "default-src 'none'; "
        f"script-src '{_sha256(script)}'; "
        f"style-src '{_sha256(style)}'; "
        f"img-src {image_source(logo_url)}; "
        "worker-src blob:; "
        "connect-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )
