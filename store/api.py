"""What both services share: one entry point per call, counted and open to disturbance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beekeeper.store.disturbance import Disturbance
from beekeeper.store.errors import ServiceError

Action = Callable[[dict[str, Any]], dict[str, Any]]


class Api:
    def __init__(self, disturbance: Disturbance, unknown_code: str) -> None:
        self._disturbance = disturbance
        self._unknown_code = unknown_code
        self._actions: dict[str, Action] = {}
        self.calls = 0

    @property
    def actions(self) -> frozenset[str]:
        return frozenset(self._actions)

    def handle(self, action: str, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one call: the service's JSON in, its JSON out, or a ServiceError."""
        self.calls += 1
        self._disturbance.before(action)
        answer = self._actions.get(action)
        if answer is None:
            raise ServiceError(self._unknown_code, f"{action} is not supported here")
        if not isinstance(request, dict):
            raise ServiceError("SerializationException", "the request must be a JSON object")
        return self._run(answer, request)

    def _run(self, answer: Action, request: dict[str, Any]) -> dict[str, Any]:
        return answer(request)
