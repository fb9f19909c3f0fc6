"""DynamoDB update and condition expressions, evaluated on items in the wire format.

The expression language as far as the room's requests reach, evaluated as DynamoDB evaluates
it: SET (values, `if_not_exists`, `a + b`, `a - b`), ADD on numbers and sets, DELETE from
sets, REMOVE; conditions with comparisons (=, <>, <, <=, >, >=), BETWEEN, IN,
`attribute_exists`, `attribute_not_exists`, `begins_with`, `contains`, `size`, AND, OR, NOT
and parentheses. Names may be `#placeholders`; values are `:placeholders`.

Three outcomes besides success: `ConditionFailed` (the condition is false: DynamoDB's
ConditionalCheckFailedException), `ExpressionInvalid` (DynamoDB's ValidationException, with a
sentence close to DynamoDB's), and NotImplementedError for a construct this store does not
evaluate, so a request it can not answer as DynamoDB would fails loudly instead of being
guessed at.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any

Item = dict[str, dict[str, Any]]

_TOKEN = re.compile(
    r"\s*(?:(?P<op><>|<=|>=|=|<|>|\(|\)|,|\+|-)|(?P<word>[A-Za-z_#:][A-Za-z0-9_#:.\[\]]*))"
)
_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
SET_TYPES = ("SS", "NS", "BS")
# Wide enough that no number DynamoDB holds (38 significant digits) is ever rounded here.
_EXACT = Context(prec=80)
_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,37}")
_COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


class ConditionFailed(Exception):
    """The condition expression evaluated to false."""


class ExpressionInvalid(Exception):
    """DynamoDB refuses the request (ValidationException); the message says why."""


def placeholders(expression: str) -> set[str]:
    """Every `#name` and `:value` placeholder the expression uses."""
    return set(_PLACEHOLDER.findall(expression))


def normal_number(text: object) -> str:
    """A number as DynamoDB stores and returns it: no exponent, no superfluous zeros."""
    if not isinstance(text, str):
        raise ExpressionInvalid("A number value must be a string")
    if _PLAIN_INTEGER.fullmatch(text):
        return text  # already as DynamoDB writes it: the common case, kept cheap
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ExpressionInvalid("A value provided cannot be converted into a number") from None
    if not value.is_finite():
        raise ExpressionInvalid("A value provided cannot be converted into a number")
    if value.is_zero():
        return "0"
    value = value.normalize(_EXACT)
    digits = value.as_tuple().digits
    if len(digits) > 38:
        raise ExpressionInvalid("Attempting to store more than 38 significant digits in a Number")
    if not Decimal("1e-130") <= abs(value) < Decimal("1e126"):
        raise ExpressionInvalid(
            "Number overflow. Attempting to store a number with magnitude "
            "larger than supported range"
        )
    return format(value, "f")


def _tokens(expression: str) -> list[str]:
    out: list[str] = []
    position = 0
    expression = expression.strip()
    if not expression:
        raise ExpressionInvalid("Invalid expression: The expression can not be empty;")
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if not match or match.end() == position:
            raise ExpressionInvalid(
                f"Invalid expression: Syntax error; token: {expression[position:][:10]!r}"
            )
        out.append(match.group("op") or match.group("word"))
        position = match.end()
    return out


def _name(token: str, names: Mapping[str, str]) -> str:
    if token.startswith("#"):
        if token not in names:
            raise ExpressionInvalid(
                "An expression attribute name used in the document path is not defined; "
                f"attribute name: {token}"
            )
        return names[token]
    if token.startswith(":"):
        raise ExpressionInvalid(f"Invalid expression: Syntax error; token: {token!r}")
    if "." in token or "[" in token:
        raise NotImplementedError(f"attribute path {token!r}")
    return token


def _value(token: str, values: Mapping[str, Any]) -> dict[str, Any]:
    if token not in values:
        raise ExpressionInvalid(
            "An expression attribute value used in expression is not defined; "
            f"attribute value: {token}"
        )
    return dict(values[token])


def _number(value: Mapping[str, Any]) -> Decimal:
    if set(value) != {"N"}:
        raise ExpressionInvalid("An operand in the update expression has an incorrect data type")
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
    elif kind in SET_TYPES:
        a, b = frozenset(a), frozenset(b)
    if op in ("=", "<>"):
        return (a == b) == (op == "=")
    if kind not in ("S", "N", "B"):
        return False  # DynamoDB orders only scalars of one type; anything else is false
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _size(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    ((kind, content),) = value.items()
    if kind in ("S", "B", "L", "M", *SET_TYPES):
        return {"N": str(len(content))}
    return None  # size() of a number or a boolean is not a number: comparisons are false


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
            raise ExpressionInvalid(f"Invalid ConditionExpression: Syntax error; token: {token!r}")
        self.position += 1
        return token

    def evaluate(self, item: Item | None) -> bool:
        result = self._or(item)
        if self._peek() is not None:
            raise ExpressionInvalid(
                f"Invalid ConditionExpression: Syntax error; token: {self._peek()!r}"
            )
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
        if self._peek() == "(":
            self._take()
            result = self._or(item)
            self._take(")")
            return result
        function = self._peek()
        if function in ("attribute_exists", "attribute_not_exists"):
            self._take()
            self._take("(")
            name = _name(self._take(), self.names)
            self._take(")")
            present = item is not None and name in item
            return present if function == "attribute_exists" else not present
        if function in ("begins_with", "contains"):
            self._take()
            self._take("(")
            subject = self._operand(item)
            self._take(",")
            operand = self._operand(item)
            self._take(")")
            return _string_function(function, subject, operand)
        left = self._operand(item)
        op = self._take()
        if op.upper() == "BETWEEN":
            low = self._operand(item)
            self._take("AND")
            high = self._operand(item)
            return _compare(left, ">=", low) and _compare(left, "<=", high)
        if op.upper() == "IN":
            self._take("(")
            found = _compare(left, "=", self._operand(item))
            while self._peek() == ",":
                self._take()
                found = _compare(left, "=", self._operand(item)) or found
            self._take(")")
            return found
        if op not in _COMPARISONS:
            raise ExpressionInvalid(f"Invalid ConditionExpression: Syntax error; token: {op!r}")
        return _compare(left, op, self._operand(item))

    def _operand(self, item: Item | None) -> dict[str, Any] | None:
        token = self._take()
        if token == "size":
            self._take("(")
            inner = self._operand(item)
            self._take(")")
            return _size(inner)
        if token.startswith(":"):
            return _value(token, self.values)
        name = _name(token, self.names)
        return None if item is None or name not in item else item[name]


def _string_function(
    function: str, subject: Mapping[str, Any] | None, operand: Mapping[str, Any] | None
) -> bool:
    if subject is None or operand is None:
        return False
    ((kind, content),) = subject.items()
    ((operand_kind, wanted),) = operand.items()
    if function == "begins_with":
        return kind == operand_kind and kind in ("S", "B") and content.startswith(wanted)
    if kind in SET_TYPES:
        return operand_kind == kind[0] and wanted in content
    if kind == "L":
        return dict(operand) in content
    return kind == operand_kind and kind in ("S", "B") and wanted in content


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
    if pieces[0].strip() or len(pieces) < 3:
        raise ExpressionInvalid(
            f"Invalid UpdateExpression: Syntax error; token: {expression.strip()[:10]!r}"
        )
    out = []
    seen: set[str] = set()
    for keyword, body in zip(pieces[1::2], pieces[2::2], strict=True):
        keyword = keyword.upper()
        if keyword in seen:
            raise ExpressionInvalid(
                f'Invalid UpdateExpression: The "{keyword}" section can only be used once '
                "in an update expression;"
            )
        seen.add(keyword)
        parts = tuple(_split_top_level(body))
        if not parts:
            raise ExpressionInvalid("Invalid UpdateExpression: Syntax error; token: <EOF>")
        out.append((keyword, parts))
    return tuple(out)


def _value_of(
    text: str, item: Item, names: Mapping[str, str], values: Mapping[str, Any]
) -> dict[str, Any]:
    text = text.strip()
    for op in ("+", "-"):
        left, found, right = _split_arithmetic(text, op)
        if found:
            a = _number(_value_of(left, item, names, values))
            b = _number(_value_of(right, item, names, values))
            return {
                "N": normal_number(str(_EXACT.add(a, b) if op == "+" else _EXACT.subtract(a, b)))
            }
    if text.startswith("if_not_exists(") and text.endswith(")"):
        name, fallback = _split_top_level(text[len("if_not_exists(") : -1])
        name = _name(name, names)
        return dict(item[name]) if name in item else _value_of(fallback, item, names, values)
    if text.startswith(":"):
        return _value(text, values)
    name = _name(text, names)
    if name not in item:
        raise ExpressionInvalid(
            "The provided expression refers to an attribute that does not exist in the item"
        )
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


def _set_members(value: Mapping[str, Any]) -> list[Any]:
    return list(next(iter(value.values())))


def apply_update(
    expression: str,
    item: Item,
    names: Mapping[str, str] | None = None,
    values: Mapping[str, Any] | None = None,
    *,
    key_names: tuple[str, ...] = (),
) -> tuple[Item, list[str]]:
    """A copy of `item` with the update applied, and the attributes the update named."""
    names, values = names or {}, values or {}
    new = {k: dict(v) for k, v in item.items()}
    touched: list[str] = []
    for keyword, parts in _clauses(expression):
        for part in parts:
            if keyword == "SET":
                target, equals, source = part.partition("=")
                if not equals:
                    raise ExpressionInvalid(
                        f"Invalid UpdateExpression: Syntax error; token: {part[:10]!r}"
                    )
                name = _name(target.strip(), names)
                new[name] = _value_of(source, item, names, values)
            elif keyword == "REMOVE":
                name = _name(part, names)
                new.pop(name, None)
            else:
                target, _, operand = part.strip().partition(" ")
                name = _name(target, names)
                change = _value(operand.strip(), values)
                _add_or_delete(keyword, new, name, change)
            if name in key_names:
                raise ExpressionInvalid(
                    f"One or more parameter values were invalid: Cannot update attribute {name}. "
                    "This attribute is part of the key"
                )
            if name in touched:
                raise ExpressionInvalid(
                    "Invalid UpdateExpression: Two document paths overlap with each other; "
                    "must remove or rewrite one of these paths"
                )
            touched.append(name)
    return new, touched


def _add_or_delete(keyword: str, new: Item, name: str, change: dict[str, Any]) -> None:
    ((kind, _),) = change.items()
    current = new.get(name)
    if keyword == "ADD":
        if kind == "N":
            base = _number(current) if current is not None else Decimal(0)
            new[name] = {"N": normal_number(str(_EXACT.add(base, _number(change))))}
            return
        if kind not in SET_TYPES:
            raise ExpressionInvalid(
                "Invalid UpdateExpression: Incorrect operand type for operator or function; "
                f"operator: ADD, operand type: {_TYPE_NAMES.get(kind, kind)}"
            )
        if current is not None and set(current) != {kind}:
            raise ExpressionInvalid(
                "An operand in the update expression has an incorrect data type"
            )
        members = _set_members(current) if current is not None else []
        members += [m for m in _set_members(change) if m not in members]
        new[name] = {kind: members}
        return
    if kind not in SET_TYPES:
        raise ExpressionInvalid(
            "Invalid UpdateExpression: Incorrect operand type for operator or function; "
            f"operator: DELETE, operand type: {_TYPE_NAMES.get(kind, kind)}"
        )
    if current is None:
        return
    if set(current) != {kind}:
        raise ExpressionInvalid("An operand in the update expression has an incorrect data type")
    gone = set(_set_members(change))
    left = [m for m in _set_members(current) if m not in gone]
    if left:
        new[name] = {kind: left}
    else:
        del new[name]  # DynamoDB has no empty sets: the attribute goes


_TYPE_NAMES = {
    "S": "STRING",
    "N": "NUMBER",
    "B": "BINARY",
    "BOOL": "BOOLEAN",
    "NULL": "NULL",
    "L": "LIST",
    "M": "MAP",
}
