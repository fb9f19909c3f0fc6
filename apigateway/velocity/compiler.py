"""Velocity templates compiled to Python functions, with Java's semantics or a loud refusal.

A template is parsed into our own syntax (syntax.py, through airspeed_adapter.py); this module
translates it once into the source of one Python function and compiles that, so a render runs
no interpreter of ours: no call per node, no search through scopes, no method table looked up
for a call whose types were seen before. airspeed's own evaluation is never used: it falls back
to Python (a Python `split`, `#if($undefined)` being true, `null` rendered as text).

The rule is that a render either matches what API Gateway produces or raises:

- `UnsupportedVtl`: the template steps outside the subset of docs/vtl.md. Structural steps (a
  #macro, a map literal, `$x[0]`, two operators in one expression, a literal `$` in text, ...)
  are refused when the template is parsed, an unknown operator when it is compiled, whether or
  not the branch would run; steps that depend on values (rendering null, `#if` on a string,
  comparing a string with a number, an unknown method) when they happen.
- `VelocityRuntimeError`: Java itself would throw (java.py); API Gateway answers with 500.

Scopes are Velocity's: one context per template (a #set inside #foreach outlives the loop),
except that the loop variable and `$foreach` live in the iteration. Which scope a name means is
known where it is written, so every variable is a slot of one list: slot 0 holds the variables
API Gateway provides, then one slot per name of the template (starting as the provided value
of that name, else null), and two per #foreach (its variable and `$foreach`).

The generated code tests the common exact types inline (an int compared with an int, a
String method whose overload is known, a map's entry) and calls values.py and java.py for
everything else, which also raise every error: what it computes and raises is theirs. Only
literals (through repr) and slot numbers are written into the source, never a template's names.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from beekeeper.apigateway.velocity import java, syntax, values
from beekeeper.apigateway.velocity.java import UnsupportedVtl
from beekeeper.apigateway.velocity.values import MAX_FOREACH_ITERATIONS, OVERRIDES

# A compiled template: call it with the variables API Gateway provides and a list to write to.
Template = Callable[[dict[str, Any], list[str]], None]
# Writes code at a depth, appending output with the function named by the last argument.
Emit = Callable[[list[str], int, str], None]

# Python refuses more than 20 nested loops and 100 levels of indentation in one function:
# a block deeper than this in its function goes into a function of its own.
MAX_DEPTH = 12

# Operators with Python's meaning once both operands are ints (values.OPERATORS checks that).
_INTEGER_OPERATORS = {
    **{op: op for op in (">", ">=", "<", "<=", "+", "-", "*")},
    **{"gt": ">", "ge": ">=", "lt": "<", "le": "<="},
}
_EQUALITY_OPERATORS = {"==": "==", "eq": "==", "!=": "!=", "ne": "!="}
_COMPARISONS = frozenset((">", ">=", "<", "<=", "gt", "ge", "lt", "le"))
_BOOLEAN_OPERATORS = {"&&": "and", "and": "and", "||": "or", "or": "or"}
_PLAIN = (str, int, bool)  # the types values.equals compares

_RUNTIME: dict[str, Any] = {
    "POISON": values.POISON,
    "PLAIN": _PLAIN,
    "poisoned": values.poisoned,
    "truth": values.truth,
    "render_value": values.render_value,
    "null_reference": values.null_reference,
    "foreach_items": values.foreach_items,
    "overrides_of": values.overrides_of,
    "override": values.override,
    "call_method": java.call_method,
    "get_property": java.get_property,
}


def _may_be_null(node: syntax.Expr) -> bool:
    """Whether an expression can compute null (operators compute booleans and integers)."""
    return isinstance(node, syntax.Variable) or (
        isinstance(node, syntax.Literal) and node.value is None
    )


def _always_boolean(node: syntax.Expr) -> bool:
    """Whether an expression computes true or false whenever it computes anything."""
    if isinstance(node, syntax.Not):
        return True
    return isinstance(node, syntax.Binary) and (
        node.operator in _EQUALITY_OPERATORS
        or node.operator in _BOOLEAN_OPERATORS
        or node.operator in _COMPARISONS
    )


def _nullable_names(block: syntax.Block) -> set[str]:
    """The names some #set may set to null: only their reads check for the poisoned value."""
    names: set[str] = set()

    def expression(node: syntax.Expr) -> None:
        if isinstance(node, syntax.Interpolated):
            statements(node.body)
        for child in _children(node):
            expression(child)

    def statements(body: syntax.Block) -> None:
        for node in body:
            if isinstance(node, syntax.Set) and _may_be_null(node.value):
                names.add(node.name)
            if isinstance(node, syntax.If):
                for test, branch in node.branches:
                    expression(test)
                    statements(branch)
                statements(node.otherwise or ())
            elif isinstance(node, syntax.Foreach):
                expression(node.items)
                statements(node.body)
            elif isinstance(node, syntax.Set | syntax.ResponseOverride | syntax.Reference):
                expression(node.value)

    statements(block)
    return names


