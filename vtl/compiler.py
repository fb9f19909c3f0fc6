"""Velocity templates compiled to Python closures, with Java's semantics or a loud refusal.

airspeed (the airspeed-ext distribution) parses a template into a tree of elements; this module
walks that tree once and turns every element into a closure, so a render is a chain of direct
calls. airspeed's own evaluation is never used: it falls back to Python (a Python `split`,
`#if($undefined)` being true, `null` rendered as text) and, being a tree walker that wraps every
element for error reporting, cost about 1.5 ms per /polling request in local mode.

The rule is that a render either matches what API Gateway produces or raises:

- `UnsupportedVtl`: the template steps outside the subset of docs/vtl.md. Structural steps (a
  #macro, a map literal, `$x[0]`, two operators in one expression, a literal `$` in text, ...)
  are refused when the template is compiled, whether or not the branch would run; steps that
  depend on values (rendering null, `#if` on a string, comparing a string with a number, an
  unknown method) when they happen.
- `VelocityRuntimeError`: Java itself would throw (vtl/java.py); API Gateway answers with 500.

Scopes are Velocity's: one context per template (a #set inside #foreach outlives the loop),
except that the loop variable and `$foreach` live in the iteration.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from airspeed import operators as ast

from beekeeper.vtl import java
from beekeeper.vtl.java import UnsupportedVtl

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


def _text_of(element: Any) -> str:
    return str(ast._Element.my_text(element))


def _refuse(element: Any, why: str = "is outside the supported subset") -> UnsupportedVtl:
    return UnsupportedVtl(f"{type(element).__name__} {_text_of(element)[:40]!r} {why}")


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


def _member(part: ast.NameOrCall) -> Callable[[Any, Frames], Any]:
    """`.name` or `.name(args)` applied to the value before it (null stays null)."""
    if part.index is not None:
        raise _refuse(part, "uses index notation [...], which is not in the supported subset")
    name = part.name
    if part.parameters is None:

        def read(current: Any, _frames: Frames) -> Any:
            return None if current is None else java.get_property(current, name)

        return read
    arguments = [_value(value) for value in getattr(part.parameters.values, "values", [])]
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


def _variable(expression: ast.VariableExpression) -> Expr:
    """`$a.b.c(...)`: a variable, then a chain of properties and calls."""
    first = expression.part
    if first.index is not None:
        raise _refuse(first, "uses index notation [...], which is not in the supported subset")
    if first.parameters is not None:
        raise _refuse(first, "calls a variable")
    start = _lookup(first.name)
    steps = []
    sub = expression.subexpression
    while sub is not None:
        if not isinstance(sub.expression, ast.VariableExpression):
            raise _refuse(sub, "uses index notation [...], which is not in the supported subset")
        steps.append(_member(sub.expression.part))
        sub = sub.expression.subexpression
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


def _reference_value(reference: ast.FormalReference) -> Expr:
    if reference.alternate is not None:
        raise UnsupportedVtl("${x|default} is Velocity 2 syntax, not API Gateway's")
    if reference.expression is None:
        raise UnsupportedVtl(f"{_text_of(reference)!r} is not a reference")
    return _variable(reference.expression)


def _expression(expression: ast.Expression) -> Expr:
    terms = expression.expression
    if len(terms) == 1:
        return _value(terms[0])
    if len(terms) != 3:
        raise UnsupportedVtl(
            "one operator per expression: parenthesize, airspeed's precedence is not Java's"
        )
    left, right = _value(terms[0]), _value(terms[2])
    symbol = _text_of(terms[1]).strip()
    apply = _OPERATORS.get(symbol)
    if apply is None:
        raise UnsupportedVtl(f"operator {symbol!r} is not in the supported subset")

    def binary(frames: Frames) -> Any:
        right_value = right(frames)  # airspeed's order, kept: the right operand first
        return apply(left(frames), right_value)

    return binary


def _value(value: Any) -> Expr:
    node = value.expression if isinstance(value, ast.Value) else value
    if isinstance(node, ast.FormalReference):
        return _reference_value(node)
    if isinstance(node, ast.InterpolatedStringLiteral):
        return _interpolated(node)
    if isinstance(node, ast.NullLiteral | ast.IntegerLiteral | ast.BooleanLiteral):
        return _constant(node.value)
    if type(node) is ast.StringLiteral:
        return _constant(node.value)
    if isinstance(node, ast.ParenthesizedExpression):
        return _expression(node.calculate.__self__)
    if isinstance(node, ast.UnaryOperatorValue):
        operand = _value(node.value)
        return lambda frames: not _truth(operand(frames), "!")
    if isinstance(node, ast.ArrayLiteral):
        if not isinstance(node.values, ast.ValueList | ast._EmptyValues):
            raise _refuse(node.values)
        items = [_value(item) for item in getattr(node.values, "values", [])]
        return lambda frames: [item(frames) for item in items]
    raise _refuse(node)


def _interpolated(literal: ast.InterpolatedStringLiteral) -> Expr:
    body = _block(literal.block)

    def text(frames: Frames) -> str:
        out: list[str] = []
        body(frames, out)
        return "".join(out)

    return text


# -- statements -----------------------------------------------------------------------------


def _text(element: ast.Text) -> Stmt:
    if any(ch in _text_of(element) for ch in "$#\\"):
        raise UnsupportedVtl(
            f"text {_text_of(element)[:40]!r}: a literal '$', '#' or '\\' outside a "
            "single-quoted string is read differently by Velocity and airspeed"
        )
    text = element.text
    return lambda _frames, out: out.append(text)


def _reference(reference: ast.FormalReference) -> Stmt:
    compute = _reference_value(reference)
    quiet = _text_of(reference).startswith("$!")
    source = _text_of(reference)

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


def _condition(condition: ast.Condition) -> Expr:
    test = _expression(condition.expression.calculate.__self__)
    return lambda frames: _truth(test(frames), "#if")


def _if(directive: ast.IfDirective) -> Stmt:
    branches = [(_condition(directive.condition), _block(directive.block))]
    branches += [(_condition(e.condition), _block(e.block)) for e in directive.elseifs]
    else_block = getattr(directive.else_block, "block", None)  # airspeed's Null without #else
    otherwise = _block(else_block) if else_block is not None else None

    def choose(frames: Frames, out: list[str]) -> None:
        for test, body in branches:
            if test(frames):
                body(frames, out)
                return
        if otherwise is not None:
            otherwise(frames, out)

    return choose


def _set(directive: ast.SetDirective) -> Stmt:
    assignment = directive.assignment
    if assignment.terms:
        raise UnsupportedVtl(f"#set(${assignment.root_term}.… = …) is not in the supported subset")
    name = assignment.root_term
    compute = _expression(assignment.value)

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


def _foreach(directive: ast.ForeachDirective) -> Stmt:
    compute = _value(directive.value)
    body = _block(directive.block)
    name = directive.loop_var_name

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


_STATEMENTS: dict[type, Callable[[Any], Stmt]] = {
    ast.Text: _text,
    ast.FormalReference: _reference,
    ast.IfDirective: _if,
    ast.SetDirective: _set,
    ast.ForeachDirective: _foreach,
}


def _block(block: ast.Block) -> Stmt:
    statements = []
    for child in block.children:
        if type(child) is ast.Comment:
            continue
        compile_statement = _STATEMENTS.get(type(child))
        if compile_statement is None:  # #macro, #parse, #include, #stop, fallthrough '#', ...
            raise _refuse(child)
        statements.append(compile_statement(child))

    def run(frames: Frames, out: list[str]) -> None:
        for statement in statements:
            statement(frames, out)

    return run


def compile_template(body: ast.TemplateBody) -> Stmt:
    """The closure that renders a parsed template: call it with [globals, {}] and a list."""
    return _block(body.block)


__all__ = ["MAX_FOREACH_ITERATIONS", "Frames", "Stmt", "compile_template", "render_value"]
