"""Render API Gateway mapping templates locally, as API Gateway's Java Velocity would.

`render(template, RenderInput(...))` gives a template the variables API Gateway gives it
(`$input`, `$util`, `$context`, `$stageVariables`, defined here) and runs it compiled
(airspeed_adapter.py parses, compiler.py compiles it to a Python function once per template
text, values.py and java.py give its values Java's semantics). A render either matches what
API Gateway produces or raises:

- `UnsupportedVtl`: the template steps outside the subset documented in docs/vtl.md. A test
  failure, never an answer.
- `VelocityRuntimeError`: Java itself would throw (substring out of range, bad JSON given to
  `$util.parseJson`, ...). API Gateway answers that with a 500.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from beekeeper.apigateway.velocity.airspeed_adapter import parse
from beekeeper.apigateway.velocity.compiler import (
    MAX_FOREACH_ITERATIONS,
    OVERRIDES,
    Template,
    compile_template,
)
from beekeeper.apigateway.velocity.java import UnsupportedVtl, VelocityRuntimeError, VtlRenderError

__all__ = [
    "MAX_FOREACH_ITERATIONS",
    "RenderInput",
    "Rendered",
    "UnsupportedVtl",
    "VelocityRuntimeError",
    "VtlRenderError",
    "render",
    "render_response",
]


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
    """$util, as API Gateway documents it (stateless: one instance serves every render)."""

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
        self._fields = dict(fields)
        # A nested mapping becomes a record when first read (most renders read one or two
        # fields), the same record each time it is read.
        self._records: dict[str, _Record] = {}

    def vtl_property(self, name: str) -> Any:
        if name not in self._fields:
            raise UnsupportedVtl(f"{self._label}.{name} is not provided by the renderer")
        value = self._fields[name]
        if not isinstance(value, Mapping):
            return value
        if name not in self._records:
            self._records[name] = _Record(f"{self._label}.{name}", value)
        return self._records[name]


_UTIL = _Util()


def _provided(data: RenderInput, overrides: dict[str, Any]) -> dict[str, Any]:
    """The variables API Gateway provides a template, by name, and where its overrides go."""
    return {
        "input": _Input(data),
        "util": _UTIL,
        "context": _Record("$context", data.context),
        "stageVariables": dict(data.stage_variables),
        OVERRIDES: overrides,
    }


# The compiler starts every other name of a template as null.
PROVIDED = frozenset(_provided(RenderInput(), {})) - {OVERRIDES}


# -- compile once, render many times ---------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _compile(template: str) -> Template:
    """Parsed, checked and compiled once per template text."""
    return compile_template(parse(template), PROVIDED)


@dataclass(frozen=True)
class Rendered:
    """A response template's output, and the status code and headers it set, if any."""

    text: str
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


def render(template: str, data: RenderInput) -> str:
    """The template rendered over `data`; raises UnsupportedVtl or VelocityRuntimeError."""
    return render_response(template, data).text


def render_response(template: str, data: RenderInput) -> Rendered:
    """`render`, keeping what a template sets with $context.responseOverride.status and
    $context.responseOverride.header.<Name>."""
    compiled = _compile(template)
    overrides: dict[str, Any] = {}
    provided = _provided(data, overrides)
    out: list[str] = []
    try:
        compiled(provided, out)
    except VtlRenderError:
        raise
    except Exception as error:  # a gap in the compiler's checks: never an answer
        raise UnsupportedVtl(f"render failed: {error!r}") from error
    headers = {
        name.removeprefix("header."): value
        for name, value in overrides.items()
        if name.startswith("header.")
    }
    return Rendered("".join(out), overrides.get("status"), headers)
