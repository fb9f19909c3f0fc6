"""API Gateway mapping templates for /polling and /client.

The templates (*.vtl beside this file) hold synth-time placeholders written `{{NAME}}`; the
stack and local mode fill them with the same function, so both run the very same template.
`{{` is not Velocity syntax, so a placeholder can not be mistaken for a template reference.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from beekeeper.core.paths import VTL_DIR

_PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


def template_names() -> list[str]:
    return sorted(path.name for path in VTL_DIR.glob("*.vtl"))


def load_template(name: str, values: Mapping[str, str]) -> str:
    """The template `name` with every `{{PLACEHOLDER}}` replaced; a missing value is an error."""
    text = (VTL_DIR / name).read_text(encoding="utf-8")

    def substitute(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"{name} needs a value for {{{{{key}}}}}")
        return values[key]

    return _PLACEHOLDER.sub(substitute, text)


# The contract between the templates, the stack and local mode: for each route, its request
# template, its response template and the DynamoDB action the request template targets.
ROUTES: dict[str, tuple[str, str, str]] = {
    "polling": ("polling-request.vtl", "polling-response.vtl", "BatchGetItem"),
    "client": ("client-request.vtl", "client-response.vtl", "GetItem"),
}


def template_values(*, table_name: str, origin: str) -> dict[str, str]:
    """Synth-time values for the placeholders; the stack passes its table's name token.

    ORIGIN_JSON is the origin URL as a JSON string literal (quotes included), so a template
    can place it in its JSON output without any escaping of its own.
    """
    import json

    return {"TABLE_NAME": table_name, "ORIGIN_JSON": json.dumps(origin)}
