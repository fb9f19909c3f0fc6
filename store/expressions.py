"""DynamoDB's expressions bound to a request's placeholders and evaluated on items.

Parsing and the checks that need nothing else are store/expression_syntax.py's. Here, with the
request's ExpressionAttributeNames and ExpressionAttributeValues, come the refusals DynamoDB
makes before it reads the item (an undefined placeholder; the same path on both sides of a
comparison, `#a = a`; a value of a type the operator does not take: `a < :bool`,
`begins_with(a, :number)`, `ADD a :string`, `:string + :v`, BETWEEN bounds of two types or in
the wrong order; an update of a key attribute; two actions on one path), then the evaluation,
as the Developer Guide's "Condition and filter expressions, operators, and functions in
DynamoDB" describes it (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/
Expressions.OperatorsAndFunctions.html, where `a <> b` holds when a does not equal b) and
DynamoDB Local answers (tests/functional/store): a comparison with a missing attribute is
false, except `<>`, which is true (`a <> b` is `NOT a = b`); values of two types are never
equal and never ordered; only strings, numbers and binaries are ordered (strings by UTF-8
bytes, binaries by unsigned bytes, numbers by value); `size()` of a string counts its
characters, of a binary its bytes, of a set, list or map its members.

Besides an answer (`holds`: whether a condition holds, false being DynamoDB's
ConditionalCheckFailedException to the caller; `apply_update`: the new item), two outcomes:
`ExpressionInvalid` (DynamoDB's ValidationException) and NotImplementedError for a construct
the room never sends (a nested document path, `list_append`, `attribute_type`), which fails
loudly instead of being guessed at.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Mapping
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from beekeeper.store.expression_syntax import (
    CONDITION,
    PROJECTION,
    UPDATE,
    Action,
    Arithmetic,
    Between,
    Call,
    Comparison,
    ExpressionInvalid,
    Group,
    In,
    Logical,
    Node,
    Not,
    Parsed,
    Path,
    Value,
    operands,
    parse_condition,
    parse_projection,
    parse_update,
    placeholders,
)
from beekeeper.store.expression_syntax import unwrapped as _unwrapped

__all__ = ["CONDITION", "ExpressionInvalid", "Item", "placeholders"]

Item = dict[str, dict[str, Any]]
Names = Mapping[str, str]
Values = Mapping[str, dict[str, Any]]

SET_TYPES = ("SS", "NS", "BS")
_ORDERED = ("S", "N", "B")
_SIZED = ("S", "B", "L", "M", *SET_TYPES)
# Wide enough that no number DynamoDB holds (38 significant digits) is ever rounded here.
_EXACT = Context(prec=80)
_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,37}")
# What Java's BigDecimal, and so DynamoDB, reads as a number: no spaces, no underscores, no
# hexadecimal, no Infinity or NaN (DynamoDB Local refuses each; tests/functional/store).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_TYPE_NAMES = {
    "S": "STRING",
    "N": "NUMBER",
    "B": "BINARY",
    "BOOL": "BOOLEAN",
    "NULL": "NULL",
    "L": "LIST",
    "M": "MAP",
    "SS": "STRING_SET",
    "NS": "NUMBER_SET",
    "BS": "BINARY_SET",
}
_INCORRECT_TYPE = "An operand in the update expression has an incorrect data type"


def normal_number(text: object) -> str:
    """A number as DynamoDB stores and returns it: no exponent, no superfluous zeros."""
    if not isinstance(text, str):
        raise ExpressionInvalid("A number value must be a string")
    return _normal_number(text)


# The room writes the same times and counts again and again; a refusal is not kept (raised
# again each time). Equal texts share one string, which the stored items keep.
@functools.lru_cache(maxsize=1 << 16)
def _normal_number(text: str) -> str:
    if _PLAIN_INTEGER.fullmatch(text):
        return text  # already as DynamoDB writes it: the common case, kept cheap
    if not _NUMBER.fullmatch(text):
        raise ExpressionInvalid("A value provided cannot be converted into a number")
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ExpressionInvalid("A value provided cannot be converted into a number") from None
    if value.is_zero():
        return "0"
    value = value.normalize(_EXACT)
    if len(value.as_tuple().digits) > 38:
        raise ExpressionInvalid("Attempting to store more than 38 significant digits in a Number")
    if abs(value) >= Decimal("1e126"):
        raise ExpressionInvalid(
            "Number overflow. Attempting to store a number with magnitude "
            "larger than supported range"
        )
    if abs(value) < Decimal("1e-130"):
        raise ExpressionInvalid(
            "Number underflow. Attempting to store a number with magnitude "
            "smaller than supported range"
        )
    return format(value, "f")


# -- binding: what DynamoDB refuses before it reads the item --------------------------------


def bound_condition(expression: str, kind: str, names: Names, values: Values) -> Node:
    """The parsed condition, checked against the request's placeholders."""
    parsed = parse_condition(expression, kind)
    _check_placeholders(kind, parsed, names, values)
    for node in parsed.distinct:
        _check_distinct(kind, node, names)
    for node in parsed.typed:
        _check_operand_types(kind, node, values)
    assert parsed.tree is not None
    return parsed.tree


