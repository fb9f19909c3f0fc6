"""Velocity templates compiled to Python closures, with Java's semantics or a loud refusal.

A template is parsed into our own syntax (syntax.py, through airspeed_adapter.py); this module
walks it once and turns every node into a closure, so a render is a chain of direct calls.
airspeed's own evaluation is never used: it falls back to Python (a Python `split`,
`#if($undefined)` being true, `null` rendered as text) and, being a tree walker that wraps every
element for error reporting, cost about 1.5 ms per /polling request in local mode.

The rule is that a render either matches what API Gateway produces or raises:

- `UnsupportedVtl`: the template steps outside the subset of docs/vtl.md. Structural steps (a
  #macro, a map literal, `$x[0]`, two operators in one expression, a literal `$` in text, ...)
  are refused when the template is parsed, an unknown operator when it is compiled, whether or
  not the branch would run; steps that depend on values (rendering null, `#if` on a string,
  comparing a string with a number, an unknown method) when they happen.
- `VelocityRuntimeError`: Java itself would throw (java.py); API Gateway answers with 500.

Scopes are Velocity's: one context per template (a #set inside #foreach outlives the loop),
except that the loop variable and `$foreach` live in the iteration.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from beekeeper.apigateway.velocity import java, syntax
from beekeeper.apigateway.velocity.java import UnsupportedVtl, VelocityRuntimeError

# API Gateway allows a #foreach 1,000 iterations (a documented quota). Whether it then stops
# or fails is not documented, so a loop that would go further fails the render: templates
# bound their loops (split with a limit, a size check) so client input can not reach it.
MAX_FOREACH_ITERATIONS = 1000

# frames[0]: the variables API Gateway provides ($input, $util, ...); frames[1]: the template's
# own; one more per #foreach iteration being run.
Frames = list[dict[str, Any]]
Expr = Callable[[Frames], Any]
Stmt = Callable[[Frames, list[str]], None]


class _Poisoned:
    """The value of a variable last #set to null.

    Velocity 1.7 keeps the old value, 2.x sets null: a template that reads such a variable
    depends on the version, so reading it fails the render.
    """


_POISON = _Poisoned()


# -- Java's semantics for values ----------------------------------------------------------------


def _truth(value: Any, where: str) -> bool:
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


def _equals(left: Any, right: Any) -> bool:
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
    return lambda a, b: _truth(a, op) and _truth(b, op)


def _either(op: str) -> Callable[[Any, Any], bool]:
    return lambda a, b: _truth(a, op) or _truth(b, op)


_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": _equals,
    "eq": _equals,
    "!=": lambda a, b: not _equals(a, b),
    "ne": lambda a, b: not _equals(a, b),
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


# -- expressions ----------------------------------------------------------------------------


def _constant(value: Any) -> Expr:
    return lambda _frames: value


def _lookup(name: str) -> Expr:
    def variable(frames: Frames) -> Any:
        index = len(frames) - 1
        while index >= 0:
            frame = frames[index]
            if name in frame:
                value = frame[name]
                if value is _POISON:
                    raise UnsupportedVtl(
                        f"${name} was #set to null: its value depends on the version"
                    )
                return value
            index -= 1
        return None

    return variable


def _member(step: syntax.Step) -> Callable[[Any, Frames], Any]:
    """`.name` or `.name(args)` applied to the value before it (null stays null)."""
    name = step.name
    if step.arguments is None:

        def read(current: Any, _frames: Frames) -> Any:
            return None if current is None else java.get_property(current, name)

        return read
    arguments = [_value(argument) for argument in step.arguments]
    # Velocity: a method of null is null (its arguments are not evaluated).
    if not arguments:
        return lambda current, _frames: (
            None if current is None else java.call_method(current, name, ())
        )
    if len(arguments) == 1:
        (argument,) = arguments
        return lambda current, frames: (
            None if current is None else java.call_method(current, name, (argument(frames),))
        )
    return lambda current, frames: (
        None
        if current is None
        else java.call_method(current, name, tuple(argument(frames) for argument in arguments))
    )


def _variable(variable: syntax.Variable) -> Expr:
    """`$a.b.c(...)`: a variable, then a chain of properties and calls."""
    start = _lookup(variable.name)
    steps = [_member(step) for step in variable.steps]
    if not steps:
        return start
    if len(steps) == 1:
        (only,) = steps
        return lambda frames: only(start(frames), frames)

    def chain(frames: Frames) -> Any:
        current = start(frames)
        for step in steps:
            current = step(current, frames)
        return current

    return chain


def _binary(expression: syntax.Binary) -> Expr:
    apply = _OPERATORS.get(expression.operator)
    if apply is None:
        raise UnsupportedVtl(f"operator {expression.operator!r} is not in the supported subset")
    left, right = _value(expression.left), _value(expression.right)

    def binary(frames: Frames) -> Any:
        right_value = right(frames)  # airspeed's order, kept: the right operand first
        return apply(left(frames), right_value)

    return binary


def _value(node: syntax.Expr) -> Expr:
    if isinstance(node, syntax.Variable):
        return _variable(node)
    if isinstance(node, syntax.Literal):
        return _constant(node.value)
    if isinstance(node, syntax.Binary):
        return _binary(node)
    if isinstance(node, syntax.Not):
        operand = _value(node.operand)
        return lambda frames: not _truth(operand(frames), "!")
    if isinstance(node, syntax.ListLiteral):
        items = [_value(item) for item in node.items]
        return lambda frames: [item(frames) for item in items]
    return _interpolated(node)


def _interpolated(literal: syntax.Interpolated) -> Expr:
    body = _block(literal.body)

    def text(frames: Frames) -> str:
        out: list[str] = []
        body(frames, out)
        return "".join(out)

    return text


# -- statements -----------------------------------------------------------------------------


def _text(node: syntax.Text) -> Stmt:
    text = node.text
    return lambda _frames, out: out.append(text)


def _reference(reference: syntax.Reference) -> Stmt:
    compute = _variable(reference.value)
    quiet = reference.quiet
    source = reference.source

    def write(frames: Frames, out: list[str]) -> None:
        value = compute(frames)
        if value is None:
            if quiet:
                return
            raise UnsupportedVtl(
                f"{source} is null: API Gateway would render it as text or as nothing; "
                "use $!{...} when null is expected"
            )
        out.append(value if type(value) is str else render_value(value))

    return write


def _condition(condition: syntax.Expr) -> Expr:
    test = _value(condition)
    return lambda frames: _truth(test(frames), "#if")


def _if(directive: syntax.If) -> Stmt:
    branches = [(_condition(test), _block(body)) for test, body in directive.branches]
    otherwise = _block(directive.otherwise) if directive.otherwise is not None else None

    def choose(frames: Frames, out: list[str]) -> None:
        for test, body in branches:
            if test(frames):
                body(frames, out)
                return
        if otherwise is not None:
            otherwise(frames, out)

    return choose


def _set(directive: syntax.Set) -> Stmt:
    name = directive.name
    compute = _value(directive.value)

    def assign(frames: Frames, out: list[str]) -> None:
        value = compute(frames)
        stored = _POISON if value is None else value
        # The innermost loop scope that has the name (a loop variable), else the template's.
        index = len(frames) - 1
        while index > 1:
            if name in frames[index]:
                frames[index][name] = stored
                return
            index -= 1
        frames[1][name] = stored

    return assign


# Where a template's response overrides go (in the globals frame; no template name can clash).
OVERRIDES = "!responseOverride"


def _response_override(directive: syntax.ResponseOverride) -> Stmt:
    compute = _value(directive.value)
    parameter = directive.parameter

    def override(frames: Frames, out: list[str]) -> None:
        overrides = frames[0][OVERRIDES]
        if parameter in overrides:
            # API Gateway: an override is final, a second one of the same parameter is a 5XX.
            raise VelocityRuntimeError(f"the response {parameter} was overridden twice")
        value = compute(frames)
        if parameter == "status":
            if isinstance(value, bool) or not isinstance(value, int):
                raise VelocityRuntimeError(f"a response status must be a number, not {value!r}")
            overrides[parameter] = value
        else:
            overrides[parameter] = render_value(value)

    return override


def _foreach(directive: syntax.Foreach) -> Stmt:
    compute = _value(directive.items)
    body = _block(directive.body)
    name = directive.name

    def loop(frames: Frames, out: list[str]) -> None:
        items = compute(frames)
        if items is None:
            return
        if not isinstance(items, list):
            raise UnsupportedVtl(f"#foreach over {type(items).__name__}: iterate a list")
        count = len(items)
        if count > MAX_FOREACH_ITERATIONS:
            raise UnsupportedVtl(
                f"#foreach over {count} items: API Gateway allows {MAX_FOREACH_ITERATIONS}"
            )
        for number, item in enumerate(items, start=1):
            frames.append(
                {
                    "foreach": {"count": number, "index": number - 1, "hasNext": number < count},
                    name: item,
                }
            )
            body(frames, out)
            frames.pop()

    return loop


def _statement(node: syntax.Statement) -> Stmt:
    if isinstance(node, syntax.Text):
        return _text(node)
    if isinstance(node, syntax.Reference):
        return _reference(node)
    if isinstance(node, syntax.If):
        return _if(node)
    if isinstance(node, syntax.Set):
        return _set(node)
    if isinstance(node, syntax.ResponseOverride):
        return _response_override(node)
    return _foreach(node)


def _block(block: syntax.Block) -> Stmt:
    statements = [_statement(node) for node in block]

    def run(frames: Frames, out: list[str]) -> None:
        for statement in statements:
            statement(frames, out)

    return run


def compile_template(block: syntax.Block) -> Stmt:
    """The closure that renders a parsed template: call it with [globals, {}] and a list."""
    return _block(block)


__all__ = [
    "MAX_FOREACH_ITERATIONS",
    "OVERRIDES",
    "Frames",
    "Stmt",
    "compile_template",
    "render_value",
]
