"""DynamoDB update and condition expressions, evaluated on items in the client's wire format.

Enough of the expression language for every request the room makes: SET (values,
`if_not_exists`, `a + b`), ADD on numbers and string sets, DELETE from string sets, REMOVE;
conditions with comparisons (=, <>, <, <=, >, >=, IN), `attribute_exists`,
`attribute_not_exists`, AND, OR, NOT and parentheses. Names may be
`#placeholders`; values are `:placeholders`. Anything else raises NotImplementedError, so a
request this store can not answer as DynamoDB would fails loudly instead of being guessed at.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

Item = dict[str, dict[str, Any]]

_TOKEN = re.compile(
    r"\s*(?:(?P<op><>|<=|>=|=|<|>|\(|\)|,|\+|-)|(?P<word>[A-Za-z_#:][A-Za-z0-9_#:.]*))"
)


class ConditionFailed(Exception):
    """The condition expression evaluated to false."""


def _tokens(expression: str) -> list[str]:
    out: list[str] = []
    position = 0
    expression = expression.strip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match or match.end() == position:
            raise NotImplementedError(f"can not read {expression!r} at {position}")
        out.append(match.group("op") or match.group("word"))
        position = match.end()
    return out


def _name(token: str, names: Mapping[str, str]) -> str:
    if token.startswith("#"):
        return names[token]
    if token.startswith(":") or "." in token or "[" in token:
        raise NotImplementedError(f"attribute path {token!r}")
    return token


def _number(value: Mapping[str, Any]) -> Decimal:
    return Decimal(value["N"])


def _compare(left: Mapping[str, Any] | None, op: str, right: Mapping[str, Any] | None) -> bool:
    if left is None or right is None:
        # A missing attribute makes every comparison false, "<>" included.
        return False
    if left.keys() != right.keys():
        return op == "<>"
    (kind,) = left.keys()
    a, b = left[kind], right[kind]
    if kind == "N":
        a, b = Decimal(a), Decimal(b)
    elif op not in ("=", "<>") and kind not in ("S", "B"):
        raise NotImplementedError(f"ordering of {kind} values")
    return {
        "=": a == b,
        "<>": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }[op]


class _Condition:
    def __init__(self, tokens: list[str], names: Mapping[str, str], values: Mapping[str, Any]):
        self.tokens = tokens
        self.position = 0
        self.names = names
        self.values = values

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token.upper() != expected):
            raise NotImplementedError(f"expected {expected!r}, found {token!r}")
        self.position += 1
        return token

    def evaluate(self, item: Item | None) -> bool:
        result = self._or(item)
        if self._peek() is not None:
            raise NotImplementedError(f"unexpected {self._peek()!r}")
        return result

    def _or(self, item: Item | None) -> bool:
        result = self._and(item)
        while (self._peek() or "").upper() == "OR":
            self._take()
            right = self._and(item)
            result = result or right
        return result

    def _and(self, item: Item | None) -> bool:
        result = self._not(item)
        while (self._peek() or "").upper() == "AND":
            self._take()
            right = self._not(item)
            result = result and right
        return result

    def _not(self, item: Item | None) -> bool:
        if (self._peek() or "").upper() == "NOT":
            self._take()
            return not self._not(item)
        return self._term(item)

    def _term(self, item: Item | None) -> bool:
        token = self._take()
        if token == "(":
            result = self._or(item)
            self._take(")")
            return result
        if token in ("attribute_exists", "attribute_not_exists"):
            self._take("(")
            name = _name(self._take(), self.names)
            self._take(")")
            present = item is not None and name in item
            return present if token == "attribute_exists" else not present
        left = self._operand(token, item)
        op = self._take()
        if op.upper() == "IN":
            self._take("(")
            candidates = [self._operand(self._take(), item)]
            while self._peek() == ",":
                self._take()
                candidates.append(self._operand(self._take(), item))
            self._take(")")
            return any(_compare(left, "=", candidate) for candidate in candidates)
        if op not in ("=", "<>", "<", "<=", ">", ">="):
            raise NotImplementedError(f"operator {op!r}")
        right = self._operand(self._take(), item)
        return _compare(left, op, right)

    def _operand(self, token: str, item: Item | None) -> dict[str, Any] | None:
        if token.startswith(":"):
            return dict(self.values[token])
        name = _name(token, self.names)
        return None if item is None or name not in item else item[name]


def check_condition(
    expression: str,
    item: Item | None,
    names: Mapping[str, str] | None = None,
    values: Mapping[str, Any] | None = None,
) -> None:
    """Raise ConditionFailed unless `expression` holds for `item` (None: no such item)."""
    if not _Condition(_cached_tokens(expression), names or {}, values or {}).evaluate(item):
        raise ConditionFailed(expression)


@functools.cache
def _cached_tokens_tuple(expression: str) -> tuple[str, ...]:
    return tuple(_tokens(expression))


def _cached_tokens(expression: str) -> list[str]:
    return list(_cached_tokens_tuple(expression))


_CLAUSE = re.compile(r"\b(SET|ADD|REMOVE|DELETE)\b", re.IGNORECASE)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


@functools.cache
def _clauses(expression: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    pieces = _CLAUSE.split(expression)
    if pieces[0].strip():
        raise NotImplementedError(f"update expression {expression!r}")
    out = []
    for keyword, body in zip(pieces[1::2], pieces[2::2], strict=True):
        out.append((keyword.upper(), tuple(_split_top_level(body))))
    return tuple(out)


def _value_of(
    text: str, item: Item, names: Mapping[str, str], values: Mapping[str, Any]
) -> dict[str, Any]:
    text = text.strip()
    for op in ("+", "-"):
        left, found, right = _split_arithmetic(text, op)
        if found:
            a = _value_of(left, item, names, values)
            b = _value_of(right, item, names, values)
            total = _number(a) + _number(b) if op == "+" else _number(a) - _number(b)
            return {"N": str(total)}
    if text.startswith("if_not_exists(") and text.endswith(")"):
        name, fallback = _split_top_level(text[len("if_not_exists(") : -1])
        name = _name(name, names)
        return dict(item[name]) if name in item else _value_of(fallback, item, names, values)
    if text.startswith(":"):
        return dict(values[text])
    name = _name(text, names)
    if name not in item:
        raise ConditionFailed(f"the attribute {name} an update expression reads does not exist")
    return dict(item[name])


def _split_arithmetic(text: str, op: str) -> tuple[str, bool, str]:
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == op and depth == 0 and i > 0:
            return text[:i], True, text[i + 1 :]
    return text, False, ""


def apply_update(
    expression: str,
    item: Item,
    names: Mapping[str, str] | None = None,
    values: Mapping[str, Any] | None = None,
) -> Item:
    """A copy of `item` with the update applied."""
    names, values = names or {}, values or {}
    new = {k: dict(v) for k, v in item.items()}
    for keyword, parts in _clauses(expression):
        for part in parts:
            if keyword == "SET":
                target, _, source = part.partition("=")
                new[_name(target.strip(), names)] = _value_of(source, item, names, values)
            elif keyword == "ADD":
                target, operand = part.split()
                name = _name(target, names)
                addend = values[operand]
                if "SS" in addend:
                    members = set(new.get(name, {}).get("SS", [])) | set(addend["SS"])
                    new[name] = {"SS": sorted(members)}
                    continue
                if "N" not in addend:
                    raise NotImplementedError("ADD of this kind of value")
                current = _number(new[name]) if name in new else Decimal(0)
                new[name] = {"N": str(current + _number(addend))}
            elif keyword == "DELETE":
                target, operand = part.split()
                name = _name(target, names)
                members = set(new.get(name, {}).get("SS", [])) - set(values[operand]["SS"])
                if members:
                    new[name] = {"SS": sorted(members)}
                else:
                    new.pop(name, None)  # DynamoDB removes a set emptied by DELETE
            elif keyword == "REMOVE":
                new.pop(_name(part, names), None)
            else:
                raise NotImplementedError(f"{keyword} clause")
    return new