def bound_update(
    expression: str, names: Names, values: Values, key_names: tuple[str, ...]
) -> tuple[Action, ...]:
    """The parsed update, checked against the placeholders and the table's key."""
    parsed = parse_update(expression)
    _check_placeholders(UPDATE, parsed, names, values)
    for action in parsed.actions:
        if action.section in ("ADD", "DELETE"):
            assert isinstance(action.value, Value)
            kind = next(iter(values[action.value.placeholder]))
            allowed = ("N", *SET_TYPES) if action.section == "ADD" else SET_TYPES
            if kind not in allowed:
                raise ExpressionInvalid(
                    f"Invalid {UPDATE}: Incorrect operand type for operator or function; "
                    f"operator: {action.section}, operand type: {_TYPE_NAMES[kind]}, "
                    f"typeSet: ALLOWED_FOR_{action.section}_OPERAND"
                )
    for node in parsed.typed:
        if isinstance(node, Arithmetic):
            for side in (node.left, node.right):
                side = _unwrapped(side)
                if isinstance(side, Value) and next(iter(values[side.placeholder])) != "N":
                    raise ExpressionInvalid(
                        f"Invalid {UPDATE}: Incorrect operand type for operator or function; "
                        f"operator or function: {node.op}, "
                        f"operand type: {next(iter(values[side.placeholder]))}"
                    )
    paths = [_resolved(action.path, names) for action in parsed.actions]
    if len(paths) > 1:
        for i, first in enumerate(paths):
            for second in paths[i + 1 :]:
                shorter = min(len(first), len(second))
                if first[:shorter] == second[:shorter]:
                    raise ExpressionInvalid(
                        f"Invalid {UPDATE}: Two document paths overlap with each other; must "
                        "remove or rewrite one of these paths; "
                        f"path one: [{_shown(first)}], path two: [{_shown(second)}]"
                    )
    for path in paths:
        if path[0] in key_names:
            raise ExpressionInvalid(
                f"One or more parameter values were invalid: Cannot update attribute {path[0]}. "
                "This attribute is part of the key"
            )
    return parsed.actions


def projected_names(expression: str, names: Names) -> list[str]:
    """The attribute names a projection expression keeps."""
    parsed = parse_projection(expression)
    _check_placeholders(PROJECTION, parsed, names, {})
    return [_top_name(path, names) for path in parsed.paths]


