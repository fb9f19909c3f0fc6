"""The code examples of the documentation, as the tests run them.

A fenced block right after `<!-- snippet: NAME -->` belongs to example NAME; an example is its
blocks joined in the order they appear, so the page can explain it step by step and the tests
still run every line of it. tests/js/shop_integration.test.mjs reads the same markers.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
SHOP_INTEGRATION = DOCS / "shop-integration.md"
_BLOCK = re.compile(r"<!-- snippet: (\S+) -->\n```[a-z]*\n(.*?)\n```", re.DOTALL)


def snippet(name: str, page: Path = SHOP_INTEGRATION) -> str:
    blocks = [
        code for found, code in _BLOCK.findall(page.read_text(encoding="utf-8")) if found == name
    ]
    if not blocks:
        raise LookupError(f"{page.name} has no example named {name!r}")
    return "\n\n\n".join(blocks) + "\n"
