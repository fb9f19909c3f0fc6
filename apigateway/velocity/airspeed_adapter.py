"""airspeed's parser, read into our own syntax (syntax.py): the one module that imports airspeed.

airspeed (the airspeed-ext distribution) has no public syntax tree: its parse tree is made of
classes it keeps for its own evaluation. Everything this package reads from that tree is read
here, and tests/unit/velocity/test_airspeed_adapter.py holds each piece (the element classes,
their attributes and `my_text()`) to what this module expects, so a release that changes them
fails a test instead of rendering differently. One piece is private (`_parenthesized`: the
expression inside parentheses, which airspeed keeps only as the owner of its bound
`calculate`); that is why pyproject.toml pins airspeed-ext to the tested range (>=0.6.9,<0.7).

Whatever the syntax has no node for (#macro, #parse, a map literal, `$x[0]`, two operators in
one expression, a literal `$` in text, ...) is refused here, when the template is parsed,
whether or not the branch would run.
"""

from __future__ import annotations

import re
from typing import Any

import airspeed
from airspeed import operators as parsed

from beekeeper.apigateway.velocity import syntax
from beekeeper.apigateway.velocity.java import UnsupportedVtl, VtlRenderError


def parse(template: str) -> syntax.Block:
    """The template as our syntax; raises UnsupportedVtl for a syntax error or a construct
    outside the subset."""
    try:
        compiled = airspeed.Template(template)
        compiled.ensure_compiled()
    except VtlRenderError:
        raise
    except Exception as error:  # airspeed's syntax errors, and its parser's own slips
        raise UnsupportedVtl(f"template syntax: {error}") from error
    return _block(compiled.root_element.block)


def source_text(element: Any) -> str:
    """The template text an element was parsed from."""
    return str(element.my_text())


def _refuse(element: Any, why: str = "is outside the supported subset") -> UnsupportedVtl:
    return UnsupportedVtl(f"{type(element).__name__} {source_text(element)[:40]!r} {why}")


# -- statements -------------------------------------------------------------------------------


def _block(block: Any) -> syntax.Block:
    statements: list[syntax.Statement] = []
    for child in block.children:
        kind = type(child)
        if kind is parsed.Comment:
            continue
        if kind is parsed.Text:
            statements.append(_text(child))
        elif kind is parsed.FormalReference:
            source = source_text(child)
            statements.append(
                syntax.Reference(_reference(child), quiet=source.startswith("$!"), source=source)
            )
        elif kind is parsed.IfDirective:
            statements.append(_if(child))
        elif kind is parsed.SetDirective:
            statements.append(_set(child))
        elif kind is parsed.ForeachDirective:
            statements.append(
                syntax.Foreach(
                    child.loop_var_name, _value(child.value), _after_directive(_block(child.block))
                )
            )
        else:  # #macro, #parse, #include, #stop, #define, a fallthrough '#', ...
            raise _refuse(child)
    return tuple(statements)


# Spaces or tabs and one line break right after `#foreach(...)` or `#else`.
_DIRECTIVE_LINE_END = re.compile(r"[ \t]*\r?\n")


def _after_directive(body: syntax.Block) -> syntax.Block:
    """The body of a #foreach or an #else without the end of the directive's line: Java's
    Velocity 1.7 takes spaces, tabs and one line break after `#foreach(...)` and `#else` as
    part of the directive, as it does after `#if(...)` and `#end`, where airspeed agrees;
    airspeed puts them at the start of the body, so a loop would render them every time.
    (Checked against Velocity 1.7's own engine: docs/vtl.md, "The VTL subset".)"""
    first = body[0] if body else None
    if not isinstance(first, syntax.Text):
        return body
    line_end = _DIRECTIVE_LINE_END.match(first.text)
    if line_end is None:
        return body
    rest = first.text[line_end.end() :]
    return ((syntax.Text(rest),) if rest else ()) + body[1:]


def _text(element: Any) -> syntax.Text:
    if any(ch in source_text(element) for ch in "$#\\"):
        raise UnsupportedVtl(
            f"text {source_text(element)[:40]!r}: a literal '$', '#' or '\\' outside a "
            "single-quoted string is read differently by Velocity and airspeed"
        )
    return syntax.Text(element.text)


def _if(directive: Any) -> syntax.If:
    branches = [(_condition(directive.condition), _block(directive.block))]
    branches += [(_condition(e.condition), _block(e.block)) for e in directive.elseifs]
    # Without #else, airspeed keeps a Null object that has no block.
    else_block = getattr(directive.else_block, "block", None)
    otherwise = _after_directive(_block(else_block)) if else_block is not None else None
    return syntax.If(tuple(branches), otherwise)


def _condition(condition: Any) -> syntax.Expr:
    return _expression(_parenthesized(condition.expression))


