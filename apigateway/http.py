"""A request as API Gateway received it and the answer it gives: what local mode's gateway,
the simulator and the tests hand the emulation (beekeeper.apigateway.runtime)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class HttpRequest:
    """What API Gateway received. Query values are already URL-decoded; `headers` holds one
    value per name as `$input.params()` gives it (docs/vtl.md: several Cookie headers)."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: str = ""

    def header(self, name: str) -> str | None:
        """A header's value, its name matched case-insensitively (None when absent)."""
        wanted = name.lower()
        for key, value in self.headers.items():
            if key.lower() == wanted:
                return value
        return None


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Mapping[str, str]
    body: str
