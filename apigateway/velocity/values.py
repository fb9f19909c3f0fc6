"""Java's semantics for the values a template computes, for the code compiler.py generates.

Every function returns what Velocity 1.7 gives, or raises `UnsupportedVtl` where the answer
depends on the Velocity version or steps outside docs/vtl.md, or `VelocityRuntimeError` where
Java itself would throw. The generated code tests the common exact types inline and calls these
for everything else, so each rule and each message is written here once.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, NoReturn

from beekeeper.apigateway.velocity.java import UnsupportedVtl, VelocityRuntimeError

# API Gateway allows a #foreach 1,000 iterations (a documented quota). Whether it then stops
# or fails is not documented, so a loop that would go further fails the render: templates
# bound their loops (split with a limit, a size check) so client input can not reach it.
MAX_FOREACH_ITERATIONS = 1000

# Where a template's response overrides go (in the globals; no template name can clash).
OVERRIDES = "!responseOverride"


class _Poisoned:
    """The value of a variable last #set to null.

    Velocity 1.7 keeps the old value, 2.x sets null: a template that reads such a variable
    depends on the version, so reading it fails the render.
    """


POISON = _Poisoned()


def poisoned(name: str) -> NoReturn:
    raise UnsupportedVtl(f"${name} was #set to null: its value depends on the version")


def truth(value: Any, where: str) -> bool:
    if value is None:
        return False
    if value is True or value is False:
        return value
    raise UnsupportedVtl(
        f"{where} needs a boolean, got {value!r}: other values are true or false depending on "
        "the Velocity version; compare explicitly"
    )


def _numbers(op: str, left: Any, right: Any) -> tuple[int, int]:
    if type(left) is not int or type(right) is not int:
        raise UnsupportedVtl(f"'{op}' needs two integers, got {left!r} and {right!r}")
    return left, right


def _divide(left: Any, right: Any) -> int:
    a, b = _numbers("/", left, right)
    if b == 0:
        raise UnsupportedVtl("division by zero renders null in Velocity: guard the divisor")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _remainder(left: Any, right: Any) -> int:
    a, b = _numbers("%", left, right)
    if b == 0:
        raise UnsupportedVtl("modulo by zero renders null in Velocity: guard the divisor")
    return a - b * _divide(a, b)


def equals(left: Any, right: Any) -> bool:
    if left is None or right is None:
        raise UnsupportedVtl("comparing with null differs between Velocity versions")
    if type(left) is not type(right) or type(left) not in (str, int, bool):
        raise UnsupportedVtl(f"'==' between {left!r} and {right!r}: compare like with like")
    return bool(left == right)


def _arithmetic(op: str, compute: Callable[[int, int], Any]) -> Callable[[Any, Any], Any]:
    def apply(left: Any, right: Any) -> Any:
        return compute(*_numbers(op, left, right))

    return apply


def _both(op: str) -> Callable[[Any, Any], bool]:
    # Both sides are evaluated first (no short circuit), then checked left to right.
    return lambda a, b: truth(a, op) and truth(b, op)


def _either(op: str) -> Callable[[Any, Any], bool]:
    return lambda a, b: truth(a, op) or truth(b, op)


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": equals,
    "eq": equals,
    "!=": lambda a, b: not equals(a, b),
    "ne": lambda a, b: not equals(a, b),
    ">": _arithmetic(">", operator.gt),
    "gt": _arithmetic(">", operator.gt),
    ">=": _arithmetic(">=", operator.ge),
    "ge": _arithmetic(">=", operator.ge),
    "<": _arithmetic("<", operator.lt),
    "lt": _arithmetic("<", operator.lt),
    "<=": _arithmetic("<=", operator.le),
    "le": _arithmetic("<=", operator.le),
    "+": _arithmetic("+", operator.add),
    "-": _arithmetic("-", operator.sub),
    "*": _arithmetic("*", operator.mul),
    "/": _divide,
    "%": _remainder,
    "&&": _both("&&"),
    "and": _both("and"),
    "||": _either("||"),
    "or": _either("or"),
}


def render_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is True or value is False:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    raise UnsupportedVtl(
        f"rendering {type(value).__name__} {value!r}: Java's toString differs; render strings, "
        "integers and booleans only"
    )


def null_reference(source: str) -> NoReturn:
    raise UnsupportedVtl(
        f"{source} is null: API Gateway would render it as text or as nothing; "
        "use $!{...} when null is expected"
    )


def foreach_items(items: Any) -> list[Any]:
    """What a #foreach iterates: nothing for null, a list as it is; anything else fails."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise UnsupportedVtl(f"#foreach over {type(items).__name__}: iterate a list")
    count = len(items)
    if count > MAX_FOREACH_ITERATIONS:
        raise UnsupportedVtl(
            f"#foreach over {count} items: API Gateway allows {MAX_FOREACH_ITERATIONS}"
        )
    return items


def overrides_of(provided: dict[str, Any], parameter: str) -> dict[str, Any]:
    """The render's response overrides, before `parameter` is overridden (once only)."""
    overrides: dict[str, Any] = provided[OVERRIDES]
    if parameter in overrides:
        # API Gateway: an override is final, a second one of the same parameter is a 5XX.
        raise VelocityRuntimeError(f"the response {parameter} was overridden twice")
    return overrides


def override(overrides: dict[str, Any], parameter: str, value: Any) -> None:
    if parameter == "status":
        if isinstance(value, bool) or not isinstance(value, int):
            raise VelocityRuntimeError(f"a response status must be a number, not {value!r}")
        overrides[parameter] = value
    else:
        overrides[parameter] = render_value(value)