# The dotted #sets API Gateway gives a meaning the room uses: response overrides.
_OVERRIDE_PREFIX = ("context", "responseOverride")
_HEADER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def _override_parameter(root: str, path: tuple[str, ...]) -> str | None:
    """ "status" or "header.<Name>" for $context.responseOverride.status / .header.<Name>."""
    if (root, *path[:1]) != _OVERRIDE_PREFIX:
        return None
    rest = path[1:]
    if rest == ("status",):
        return "status"
    if len(rest) == 2 and rest[0] == "header" and _HEADER_NAME.fullmatch(rest[1]):
        return f"header.{rest[1]}"
    return None


def _set(directive: Any) -> syntax.Set | syntax.ResponseOverride:
    assignment = directive.assignment
    if assignment.terms:
        path = tuple(
            str(term.term.value)
            for term in assignment.terms
            if type(term.term) is parsed.DotDictAccessTerm
        )
        parameter = (
            _override_parameter(assignment.root_term, path)
            if len(path) == len(assignment.terms)
            else None
        )
        if parameter is not None:
            return syntax.ResponseOverride(parameter, _expression(assignment.value))
        raise UnsupportedVtl(f"#set(${assignment.root_term}.… = …) is not in the supported subset")
    return syntax.Set(assignment.root_term, _expression(assignment.value))


# -- expressions ------------------------------------------------------------------------------


def _parenthesized(element: Any) -> Any:
    """The Expression inside `( ... )`: airspeed keeps it only as its bound `calculate`.

    The one private reading of airspeed's tree (a bound method's owner): held by
    tests/unit/velocity/test_airspeed_adapter.py on the pinned range of airspeed-ext."""
    return element.calculate.__self__


def _expression(expression: Any) -> syntax.Expr:
    terms = expression.expression
    if len(terms) == 1:
        return _value(terms[0])
    if len(terms) != 3:
        raise UnsupportedVtl(
            "one operator per expression: parenthesize, airspeed's precedence is not Java's"
        )
    symbol = source_text(terms[1]).strip()
    return syntax.Binary(symbol, _value(terms[0]), _value(terms[2]))


def _value(value: Any) -> syntax.Expr:
    node = value.expression if isinstance(value, parsed.Value) else value
    if isinstance(node, parsed.FormalReference):
        return _reference(node)
    if isinstance(node, parsed.InterpolatedStringLiteral):
        return syntax.Interpolated(_block(node.block))
    if isinstance(node, parsed.NullLiteral | parsed.IntegerLiteral | parsed.BooleanLiteral):
        return syntax.Literal(node.value)
    if type(node) is parsed.StringLiteral:
        return syntax.Literal(node.value)
    if isinstance(node, parsed.ParenthesizedExpression):
        return _expression(_parenthesized(node))
    if isinstance(node, parsed.UnaryOperatorValue):
        return syntax.Not(_value(node.value))
    if isinstance(node, parsed.ArrayLiteral):
        if isinstance(node.values, parsed.Range):
            raise _refuse(node.values)  # [1..3]
        return syntax.ListLiteral(tuple(_value(item) for item in _listed(node.values)))
    raise _refuse(node)


def _listed(values: Any) -> list[Any]:
    """The values of a ValueList; an empty list or parameter list has no `values`."""
    if isinstance(values, parsed.ValueList):
        return list(values.values)
    if hasattr(values, "values"):
        raise _refuse(values)
    return []


def _reference(reference: Any) -> syntax.Variable:
    if reference.alternate is not None:
        raise UnsupportedVtl("${x|default} is Velocity 2 syntax, not API Gateway's")
    if reference.expression is None:
        raise UnsupportedVtl(f"{source_text(reference)!r} is not a reference")
    return _variable(reference.expression)


def _variable(expression: Any) -> syntax.Variable:
    """`$a.b.c(...)`: a variable, then a chain of properties and calls."""
    first = expression.part
    if first.index is not None:
        raise _refuse(first, "uses index notation [...], which is not in the supported subset")
    if first.parameters is not None:
        raise _refuse(first, "calls a variable")
    steps: list[syntax.Step] = []
    sub = expression.subexpression
    while sub is not None:
        if not isinstance(sub.expression, parsed.VariableExpression):
            raise _refuse(sub, "uses index notation [...], which is not in the supported subset")
        part = sub.expression.part
        if part.index is not None:
            raise _refuse(part, "uses index notation [...], which is not in the supported subset")
        arguments = (
            None
            if part.parameters is None
            else tuple(_value(argument) for argument in _listed(part.parameters.values))
        )
        steps.append(syntax.Step(part.name, arguments))
        sub = sub.expression.subexpression
    return syntax.Variable(first.name, tuple(steps))
