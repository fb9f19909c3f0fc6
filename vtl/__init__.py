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
