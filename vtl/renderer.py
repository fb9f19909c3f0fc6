"""Render API Gateway mapping templates locally, as API Gateway's Java Velocity would.

Built on airspeed (the airspeed-ext distribution), made strict: airspeed's own reference and
method resolution falls back to Python (a Python `split`, `#if($undefined)` being true, `null`
rendering as an empty string), so this module replaces those points with Java's semantics
(vtl/java.py) and refuses everything outside the subset documented in docs/vtl.md. The rule is
that a render either matches what API Gateway produces or raises:

- `UnsupportedVtl`: the template steps outside the subset (an unknown method, a null rendered,
  `#if` on a non-boolean, a #macro, ...). A test failure, never an answer.
- `VelocityRuntimeError`: Java itself would throw (substring out of range, bad JSON given to
  `$util.parseJson`, ...). API Gateway answers that with a 500.

The strict semantics are installed into airspeed's classes once, when this module is imported;
nothing else in Beekeeper uses airspeed.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import airspeed
from airspeed import operators as _ops

from beekeeper.vtl import java
from beekeeper.vtl.java import UnsupportedVtl, VelocityRuntimeError, VtlRenderError

__all__ = [
    "MAX_FOREACH_ITERATIONS",
    "RenderInput",
    "UnsupportedVtl",
    "VelocityRuntimeError",
    "VtlRenderError",
    "render",
]

# API Gateway allows a #foreach 1,000 iterations (a documented quota). Whether it then stops
# or fails is not documented, so a loop that would go further fails the render: templates
# bound their loops (split with a limit, a size check) so client input can not reach it.
MAX_FOREACH_ITERATIONS = 1000


# -- the variables API Gateway gives a template ----------------------------------------------


@dataclass(frozen=True)
class RenderInput:
    """What one render sees: the request's parameters, a body, $context and $stageVariables.

    `headers` and `query` are as API Gateway received them (query values already URL-decoded).
    For an integration response template, `body` is the integration's response body and the
    parameters are still the method request's.
    """

    body: str = ""
    path_parameters: Mapping[str, str] = field(default_factory=dict)
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    context: Mapping[str, Any] = field(default_factory=dict)
    stage_variables: Mapping[str, str] = field(default_factory=dict)


def _string_argument(method: str, args: tuple[Any, ...]) -> str:
    if len(args) != 1 or not isinstance(args[0], str):
        raise UnsupportedVtl(f"{method} takes one string argument, got {args!r}")
    return args[0]


class _Input:
    """$input: params(), params(name), path(jsonpath), json(jsonpath), body."""

    def __init__(self, data: RenderInput) -> None:
        self._body = data.body
        self._params = {
            "path": dict(data.path_parameters),
            "querystring": dict(data.query),
            "header": dict(data.headers),
        }

    def vtl_property(self, name: str) -> Any:
        if name == "body":
            return self._body
        raise UnsupportedVtl(f"$input.{name} is not supported (docs/vtl.md)")

    def vtl_method(self, name: str, args: tuple[Any, ...]) -> Any:
        if name == "params":
            if not args:
                # A fresh copy per call: a template can not change what the next call sees.
                return {kind: dict(values) for kind, values in self._params.items()}
            return self._param(_string_argument("$input.params", args))
        if name == "path":
            return _select(self._parsed_body(), _string_argument("$input.path", args))
        if name == "json":
            selected = _select(self._parsed_body(), _string_argument("$input.json", args))
            return json.dumps(selected, separators=(",", ":"), ensure_ascii=False)
        raise UnsupportedVtl(f"$input.{name}() is not supported (docs/vtl.md)")

    def _param(self, name: str) -> str:
        # Searched in this order, as API Gateway documents; header names case-insensitively.
        for kind in ("path", "querystring"):
            if name in self._params[kind]:
                return self._params[kind][name]
        for header, value in self._params["header"].items():
            if header.lower() == name.lower():
                return value
        return ""

    def _parsed_body(self) -> Any:
        return _parse_json(self._body)


def _parse_json(text: str) -> Any:
    def refuse_constant(name: str) -> Any:
        raise VelocityRuntimeError(f"invalid JSON constant {name}")

    try:
        return json.loads(text, parse_constant=refuse_constant)
    except (TypeError, ValueError) as error:
        raise VelocityRuntimeError(f"the text is not valid JSON: {error}") from error


_JSONPATH_STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\['([^'\\]*)'\]|\[(\d+)\]")


def _select(document: Any, path: str) -> Any:
    """The subset of JSONPath the renderer reads: $, .name, ['name'] and [index]."""
    if not path.startswith("$"):
        raise UnsupportedVtl(f"JSONPath {path!r} must start with '$'")
    position, current = 1, document
    while position < len(path):
        match = _JSONPATH_STEP.match(path, position)
        if not match:
            raise UnsupportedVtl(f"JSONPath {path!r} is outside the supported subset")
        name = match.group(1) if match.group(1) is not None else match.group(2)
        if name is not None:
            if not isinstance(current, dict) or name not in current:
                raise UnsupportedVtl(f"JSONPath {path!r} selects nothing; use $util.parseJson")
            current = current[name]
        else:
            index = int(match.group(3))
            if not isinstance(current, list) or index >= len(current):
                raise UnsupportedVtl(f"JSONPath {path!r} selects nothing; use $util.parseJson")
            current = current[index]
        position = match.end()
    return current


class _Util:
    """$util, as API Gateway documents it."""

    def vtl_method(self, name: str, args: tuple[Any, ...]) -> Any:
        text = _string_argument(f"$util.{name}", args)
        if name == "escapeJavaScript":
            return escape_javascript(text)
        if name == "parseJson":
            return _parse_json(text)
        if name == "urlEncode":
            return url_encode(text)
        if name == "urlDecode":
            return url_decode(text)
        if name == "base64Encode":
            return base64.b64encode(text.encode("utf-8")).decode("ascii")
        if name == "base64Decode":
            return base64_decode(text)
        raise UnsupportedVtl(f"$util.{name}() is not supported (docs/vtl.md)")


def escape_javascript(text: str) -> str:
    """Java's StringEscapeUtils.escapeJavaScript, which API Gateway's $util uses.

    Works on UTF-16 code units; escapes quotes (single quotes too, which JSON does not
    allow: never put its output in JSON), backslash, '/', control characters and all
    non-ASCII characters.
    """
    named = {"\b": "\\b", "\n": "\\n", "\t": "\\t", "\f": "\\f", "\r": "\\r"}
    quoted = {"'": "\\'", '"': '\\"', "\\": "\\\\", "/": "\\/"}
    out: list[str] = []
    units = text.encode("utf-16-le", "surrogatepass")
    for offset in range(0, len(units), 2):
        code = int.from_bytes(units[offset : offset + 2], "little")
        char = chr(code)
        if code > 0x7F or (code < 32 and char not in named):
            out.append(f"\\u{code:04X}")
        elif char in named:
            out.append(named[char])
        elif char in quoted:
            out.append(quoted[char])
        else:
            out.append(char)
    return "".join(out)


_URL_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_")


def url_encode(text: str) -> str:
    """java.net.URLEncoder.encode(text, "UTF-8")."""
    out: list[str] = []
    for byte in text.encode("utf-8", "surrogatepass"):
        if byte in _URL_SAFE:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def url_decode(text: str) -> str:
    """java.net.URLDecoder.decode(text, "UTF-8"); a malformed escape is an error."""
    data = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "+":
            data.append(0x20)
            index += 1
        elif char == "%":
            pair = text[index + 1 : index + 3]
            if len(pair) != 2 or not all(c in "0123456789abcdefABCDEF" for c in pair):
                raise VelocityRuntimeError(f"URLDecoder: illegal escape at {index} in {text!r}")
            data.append(int(pair, 16))
            index += 3
        else:
            data.extend(char.encode("utf-8", "surrogatepass"))
            index += 1
    return data.decode("utf-8", "replace")


def base64_decode(text: str) -> str:
    """Base64 (standard alphabet, padding optional) to UTF-8 text; anything else is an error."""
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text) or len(text.rstrip("=")) % 4 == 1:
        raise VelocityRuntimeError(f"base64Decode: {text!r} is not Base64")
    padded = text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4)
    try:
        return base64.b64decode(padded, validate=True).decode("utf-8", "replace")
    except binascii.Error as error:
        raise VelocityRuntimeError(f"base64Decode: {error}") from error


class _Record:
    """A $context-like object: known names only; an unknown one fails the render."""

    def __init__(self, label: str, fields: Mapping[str, Any]) -> None:
        self._label = label
        self._fields = {
            key: _Record(f"{label}.{key}", value) if isinstance(value, Mapping) else value
            for key, value in fields.items()
        }

    def vtl_property(self, name: str) -> Any:
        if name not in self._fields:
            raise UnsupportedVtl(f"{self._label}.{name} is not provided by the renderer")
        return self._fields[name]


# -- strict semantics for airspeed -----------------------------------------------------------


class _Poisoned:
    """The value of a variable last #set to null.

    Velocity 1.7 keeps the old value, 2.x sets null: a template that reads such a variable
    depends on the version, so reading it fails the render.
    """


_POISON = _Poisoned()


def _truth(value: Any, where: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise UnsupportedVtl(
        f"{where} needs a boolean, got {value!r}: other values are true or false depending on "
        "the Velocity version; compare explicitly"
    )


def _is_int(value: Any) -> bool:
    return type(value) is int


def _numbers(op: str, left: Any, right: Any) -> tuple[int, int]:
    if not (_is_int(left) and _is_int(right)):
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
    kinds = (str, int, bool)
    if type(left) is not type(right) or type(left) not in kinds:
        raise UnsupportedVtl(f"'==' between {left!r} and {right!r}: compare like with like")
    return bool(left == right)


def _binary(op: str, compute: Any) -> Any:
    def apply(left: Any, right: Any) -> Any:
        return compute(*_numbers(op, left, right))

    return apply


_STRICT_OPERATORS: dict[str, Any] = {
    "==": _equals,
    "eq": _equals,
    "!=": lambda a, b: not _equals(a, b),
    "ne": lambda a, b: not _equals(a, b),
    ">": _binary(">", operator.gt),
    "gt": _binary(">", operator.gt),
    ">=": _binary(">=", operator.ge),
    "ge": _binary(">=", operator.ge),
    "<": _binary("<", operator.lt),
    "lt": _binary("<", operator.lt),
    "<=": _binary("<=", operator.le),
    "le": _binary("<=", operator.le),
    "+": _binary("+", operator.add),
    "-": _binary("-", operator.sub),
    "*": _binary("*", operator.mul),
    "/": _divide,
    "%": _remainder,
    "&&": lambda a, b: _truth(a, "&&") and _truth(b, "&&"),
    "and": lambda a, b: _truth(a, "and") and _truth(b, "and"),
    "||": lambda a, b: _truth(a, "||") or _truth(b, "||"),
    "or": lambda a, b: _truth(a, "or") or _truth(b, "or"),
}


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_int(value):
        return str(value)
    raise UnsupportedVtl(
        f"rendering {type(value).__name__} {value!r}: Java's toString differs; render strings, "
        "integers and booleans only"
    )


def _name_or_call(self: Any, current: Any, loader: Any, top_namespace: Any) -> Any:
    if self.index is not None:
        raise UnsupportedVtl(f"index notation ${self.name}[...] is not in the supported subset")
    if isinstance(current, _ops.LocalNamespace):
        if self.parameters is not None:
            raise UnsupportedVtl(f"${self.name}(...) calls a variable")
        try:
            value = current[self.name]
        except KeyError:
            return None
        if value is _POISON:
            raise UnsupportedVtl(f"${self.name} was #set to null: its value depends on the version")
        return value
    if current is None:
        return None  # Velocity: a property or method of null is null
    if self.parameters is not None:
        args = tuple(self.parameters.calculate(top_namespace, loader))
        return java.call_method(current, self.name, args)
    return java.get_property(current, self.name)


def _sub_expression(self: Any, current: Any, loader: Any, global_namespace: Any) -> Any:
    if isinstance(self.expression, _ops.ArrayIndex):
        raise UnsupportedVtl("index notation [...] is not in the supported subset")
    return self.expression.calculate(current, loader, global_namespace)


def _condition(self: Any, namespace: Any, loader: Any) -> bool:
    return _truth(self.expression.calculate(namespace, loader), "#if")


def _unary(self: Any, namespace: Any, loader: Any) -> bool:
    return not _truth(self.value.calculate(namespace, loader), "!")


_original_expression_parse = _ops.Expression.parse


def _expression_parse(self: Any) -> None:
    _original_expression_parse(self)
    if len(self.expression) > 3:
        raise UnsupportedVtl(
            "one operator per expression: parenthesize, airspeed's precedence is not Java's"
        )


def _assign(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
    if self.terms:
        raise UnsupportedVtl(f"#set(${self.root_term}.… = …) is not in the supported subset")
    value = self.value.calculate(namespace, loader)
    holder = namespace.find_outermost(self.root_term)
    if holder is None:
        # Velocity has one context per template: a #set inside #foreach outlives the loop.
        holder = namespace
        while isinstance(holder.parent, _ops.LocalNamespace):
            holder = holder.parent
    holder[self.root_term] = _POISON if value is None else value


_original_reference_parse = _ops.FormalReference.parse


def _reference_parse(self: Any) -> None:
    _original_reference_parse(self)
    self.vtl_quiet = self.my_text().startswith("$!")
    if self.alternate is not None:
        raise UnsupportedVtl("${x|default} is Velocity 2 syntax, not API Gateway's")


def _reference_evaluate(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
    if self.expression is None:
        raise UnsupportedVtl(f"{self.my_text()!r} is not a reference")
    value = self.expression.calculate(namespace, loader)
    if value is None:
        if self.vtl_quiet:
            return
        raise UnsupportedVtl(
            f"{self.my_text()} is null: API Gateway would render it as text or as nothing; "
            "use $!{...} when null is expected"
        )
    stream.write(_render_value(value))


def _foreach(self: Any, stream: Any, namespace: Any, loader: Any) -> None:
    items = self.value.calculate(namespace, loader)
    if items is None:
        return
    if not isinstance(items, list):
        raise UnsupportedVtl(f"#foreach over {type(items).__name__}: iterate a list")
    if len(items) > MAX_FOREACH_ITERATIONS:
        raise UnsupportedVtl(
            f"#foreach over {len(items)} items: API Gateway allows {MAX_FOREACH_ITERATIONS}"
        )
    for number, item in enumerate(items, start=1):
        local = _ops.LocalNamespace(namespace)
        local["foreach"] = {"count": number, "index": number - 1, "hasNext": number < len(items)}
        local[self.loop_var_name] = item
        self.block.evaluate(stream, local, loader)


_DISALLOWED_ELEMENTS: tuple[type, ...] = (
    _ops.MacroDefinition,
    _ops.MacroCall,
    _ops.DefineDefinition,
    _ops.IncludeDirective,
    _ops.ParseDirective,
    _ops.EvaluateDirective,
    _ops.StopDirective,
    _ops.UserDefinedDirective,
    _ops.FallthroughHashText,
    _ops.Range,
    _ops.DictionaryLiteral,
    _ops.FloatingPointLiteral,
    _ops.ArrayIndex,
)


def _check_element(element: Any) -> None:
    if isinstance(element, _DISALLOWED_ELEMENTS):
        raise UnsupportedVtl(
            f"{type(element).__name__} {_ops._Element.my_text(element)[:40]!r} "
            "is outside the supported subset"
        )
    if isinstance(element, _ops.Text) and any(ch in element.my_text() for ch in "$#\\"):
        raise UnsupportedVtl(
            f"text {element.my_text()[:40]!r}: a literal '$', '#' or '\\' outside a "
            "single-quoted string is read differently by Velocity and airspeed"
        )
    for value in vars(element).values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, _ops._Element):
                _check_element(child)


def _install() -> None:
    if getattr(_ops, "_beekeeper_strict", False):
        return
    _ops.NameOrCall.calculate = _name_or_call
    _ops.SubExpression.calculate = _sub_expression
    _ops.Condition.calculate = _condition
    _ops.UnaryOperatorValue.calculate = _unary
    _ops.Expression.parse = _expression_parse
    _ops.Assignment.evaluate_raw = _assign
    _ops.FormalReference.parse = _reference_parse
    _ops.FormalReference.evaluate_raw = _reference_evaluate
    _ops.ForeachDirective.evaluate_raw = _foreach
    _ops.BinaryOperator.OPERATORS = {
        name: _STRICT_OPERATORS.get(name, _unsupported_operator(name))
        for name in _ops.BinaryOperator.OPERATORS
    }
    _ops._beekeeper_strict = True


def _unsupported_operator(name: str) -> Any:
    def refuse(_left: Any, _right: Any) -> Any:
        raise UnsupportedVtl(f"operator {name!r} is not in the supported subset")

    return refuse


_install()


def _unwrap(error: BaseException) -> BaseException:
    """airspeed wraps what a template raised in TemplateExecutionError; find our error."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, VtlRenderError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return error


@functools.lru_cache(maxsize=64)
def _compile(template: str) -> airspeed.Template:
    """Parsed and checked once per template text (parsing costs far more than rendering)."""
    try:
        compiled = airspeed.Template(template)
        compiled.ensure_compiled()
    except VtlRenderError:
        raise
    except _ops.TemplateSyntaxError as error:
        raise UnsupportedVtl(f"template syntax: {error}") from error
    _check_element(compiled.root_element)
    return compiled


def render(template: str, data: RenderInput) -> str:
    """The template rendered over `data`; raises UnsupportedVtl or VelocityRuntimeError."""
    compiled = _compile(template)
    namespace = {
        "input": _Input(data),
        "util": _Util(),
        "context": _Record("$context", data.context),
        "stageVariables": dict(data.stage_variables),
    }
    try:
        return str(compiled.merge(namespace))
    except _ops.TemplateError as error:
        cause = _unwrap(error)
        if isinstance(cause, VtlRenderError):
            raise cause from error
        raise UnsupportedVtl(f"render failed inside airspeed: {cause!r}") from error
