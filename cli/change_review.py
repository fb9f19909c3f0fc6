"""What a redeploy would replace, read from `cdk diff`'s output.

The CDK CLI prints one line per changed resource, `[~] AWS::DynamoDB::Table Storage/Table
StorageTableB43FDCE7 replace`, ending in the change's impact when CloudFormation would replace
the resource (`replace`) or might (`may be replaced`); the property that causes it follows as
`(requires replacement)` / `(may cause replacement)`. Colours are ANSI codes, removed first.

Replacing the table or a queue loses the line: every waiting visitor's place and every
admission. The room's own settings never cause that (a test compares the templates of two room
files); a change of Beekeeper itself might, and the operator is asked first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_RESOURCE_LINE = re.compile(
    r"^\[[^\]]\]\s+(?P<type>[A-Za-z0-9]+::[A-Za-z0-9]+::[A-Za-z0-9]+)\s+(?P<name>.+?)\s+"
    r"(?P<impact>replace|may be replaced)(?:\s.*)?$"
)
# Replacing these loses the line: the queue of waiting visitors and the table of admissions.
LINE_HOLDING_TYPES = frozenset({"AWS::DynamoDB::Table", "AWS::SQS::Queue"})


@dataclass(frozen=True)
class Replacement:
    resource_type: str
    name: str  # the construct path and logical id as the CDK CLI prints them
    certain: bool  # "replace" rather than "may be replaced"

    @property
    def loses_the_line(self) -> bool:
        return self.resource_type in LINE_HOLDING_TYPES

    def __str__(self) -> str:
        how = "replaced" if self.certain else "possibly replaced"
        return f"{self.resource_type} {self.name} ({how})"


def replacements(diff_lines: Iterable[str]) -> list[Replacement]:
    """Every resource `cdk diff` says would (or may) be replaced."""
    found = []
    for raw in diff_lines:
        match = _RESOURCE_LINE.match(_ANSI.sub("", raw).strip())
        if match:
            found.append(
                Replacement(match["type"], match["name"], certain=match["impact"] == "replace")
            )
    return found


def question(stack_name: str, replaced: list[Replacement]) -> str:
    """The one question asked before a deploy that replaces something."""
    listed = "; ".join(str(r) for r in replaced)
    lost = (
        " Replacing the table or a queue loses every waiting visitor's place and every admission."
        if any(r.loses_the_line for r in replaced)
        else ""
    )
    return f"Deploying {stack_name} would replace {listed}.{lost} Deploy anyway?"