def _check_placeholders(kind: str, parsed: Parsed, names: Names, values: Values) -> None:
    for path in parsed.named_paths:
        for part in path.parts:
            if isinstance(part, str) and part.startswith("#") and part not in names:
                raise ExpressionInvalid(
                    f"Invalid {kind}: An expression attribute name used in the document "
                    f"path is not defined; attribute name: {part}"
                )
    for placeholder in parsed.values:
        if placeholder not in values:
            raise ExpressionInvalid(
                f"Invalid {kind}: An expression attribute value used in expression is not "
                f"defined; attribute value: {placeholder}"
            )


def _check_distinct(kind: str, node: Node, names: Names) -> None:
    """DynamoDB refuses a path compared with itself (`a = a`, `contains(a, a)`)."""
    found = operands(node)
    assert found is not None
    operator, first, rest = found
    first = _unwrapped(first)
    assert isinstance(first, Path)
    path = _resolved(first, names)
    for other in rest:
        other = _unwrapped(other)
        if isinstance(other, Path) and _resolved(other, names) == path:
            raise ExpressionInvalid(
                f"Invalid {kind}: The first operand must be distinct from the remaining "
                f"operands for this operator or function; operator: {operator}, "
                f"first operand: [{_shown(path)}]"
            )


def _check_operand_types(kind: str, node: Node, values: Values) -> None:
    def refuse(operator: str, value_kind: str) -> ExpressionInvalid:
        return ExpressionInvalid(
            f"Invalid {kind}: Incorrect operand type for operator or function; "
            f"operator or function: {operator}, operand type: {value_kind}"
        )

    def kind_of(operand: Node) -> str | None:
        operand = _unwrapped(operand)
        return next(iter(values[operand.placeholder])) if isinstance(operand, Value) else None

    if isinstance(node, Comparison) and node.op not in ("=", "<>"):
        for side in (node.left, node.right):
            if (found := kind_of(side)) is not None and found not in _ORDERED:
                raise refuse(node.op, found)
    elif isinstance(node, Between):
        for side in (node.subject, node.low, node.high):
            if (found := kind_of(side)) is not None and found not in _ORDERED:
                raise refuse("BETWEEN", found)
        low, high = _unwrapped(node.low), _unwrapped(node.high)
        if isinstance(low, Value) and isinstance(high, Value):
            low_value, high_value = values[low.placeholder], values[high.placeholder]
            bounds = (
                f"lower bound operand: AttributeValue: {_shown_value(low_value)}, "
                f"upper bound operand: AttributeValue: {_shown_value(high_value)}"
            )
            if low_value.keys() != high_value.keys():
                raise ExpressionInvalid(
                    f"Invalid {kind}: The BETWEEN operator requires same data type for lower "
                    f"and upper bounds; {bounds}"
                )
            if _compare(low_value, ">", high_value):
                raise ExpressionInvalid(
                    f"Invalid {kind}: The BETWEEN operator requires upper bound to be greater "
                    f"than or equal to lower bound; {bounds}"
                )
    elif isinstance(node, Call) and node.function == "begins_with":
        for argument in node.arguments:
            if (found := kind_of(argument)) is not None and found not in ("S", "B"):
                raise refuse("begins_with", found)
    elif (
        isinstance(node, Call)
        and node.function == "size"
        and (found := kind_of(node.arguments[0])) is not None
        and found not in _SIZED
    ):
        raise refuse("size", found)


def _resolved(path: Path, names: Names) -> tuple[str | int, ...]:
    if path.plain is not None:
        return (path.plain,)
    if len(path.parts) == 1:
        (part,) = path.parts
        return (names[part] if isinstance(part, str) and part.startswith("#") else part,)
    return tuple(
        names[part] if isinstance(part, str) and part.startswith("#") else part
        for part in path.parts
    )


def _shown(path: tuple[str | int, ...]) -> str:
    return ", ".join(str(part) for part in path)


def _shown_value(value: Mapping[str, Any]) -> str:
    ((kind, content),) = value.items()
    return "{" + f"{kind}:{content}" + "}"


