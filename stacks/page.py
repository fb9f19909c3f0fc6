"""The waiting room page as an API Gateway MOCK response, and the headers it is served with.

The page (beekeeper.waiting_room_site.render_page) is one self-contained HTML file with the
room's settings filled in at synth time. It is served by GET /room on the API's own stage:
same origin as /beekeeper and /polling, so the visitor's cookie is first-party, and no S3
bucket is involved (no public bucket, no S3 request-rate ceiling, nothing to empty on
destroy). The page travels base64-encoded inside the response mapping template, so no `$` or
`#` in its HTML, CSS or JavaScript can be read as Velocity.

The page carries its own Content-Security-Policy (a meta element with the hashes of its inline
script and styles, docs/page.md). A meta policy can not forbid framing, so the response adds a
header policy with `frame-ancestors 'none'`; a browser enforces both policies together.

The headers themselves are `beekeeper.core.headers.PAGE_HEADERS`, which local mode serves too.
Pure functions only (no CDK).
"""

from __future__ import annotations

import base64

# API Gateway's limit on one mapping template (a hard quota, not adjustable).
MAPPING_TEMPLATE_LIMIT_BYTES = 300 * 1024


class PageTooLargeError(ValueError):
    """The rendered page does not fit one API Gateway mapping template."""


def split_headers(headers: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(static, overridden): API Gateway's static header values are written '...', so a value
    holding a single quote (the CSP) is set by the mapping template instead."""
    static = {name: value for name, value in headers.items() if "'" not in value}
    overridden = {name: value for name, value in headers.items() if "'" in value}
    return static, overridden


def page_response_template(page: str, overridden_headers: dict[str, str]) -> str:
    """A response mapping template that answers with `page` and sets `overridden_headers`
    through $context.responseOverride. One line: no stray newline precedes the page."""
    overrides = "".join(
        f'#set($context.responseOverride.header.{name} = "{_vtl_string(value)}")'
        for name, value in overridden_headers.items()
    )
    encoded = base64.b64encode(page.encode("utf-8")).decode("ascii")
    template = f'{overrides}$util.base64Decode("{encoded}")'
    size = len(template.encode("utf-8"))
    if size > MAPPING_TEMPLATE_LIMIT_BYTES:
        raise PageTooLargeError(
            f"the waiting room page is {len(page.encode('utf-8')):,} bytes; base64-encoded it "
            f"needs {size:,} of the {MAPPING_TEMPLATE_LIMIT_BYTES:,} bytes API Gateway allows "
            "in one mapping template: keep the page under about 220 KB"
        )
    return template


def _vtl_string(value: str) -> str:
    if any(ch in value for ch in '"$#\\\n'):
        raise ValueError(f"header value can not be placed in a VTL string: {value!r}")
    return value
