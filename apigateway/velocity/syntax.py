"""The Velocity subset the mapping templates are written in (docs/vtl.md), as plain values.

A parser (today airspeed, through `airspeed_adapter`) turns a template into these nodes and
refuses whatever has no node here; the compiler (compiler.py) gives them Java's semantics.
Nothing outside this package sees a parser's own classes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Literal:
    """'text', an integer, true/false or null."""

    value: str | int | bool | None


@dataclass(frozen=True)
class Step:
    """`.name` (a property: arguments is None) or `.name(arguments)` (a method call)."""

    name: str
    arguments: tuple[Expr, ...] | None = None


@dataclass(frozen=True)
class Variable:
    """`$name` followed by properties and calls: `$input.params().header.get('x')`."""

    name: str
    steps: tuple[Step, ...] = ()


@dataclass(frozen=True)
class ListLiteral:
    items: tuple[Expr, ...]


@dataclass(frozen=True)
class Interpolated:
    """A double-quoted string: its body is rendered like a template."""

    body: Block


@dataclass(frozen=True)
class Not:
    operand: Expr


@dataclass(frozen=True)
class Binary:
    """One operator between two operands (the subset allows one per expression)."""

    operator: str
    left: Expr
    right: Expr


Expr = Literal | Variable | ListLiteral | Interpolated | Not | Binary


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Reference:
    """`$x...` or `${x...}` in the text; `quiet` for `$!x`, which renders null as nothing."""

    value: Variable
    quiet: bool
    source: str


@dataclass(frozen=True)
class If:
    """#if / #elseif ... / #else / #end: the first branch whose condition holds runs."""

    branches: tuple[tuple[Expr, Block], ...]
    otherwise: Block | None = None


@dataclass(frozen=True)
class Set:
    name: str
    value: Expr


@dataclass(frozen=True)
class ResponseOverride:
    """#set($context.responseOverride.status = ...) or #set($context.responseOverride.header.
    <Name> = ...): the method response's status code or one of its headers, set by an
    integration response template (API Gateway applies them once the template is done)."""

    parameter: str  # "status", or "header.<Name>"
    value: Expr


@dataclass(frozen=True)
class Foreach:
    name: str
    items: Expr
    body: Block


Statement = Text | Reference | If | Set | ResponseOverride | Foreach
Block = tuple[Statement, ...]