def _top_name(path: Path, names: Names) -> str:
    if path.plain is not None:
        return path.plain
    if len(path.parts) != 1:
        raise NotImplementedError(f"document path {path.text!r}")
    (name,) = _resolved(path, names)
    return str(name)


# -- evaluation ------------------------------------------------------------------------------


def holds(tree: Node, item: Item | None, names: Names, values: Values) -> bool:
    """Whether a bound condition holds for `item` (None: there is no such item)."""
    if isinstance(tree, Group):
        return holds(tree.inner, item, names, values)
    if isinstance(tree, Logical):
        left = holds(tree.left, item, names, values)
        right = holds(tree.right, item, names, values)
        return (left and right) if tree.op == "AND" else (left or right)
    if isinstance(tree, Not):
        return not holds(tree.inner, item, names, values)
    if isinstance(tree, Comparison):
        return _compare(
            _operand(tree.left, item, names, values),
            tree.op,
            _operand(tree.right, item, names, values),
        )
    if isinstance(tree, Between):
        subject = _operand(tree.subject, item, names, values)
        return _compare(subject, ">=", _operand(tree.low, item, names, values)) and _compare(
            subject, "<=", _operand(tree.high, item, names, values)
        )
    if isinstance(tree, In):
        subject = _operand(tree.subject, item, names, values)
        return any(
            _compare(subject, "=", _operand(option, item, names, values)) for option in tree.options
        )
    if isinstance(tree, Call):
        return _function(tree, item, names, values)
    raise ExpressionInvalid("Invalid ConditionExpression: Syntax error; not a condition")


def _function(call: Call, item: Item | None, names: Names, values: Values) -> bool:
    if call.function in ("attribute_exists", "attribute_not_exists"):
        (path,) = call.arguments
        assert isinstance(path, Path)
        present = item is not None and _top_name(path, names) in item
        return present if call.function == "attribute_exists" else not present
    if call.function not in ("begins_with", "contains"):
        raise NotImplementedError(f"the function {call.function}")
    subject = _operand(call.arguments[0], item, names, values)
    operand = _operand(call.arguments[1], item, names, values)
    if subject is None or operand is None:
        return False
    ((kind, content),) = subject.items()
    ((operand_kind, wanted),) = operand.items()
    if call.function == "begins_with":
        if kind != operand_kind or kind not in ("S", "B"):
            return False
        return _scalar(kind, content).startswith(_scalar(kind, wanted))
    if kind in SET_TYPES:
        return operand_kind == kind[0] and _scalar(operand_kind, wanted) in {
            _scalar(operand_kind, member) for member in content
        }
    if kind == "L":
        return any(_equal(dict(operand), member) for member in content)
    return (
        kind == operand_kind
        and kind in ("S", "B")
        and (_scalar(kind, wanted) in _scalar(kind, content))
    )


def _operand(node: Node, item: Item | None, names: Names, values: Values) -> dict[str, Any] | None:
    if isinstance(node, Group):
        return _operand(node.inner, item, names, values)
    if isinstance(node, Value):
        return values[node.placeholder]
    if isinstance(node, Path):
        name = _top_name(node, names)
        return None if item is None else item.get(name)
    if isinstance(node, Call) and node.function == "size":
        return _size(_operand(node.arguments[0], item, names, values))
    raise NotImplementedError(f"the operand {node!r}")