def _children(node: syntax.Expr) -> list[syntax.Expr]:
    if isinstance(node, syntax.Variable):
        return [arg for step in node.steps for arg in step.arguments or ()]
    if isinstance(node, syntax.Binary):
        return [node.left, node.right]
    if isinstance(node, syntax.Not):
        return [node.operand]
    if isinstance(node, syntax.ListLiteral):
        return list(node.items)
    return []


def _is_temporary(code: str) -> bool:
    """Whether generated code names a temporary (not a literal: `is` must not test those)."""
    return code.isidentifier() and code not in ("True", "False", "None")


def _literal_type(node: syntax.Expr) -> type | None:
    return type(node.value) if isinstance(node, syntax.Literal) else None


class _Generator:
    """The source of one template's functions, written in the order of the template."""

    def __init__(self, nullable: set[str], provided: Collection[str]) -> None:
        self.nullable = nullable
        self.provided = provided
        self.slot_names: list[str | None] = [None]  # slot 0: the provided variables
        self.template_slots: dict[str, int] = {}
        self.loops: list[dict[str, int]] = []  # the enclosing #foreach scopes, innermost last
        self.read_slots: set[int] = set()
        self.functions: list[list[str]] = []
        self.constants: dict[str, Any] = {}
        self.counter = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: Any) -> str:
        for name, known in self.constants.items():
            if known is value:
                return name
        name = self.fresh("k")
        self.constants[name] = value
        return name

    def slot(self, name: str) -> int:
        """The slot `name` means here: the innermost loop's that has it, else the template's."""
        for scope in reversed(self.loops):
            if name in scope:
                return scope[name]
        if name not in self.template_slots:
            self.template_slots[name] = len(self.slot_names)
            self.slot_names.append(name)
        return self.template_slots[name]

    def loop_slot(self) -> int:
        self.slot_names.append(None)
        return len(self.slot_names) - 1

    def nested(self, code: list[str], depth: int, out: str, emit: Emit, carried: str = "") -> None:
        """`emit` one level deeper, or in a function of its own past MAX_DEPTH; `out` names the
        function output goes to ("" in an expression), `carried` a temporary the block reads
        and may change."""
        start = len(code)
        if depth + 1 <= MAX_DEPTH:
            emit(code, depth + 1, out)
        else:
            name = self.fresh("f")
            body: list[str] = []
            emit(body, 1, out)
            returned = [f"    return {carried}"] if carried else []
            parameters = f"S, {out or '_'}, {carried or '_'}"
            self.functions.append([f"def {name}({parameters}):", *body, "    pass", *returned])
            call = f"{name}(S, {out or 'None'}, {carried or 'None'})"
            code.append("    " * (depth + 1) + (f"{carried} = {call}" if carried else call))
        if len(code) == start:
            code.append("    " * (depth + 1) + "pass")

    # -- expressions: each writes its statements and returns a temporary or a literal ----------

    def expression(self, code: list[str], depth: int, node: syntax.Expr) -> str:
        pad = "    " * depth
        if isinstance(node, syntax.Literal):
            return repr(node.value)
        if isinstance(node, syntax.Variable):
            return self.variable(code, depth, node)
        if isinstance(node, syntax.Binary):
            return self.binary(code, depth, node)
        result = self.fresh("t")
        if isinstance(node, syntax.Not):
            operand = self.expression(code, depth, node.operand)
            code.append(
                f"{pad}{result} = (not {operand}) if type({operand}) is bool "
                f"else (not truth({operand}, '!'))"
            )
        elif isinstance(node, syntax.ListLiteral):
            items = [self.expression(code, depth, item) for item in node.items]
            code.append(f"{pad}{result} = [{', '.join(items)}]")
        else:
            return self.interpolated(code, depth, node)
        return result

    def variable(self, code: list[str], depth: int, node: syntax.Variable) -> str:
        """`$a.b.c(...)`: a variable, then a chain of properties and calls (null stays null)."""
        pad = "    " * depth
        result = self.fresh("t")
        slot = self.slot(node.name)
        self.read_slots.add(slot)
        code.append(f"{pad}{result} = S[{slot}]")
        if node.name in self.nullable:
            code.append(f"{pad}if {result} is POISON: poisoned({node.name!r})")
        for step in node.steps:
            if step.arguments is None:
                self.property(code, depth, result, step.name)
            else:
                code.append(f"{pad}if {result} is not None:")
                self.nested(code, depth, "", self.call_emitter(result, step), carried=result)
        return result

    def call_emitter(self, target: str, step: syntax.Step) -> Emit:
        arguments = step.arguments or ()
        return lambda code, depth, _out: self.call(code, depth, target, step.name, arguments)

    def property(self, code: list[str], depth: int, target: str, name: str) -> None:
        fast = self.fast_paths(java.property_fast_paths(name), target, [repr(name)], None)
        code.append(
            f"{'    ' * depth}if {target} is not None: {target} = "
            f"{fast}get_property({target}, {name!r})"
        )

    def call(
        self,
        code: list[str],
        depth: int,
        target: str,
        name: str,
        arguments: tuple[syntax.Expr, ...],
    ) -> None:
        """The call of a method on a target known not to be null (its arguments evaluated now:
        Velocity evaluates no argument of a method of null)."""
        passed = [self.expression(code, depth, argument) for argument in arguments]
        paths = java.method_fast_paths(name, len(arguments))
        fast = self.fast_paths(paths, target, passed, arguments)
        packed = f"({', '.join(passed)},)" if passed else "()"
        code.append(f"{'    ' * depth}{target} = {fast}call_method({target}, {name!r}, {packed})")

    def fast_paths(
        self,
        paths: list[java.FastPath],
        target: str,
        passed: list[str],
        arguments: tuple[syntax.Expr, ...] | None,
    ) -> str:
        """`function(target, *passed) if <its exact types> else ` for each fast path that may
        apply (an argument written as a literal is checked here, once)."""
        written = ""
        for path in paths:
            tests = [f"type({target}) is {path.target.__name__}"]
            applies = True
            for index, parameter in enumerate(path.parameters):
                literal = _literal_type(arguments[index]) if arguments is not None else None
                if parameter is None or literal is parameter:
                    continue
                if literal is not None:
                    applies = False  # a literal of another type: never this overload
                tests.append(f"type({passed[index]}) is {parameter.__name__}")
            if applies:
                function = self.constant(path.function)
                written += (
                    f"{function}({', '.join([target, *passed])}) if {' and '.join(tests)} else "
                )
        return written

    def binary(self, code: list[str], depth: int, node: syntax.Binary) -> str:
        apply = values.OPERATORS.get(node.operator)
        if apply is None:
            raise UnsupportedVtl(f"operator {node.operator!r} is not in the supported subset")
        left_code: list[str] = []
        right_code: list[str] = []
        left = self.expression(left_code, depth, node.left)
        right = self.expression(right_code, depth, node.right)
        code += right_code + left_code  # airspeed's order, kept: the right operand first
        result = self.fresh("t")
        fallback = f"{self.constant(apply)}({left}, {right})"
        fast = self.fast_binary(node, left, right)
        written = fallback if fast is None else f"{fast[0]} if {fast[1]} else {fallback}"
        if fast is not None and not fast[1]:
            written = fast[0]
        code.append(f"{'    ' * depth}{result} = {written}")
        return result

    def fast_binary(self, node: syntax.Binary, left: str, right: str) -> tuple[str, str] | None:
        """(what Python computes, the test under which it is Java's answer), if any."""
        op = node.operator
        sides = [(left, _literal_type(node.left)), (right, _literal_type(node.right))]
        if op in _INTEGER_OPERATORS or op in _BOOLEAN_OPERATORS:
            wanted = int if op in _INTEGER_OPERATORS else bool
            if any(literal not in (None, wanted) for _code, literal in sides):
                return None
            python = _INTEGER_OPERATORS.get(op) or _BOOLEAN_OPERATORS[op]
            tests = [f"type({code}) is {wanted.__name__}" for code, literal in sides if not literal]
            return f"({left} {python} {right})", " and ".join(tests)
        if op not in _EQUALITY_OPERATORS:
            return None
        python = _EQUALITY_OPERATORS[op]
        literals = [literal for _code, literal in sides if literal is not None]
        if any(literal not in _PLAIN for literal in literals):
            return None
        if len(literals) == 2:
            return (f"({left} {python} {right})", "") if literals[0] is literals[1] else None
        if literals:
            other = left if sides[1][1] is not None else right
            return f"({left} {python} {right})", f"type({other}) is {literals[0].__name__}"
        return (
            f"({left} {python} {right})",
            f"type({left}) is type({right}) and type({left}) in PLAIN",
        )

    def interpolated(self, code: list[str], depth: int, node: syntax.Interpolated) -> str:
        """A double-quoted string: its body rendered to text."""
        pad = "    " * depth
        result = self.fresh("t")
        parts = [part for part in node.body if isinstance(part, syntax.Text | syntax.Reference)]
        if len(parts) == len(node.body):
            pieces = [self.piece(code, depth, part) for part in parts]
            joined = " + ".join(pieces) if len(pieces) <= 4 else f"''.join(({', '.join(pieces)},))"
            code.append(f"{pad}{result} = {joined or repr('')}")
            return result
        buffer, write = self.fresh("b"), self.fresh("a")
        code += [f"{pad}{buffer} = []", f"{pad}{write} = {buffer}.append"]
        self.block(code, depth, node.body, write)
        code.append(f"{pad}{result} = ''.join({buffer})")
        return result

    def piece(self, code: list[str], depth: int, part: syntax.Text | syntax.Reference) -> str:
        if isinstance(part, syntax.Text):
            return repr(part.text)
        value = self.variable(code, depth, part.value)
        otherwise = "''" if part.quiet else f"null_reference({part.source!r})"
        code.append(
            f"{'    ' * depth}if type({value}) is not str: {value} = "
            f"render_value({value}) if {value} is not None else {otherwise}"
        )
        return value

    # -- statements -------------------------------------------------------------------------

    def block(self, code: list[str], depth: int, block: syntax.Block, out: str) -> None:
        """The statements in order, each run of text written at once."""
        text: list[str] = []
        for node in block:
            if isinstance(node, syntax.Text):
                text.append(node.text)
                continue
            if text:
                self.statement(code, depth, syntax.Text("".join(text)), out)
                text = []
            self.statement(code, depth, node, out)
        if text:
            self.statement(code, depth, syntax.Text("".join(text)), out)

    def statement(self, code: list[str], depth: int, node: syntax.Statement, out: str) -> None:
        pad = "    " * depth
        if isinstance(node, syntax.Text):
            code.append(f"{pad}{out}({node.text!r})")
        elif isinstance(node, syntax.Reference):
            value = self.variable(code, depth, node.value)
            code += [
                f"{pad}if type({value}) is str: {out}({value})",
                f"{pad}elif {value} is not None: {out}(render_value({value}))",
            ]
            if not node.quiet:
                code.append(f"{pad}else: null_reference({node.source!r})")
        elif isinstance(node, syntax.If):
            self.choose(code, depth, node.branches, node.otherwise, out)
        elif isinstance(node, syntax.Set):
            value = self.expression(code, depth, node.value)
            stored = (
                f"POISON if {value} is None else {value}" if _may_be_null(node.value) else value
            )
            code.append(f"{pad}S[{self.slot(node.name)}] = {stored}")
        elif isinstance(node, syntax.ResponseOverride):
            overrides = self.fresh("t")
            code.append(f"{pad}{overrides} = overrides_of(S[0], {node.parameter!r})")
            value = self.expression(code, depth, node.value)
            code.append(f"{pad}override({overrides}, {node.parameter!r}, {value})")
        else:
            self.foreach(code, depth, node, out)

    def choose(
        self,
        code: list[str],
        depth: int,
        branches: tuple[tuple[syntax.Expr, syntax.Block], ...],
        otherwise: syntax.Block | None,
        out: str,
    ) -> None:
        """#if / #elseif / #else: each later branch inside the previous one's else."""
        pad = "    " * depth
        (test, body), rest = branches[0], branches[1:]
        condition = self.expression(code, depth, test)
        if not _is_temporary(condition):
            literal, condition = condition, self.fresh("t")
            code.append(f"{pad}{condition} = {literal}")
        checked = _always_boolean(test)
        code.append(f"{pad}if {condition}:" if checked else f"{pad}if {condition} is True:")
        self.nested(code, depth, out, lambda inner, d, o: self.block(inner, d, body, o))
        if not rest and otherwise is None and checked:
            return

        def other(inner: list[str], d: int, o: str) -> None:
            if not checked:
                inner.append(
                    f"{'    ' * d}if {condition} is not False and {condition} is not None: "
                    f"truth({condition}, '#if')"
                )
            if rest:
                self.choose(inner, d, rest, otherwise, o)
            elif otherwise is not None:
                self.block(inner, d, otherwise, o)

        code.append(f"{pad}else:")
        self.nested(code, depth, out, other, carried=condition)

    def foreach(self, code: list[str], depth: int, node: syntax.Foreach, out: str) -> None:
        pad = "    " * depth
        items = self.expression(code, depth, node.items)
        listed = self.fresh("t")
        code.append(f"{pad}{listed} = foreach_items({items})")
        item, meta = self.loop_slot(), self.loop_slot()
        # As Velocity's iteration scope: a loop variable named foreach hides $foreach.
        self.loops.append({"foreach": meta, node.name: item})
        body: list[str] = []
        self.nested(body, depth, out, lambda inner, d, o: self.block(inner, d, node.body, o))
        self.loops.pop()
        if meta not in self.read_slots:
            code.append(f"{pad}for S[{item}] in {listed}:")
        else:
            count, number = self.fresh("n"), self.fresh("c")
            code += [
                f"{pad}{count} = len({listed})",
                f"{pad}for {number}, S[{item}] in enumerate({listed}, 1):",
                f"{pad}    S[{meta}] = "
                f"{{'count': {number}, 'index': {number} - 1, 'hasNext': {number} < {count}}}",
            ]
        code += body

    def source(self, block: syntax.Block) -> str:
        body: list[str] = []
        self.block(body, 1, block, "append")
        initial = ", ".join(
            "G" if index == 0 else (f"G.get({name!r})" if name in self.provided else "None")
            for index, name in enumerate(self.slot_names)
        )
        render = ["def render(G, out):", f"    S = [{initial}]", "    append = out.append"]
        return "\n".join(
            render + body + ["    pass"] + [line for f in self.functions for line in f]
        )


def compile_template(block: syntax.Block, provided: Collection[str]) -> Template:
    """The function that renders a parsed template: call it with the variables API Gateway
    provides, by name (no others: the rest start as null), the response overrides under
    OVERRIDES, and a list to write to."""
    generator = _Generator(_nullable_names(block), provided)
    source = generator.source(block)
    namespace = {**_RUNTIME, **generator.constants}
    exec(compile(source, "<velocity template>", "exec"), namespace)  # noqa: S102 (our own source)
    template: Template = namespace["render"]
    return template


__all__ = [
    "MAX_FOREACH_ITERATIONS",
    "OVERRIDES",
    "Template",
    "compile_template",
]
