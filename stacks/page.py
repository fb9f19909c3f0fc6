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

Some of what the page says exists only once CloudFormation has made it: the push channel's
endpoints and the page's API key (core/push.py `PageChannel`). The page is rendered with a
stand-in for each (`deploy_value`), and the template is split around them: the page's text
base64-encoded between, the values themselves in place, so CloudFormation writes them in at
deploy (the template becomes an Fn::Join of the text and the values) and API Gateway outputs
them as they are. A value placed so must hold nothing Velocity reads (no `$`, `#`, quotes or
backslashes): DNS names and AppSync's `da2-` keys hold none.
Pure functions only (no CDK).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping

from beekeeper.core.push import PageChannel
from beekeeper.core.settings import RoomSettings

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


def deploy_value(name: str) -> str:
    """The page's stand-in for a value CloudFormation writes in at deploy: plain letters and
    hyphens, unchanged by HTML and JSON escaping, found nowhere else in a page."""
    return f"beekeeper-deploy-value-{name}"


# The page's push channel's stand-ins: the Event API's hosts and the page's key
# (stacks/channel.py gives their values).
REALTIME_HOST = deploy_value("realtime-host")
HTTP_HOST = deploy_value("http-host")
API_KEY = deploy_value("api-key")


def deploy_page_channel(settings: RoomSettings) -> PageChannel:
    """The page's push channel as the stack renders it, with the stand-ins."""
    return PageChannel.of(
        realtime_host=REALTIME_HOST, http_host=HTTP_HOST, key=API_KEY, room=settings.name
    )


def page_response_template(
    page: str, overridden_headers: dict[str, str], deploy_values: Mapping[str, str] | None = None
) -> str:
    """A response mapping template that answers with `page` and sets `overridden_headers`
    through $context.responseOverride. One line: no stray newline precedes the page.
    `deploy_values`: each stand-in the page holds (`deploy_value`) and the value that replaces
    it (a CloudFormation token in the stack)."""
    overrides = "".join(
        f'#set($context.responseOverride.header.{name} = "{_vtl_string(value)}")'
        for name, value in overridden_headers.items()
    )
    values = dict(deploy_values or {})
    parts = re.split(f"({'|'.join(map(re.escape, values))})", page) if values else [page]
    body = "".join(
        values[part] if index % 2 else _decoded(part) for index, part in enumerate(parts) if part
    )
    template = f"{overrides}{body}"
    size = len(template.encode("utf-8"))
    if size > MAPPING_TEMPLATE_LIMIT_BYTES:
        raise PageTooLargeError(
            f"the waiting room page is {len(page.encode('utf-8')):,} bytes; base64-encoded it "
            f"needs {size:,} of the {MAPPING_TEMPLATE_LIMIT_BYTES:,} bytes API Gateway allows "
            "in one mapping template: keep the page under about 220 KB"
        )
    return template


def _decoded(text: str) -> str:
    """`text` as the template outputs it: base64-encoded, so none of it is read as Velocity."""
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f'$util.base64Decode("{encoded}")'


def _vtl_string(value: str) -> str:
    if any(ch in value for ch in '"$#\\\n'):
        raise ValueError(f"header value can not be placed in a VTL string: {value!r}")
    return value