def _size(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if value is None:
        return None
    ((kind, content),) = value.items()
    if kind == "B":
        return {"N": str(len(base64.b64decode(content)))}
    if kind in _SIZED:
        return {"N": str(len(content))}
    return None  # size() of a number or a boolean is not a number: comparisons are false


def _scalar(kind: str, content: Any) -> Any:
    """A scalar as DynamoDB compares it: numbers by value, binaries as bytes."""
    if kind == "N":
        return Decimal(content)
    if kind == "B":
        return base64.b64decode(content)
    return content


def _equal(left: Mapping[str, Any], right: Mapping[str, Any]) -> bool:
    if left.keys() != right.keys():
        return False
    ((kind, a),) = left.items()
    b = right[kind]
    if kind in SET_TYPES:
        element = kind[0]
        return {_scalar(element, m) for m in a} == {_scalar(element, m) for m in b}
    if kind == "L":
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if kind == "M":
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(_scalar(kind, a) == _scalar(kind, b))


def _compare(left: Mapping[str, Any] | None, op: str, right: Mapping[str, Any] | None) -> bool:
    if op == "<>":
        return not _compare(left, "=", right)  # true when either side is missing
    if left is None or right is None or left.keys() != right.keys():
        return False
    if op == "=":
        return _equal(left, right)
    ((kind, a),) = left.items()
    if kind not in _ORDERED:
        return False
    x, y = _scalar(kind, a), _scalar(kind, right[kind])
    return bool({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])


def apply_update(
    actions: tuple[Action, ...], item: Item, names: Names, values: Values
) -> tuple[Item, list[str]]:
    """A copy of `item` with a bound update applied, and the attributes the update named.
    Every value is computed from the item as it was before the update."""
    new = dict(item)
    touched: list[str] = []
    for action in actions:
        name = _top_name(action.path, names)
        if action.section == "SET":
            assert action.value is not None
            new[name] = _update_value(action.value, item, names, values)
        elif action.section == "REMOVE":
            new.pop(name, None)
        else:
            assert isinstance(action.value, Value)
            _add_or_delete(action.section, new, name, values[action.value.placeholder])
        touched.append(name)
    return new, touched


def _update_value(node: Node, item: Item, names: Names, values: Values) -> dict[str, Any]:
    if isinstance(node, Group):
        return _update_value(node.inner, item, names, values)
    if isinstance(node, Value):
        return dict(values[node.placeholder])
    if isinstance(node, Path):
        found = item.get(_top_name(node, names))
        if found is None:
            raise ExpressionInvalid(
                "The provided expression refers to an attribute that does not exist in the item"
            )
        return dict(found)
    if isinstance(node, Arithmetic):
        a = _update_value(node.left, item, names, values)
        b = _update_value(node.right, item, names, values)
        if set(a) != {"N"} or set(b) != {"N"}:
            raise ExpressionInvalid(_INCORRECT_TYPE)
        x, y = Decimal(a["N"]), Decimal(b["N"])
        return {
            "N": normal_number(str(_EXACT.add(x, y) if node.op == "+" else _EXACT.subtract(x, y)))
        }
    if isinstance(node, Call) and node.function == "if_not_exists":
        path, fallback = node.arguments
        assert isinstance(path, Path)
        found = item.get(_top_name(path, names))
        return dict(found) if found is not None else _update_value(fallback, item, names, values)
    raise NotImplementedError(f"the update value {node!r}")


def _add_or_delete(section: str, new: Item, name: str, change: dict[str, Any]) -> None:
    ((kind, members),) = change.items()
    current = new.get(name)
    if current is not None and set(current) != {kind}:
        raise ExpressionInvalid(_INCORRECT_TYPE)
    if section == "ADD" and kind == "N":
        base_text = current["N"] if current is not None else "0"
        if _PLAIN_INTEGER.fullmatch(base_text) and _PLAIN_INTEGER.fullmatch(members):
            # A counter's increment: exact in ints (at most 38 digits each, as in Decimal),
            # and written as the Decimal sum is; checked as any number.
            new[name] = {"N": normal_number(str(int(base_text) + int(members)))}
            return
        base = Decimal(base_text)
        new[name] = {"N": normal_number(str(_EXACT.add(base, Decimal(members))))}
        return
    held = list(current[kind]) if current is not None else []
    if section == "ADD":
        new[name] = {kind: held + [m for m in members if m not in held]}
        return
    if current is None:
        return
    left = [m for m in held if m not in members]
    if left:
        new[name] = {kind: left}
    else:
        del new[name]  # DynamoDB has no empty sets: the attribute goes
