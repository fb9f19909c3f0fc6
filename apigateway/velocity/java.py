"""The Java methods a mapping template may call, with Java's semantics, for the local renderer.

API Gateway runs mapping templates in Java Velocity, where `$text.split(';')` is
`java.lang.String#split` and `$list.size()` is `java.util.List#size`. airspeed (the Python
Velocity engine the renderer builds on) would call Python's methods instead, which differ
silently (split is literal, trim strips other characters, indexOf raises, ...). Every method a
template may call is therefore written here, once, as Java defines it; a method that is not
here makes the render fail (`UnsupportedVtl`), so nothing renders differently from AWS.

Strings are handled in UTF-16 code units, as Java counts them: `length()`, `indexOf` and
`substring` agree with Java for any text, emoji included.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class VtlRenderError(Exception):
    """A template could not be rendered."""


class UnsupportedVtl(VtlRenderError):
    """The template uses something outside the supported subset (docs/vtl.md).

    Raised instead of guessing: a render that would differ from API Gateway's must not pass.
    """


class VelocityRuntimeError(VtlRenderError):
    """What Java itself would throw during the render (e.g. substring out of range).

    API Gateway answers such a failure with 500 {"message": "Internal server error"}.
    """


# -- UTF-16 helpers -------------------------------------------------------------------------


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def _from_units(data: bytes) -> str:
    return data.decode("utf-16-le", "surrogatepass")


# ASCII text has one UTF-16 unit per character, so Python's indexes are Java's: the helpers
# below take that short cut (the templates' text is nearly always ASCII) and otherwise count
# in UTF-16 units.


def java_length(text: str) -> int:
    return len(text) if text.isascii() else len(_units(text)) // 2


def _substring(text: str, begin: int, end: int | None = None) -> str:
    ascii_only = text.isascii()
    units = b"" if ascii_only else _units(text)
    length = len(text) if ascii_only else len(units) // 2
    stop = length if end is None else end
    if begin < 0 or stop > length or begin > stop:
        raise VelocityRuntimeError(
            f"StringIndexOutOfBoundsException: begin {begin}, end {stop}, length {length}"
        )
    return text[begin:stop] if ascii_only else _from_units(units[2 * begin : 2 * stop])


def _index_of(text: str, needle: str, from_index: int = 0) -> int:
    # Java: a start past the end behaves as the end ("" is found there, nothing else is).
    if text.isascii() and needle.isascii():
        return text.find(needle, min(max(from_index, 0), len(text)))
    units, wanted = _units(text), _units(needle)
    start = min(max(from_index, 0) * 2, len(units))
    position = units.find(wanted, start)
    # A match must start on a code-unit boundary (an even byte offset).
    while position != -1 and position % 2:
        position = units.find(wanted, position + 1)
    return -1 if position == -1 else position // 2


def _index_of_start(text: str, needle: str) -> int:
    """indexOf(str): _index_of from 0, without its clamping for the ASCII case."""
    if text.isascii() and needle.isascii():
        return text.find(needle)
    return _index_of(text, needle)


def _last_index_of(text: str, needle: str) -> int:
    units, wanted = _units(text), _units(needle)
    position = units.rfind(wanted)
    while position != -1 and position % 2:
        position = units.rfind(wanted, 0, position + len(wanted) - 1)
    return -1 if position == -1 else position // 2


def _trim(text: str) -> str:
    """Java's trim: strips every character <= U+0020 from both ends, and nothing else."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


# -- regular expressions --------------------------------------------------------------------

# Java and Python agree on this subset of regex syntax once Python runs in ASCII mode (where
# \d, \w and \s mean what they mean in Java). Anything else is refused rather than guessed.
_JAVA_ONLY_SYNTAX = re.compile(
    r"\\[pPQEzZGARXhHvVkKNbB]"  # classes/anchors Python lacks or reads differently
    r"|[*+?}][+]"  # possessive quantifiers
    r"|\(\?<?[=!]"  # lookaround (supported by both, but keep the subset small)
    r"|\(\?<\w"  # named groups: Java and Python spell them differently
    r"|\(\?[a-zA-Z]"  # inline flags
    r"|&&|\[\["  # class intersection and nested classes
)
_UNESCAPED_DOT = re.compile(r"(?<!\\)(?:\\\\)*\.")


@functools.lru_cache(maxsize=256)
def _compile(pattern: object) -> re.Pattern[str]:
    """The pattern compiled, once per pattern (templates split and match in loops)."""
    if not isinstance(pattern, str):
        raise UnsupportedVtl(f"a regular expression must be a string, not {pattern!r}")
    if _JAVA_ONLY_SYNTAX.search(pattern):
        raise UnsupportedVtl(f"regex {pattern!r} uses syntax outside the supported subset")
    # '.' excludes \r, \u0085, \u2028, \u2029 in Java but not in Python: write [^\n] explicitly.
    without_classes = re.sub(r"\[(?:\\.|[^\]\\])*\]", "", pattern)
    if _UNESCAPED_DOT.search(without_classes):
        raise UnsupportedVtl(f"regex {pattern!r}: an unescaped '.' differs between Java and Python")
    try:
        return re.compile(pattern, re.ASCII)
    except re.error as error:
        raise VelocityRuntimeError(f"PatternSyntaxException: {error}") from error


def java_split(text: str, pattern: str, limit: int = 0) -> list[str]:
    """String#split(regex[, limit]): regex separators, as Java 8+ splits.

    A zero-width match at the very start produces no leading empty string; when nothing
    matches the result is the whole input (even when it is empty). limit > 0: at most `limit`
    parts, the last holding the rest; limit 0: trailing empty strings dropped; limit < 0: kept.
    """
    if pattern == "" and limit == 0:
        # What the loop below gives for the empty pattern (one part per character), which
        # PARSE_NUMBER splits by for every number it reads.
        return list(text) if text else [text]
    regex = _compile(pattern)
    parts: list[str] = []
    index = 0
    matched = False
    for match in regex.finditer(text):
        if limit > 0 and len(parts) == limit - 1:
            break
        if match.end() == 0:
            continue  # zero-width match at the beginning
        matched = True
        parts.append(text[index : match.start()])
        index = match.end()
    if not matched:
        return [text]
    parts.append(text[index:])
    if limit == 0:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


def _matches(text: str, pattern: str) -> bool:
    return _compile(pattern).fullmatch(text) is not None


def _replace_all(text: str, pattern: str, replacement: str) -> str:
    if "$" in replacement or "\\" in replacement:
        raise UnsupportedVtl("replaceAll with '$' or '\\' in the replacement is not supported")
    return _compile(pattern).sub(lambda _match: replacement, text)


# -- method tables ----------------------------------------------------------------------------


# String methods by (name, argument types): Java picks an overload by its arguments' types.
_STRING_METHODS: dict[tuple[str, tuple[type, ...]], Callable[..., Any]] = {
    ("length", ()): java_length,
    ("isEmpty", ()): lambda text: java_length(text) == 0,
    ("trim", ()): _trim,
    ("toLowerCase", ()): str.lower,
    ("toString", ()): lambda text: text,
    ("equals", (object,)): lambda text, other: isinstance(other, str) and other == text,
    ("contains", (str,)): lambda text, other: _index_of(text, other) != -1,
    ("startsWith", (str,)): lambda text, other: _units(text).startswith(_units(other)),
    ("endsWith", (str,)): lambda text, other: _units(text).endswith(_units(other)),
    ("indexOf", (str,)): _index_of_start,
    ("indexOf", (str, int)): _index_of,
    ("lastIndexOf", (str,)): _last_index_of,
    ("substring", (int,)): _substring,
    ("substring", (int, int)): _substring,
    ("split", (str,)): java_split,
    ("split", (str, int)): java_split,
    ("matches", (str,)): _matches,
    ("replaceAll", (str, str)): _replace_all,
}
_STRING_METHOD_NAMES = frozenset(name for name, _types in _STRING_METHODS)


# bool is an int in Python, not in Java: a boolean argument matches no int parameter.
_PARAMETER_TYPES: dict[type, type] = {str: str, int: int}


def _argument_types(args: tuple[Any, ...]) -> tuple[type, ...]:
    return tuple(_PARAMETER_TYPES.get(type(arg), object) for arg in args)


def _string_overload(name: str, types: tuple[type, ...]) -> Callable[..., Any] | None:
    """The String method Java picks for arguments of these parameter types, if any."""
    method = _STRING_METHODS.get((name, types))
    if method is None and len(types) == 1:
        method = _STRING_METHODS.get((name, (object,)))
    return method


def _string_method(name: str, text: str, args: tuple[Any, ...]) -> Any:
    method = _string_overload(name, _argument_types(args))
    if method is None:
        if name in _STRING_METHOD_NAMES:
            raise UnsupportedVtl(f"String.{name}: no overload takes {args!r}")
        raise UnsupportedVtl(f"String.{name}() is not supported by the renderer (docs/vtl.md)")
    return method(text, *args)


def _unsupported(kind: str, name: str, arity: int) -> UnsupportedVtl:
    return UnsupportedVtl(f"{kind}.{name}() with {arity} argument(s) is not supported")


def _list_get(items: list[Any], index: Any) -> Any:
    if type(index) is not int:
        raise _unsupported("List", "get", 1)
    if not 0 <= index < len(items):
        raise VelocityRuntimeError(f"IndexOutOfBoundsException: index {index}, size {len(items)}")
    return items[index]


# List and Map methods by (name, number of arguments).
_LIST_METHODS: dict[tuple[str, int], Callable[..., Any]] = {
    ("size", 0): len,
    ("isEmpty", 0): lambda items: not items,
    ("get", 1): _list_get,
    ("contains", 1): lambda items, wanted: any(_java_equals(item, wanted) for item in items),
}
_MAP_METHODS: dict[tuple[str, int], Callable[..., Any]] = {
    ("get", 1): dict.get,
    ("containsKey", 1): lambda mapping, key: key in mapping,
    ("keySet", 0): lambda mapping: list(mapping.keys()),
    ("values", 0): lambda mapping: list(mapping.values()),
    ("size", 0): len,
    ("isEmpty", 0): lambda mapping: not mapping,
}


def _list_method(name: str, items: list[Any], args: tuple[Any, ...]) -> Any:
    method = _LIST_METHODS.get((name, len(args)))
    if method is None:
        raise _unsupported("List", name, len(args))
    return method(items, *args)


def _map_method(name: str, mapping: dict[Any, Any], args: tuple[Any, ...]) -> Any:
    method = _MAP_METHODS.get((name, len(args)))
    if method is None:
        raise _unsupported("Map", name, len(args))
    return method(mapping, *args)


def _java_equals(left: object, right: object) -> bool:
    if type(left) is not type(right):
        return False
    return left == right


def call_method(target: object, name: str, args: tuple[Any, ...]) -> Any:
    """`$target.name(args)` as Java would run it."""
    if isinstance(target, str):
        return _string_method(name, target, args)
    if isinstance(target, list):
        return _list_method(name, target, args)
    if isinstance(target, dict):
        return _map_method(name, target, args)
    method: Callable[..., Any] | None = getattr(target, "vtl_method", None)
    if method is None or type(target) in (int, bool, float):
        raise UnsupportedVtl(
            f"{type(target).__name__}.{name}() is not supported by the renderer (docs/vtl.md)"
        )
    return method(name, args)


@dataclass(frozen=True)
class FastPath:
    """One case of call_method or get_property that depends only on exact types: for a target
    of type `target` and arguments of types `parameters` (None: any), `function(target, *args)`
    is what they would run. The compiler tests these at each call site, once the arguments are
    known, and calls call_method/get_property for whatever else comes."""

    target: type
    parameters: tuple[type | None, ...]
    function: Callable[..., Any]


def method_fast_paths(name: str, arity: int) -> list[FastPath]:
    """The fast paths of `$x.name(...)` with `arity` arguments, most specific first."""
    paths = []
    string_overloads = [types for n, types in _STRING_METHODS if n == name and len(types) == arity]
    for types in sorted(string_overloads, key=lambda types: object in types):
        method = _string_overload(name, types)
        assert method is not None
        parameters = tuple(None if kind is object else kind for kind in types)
        paths.append(FastPath(str, parameters, method))
    for kind, table in ((list, _LIST_METHODS), (dict, _MAP_METHODS)):
        if (name, arity) in table:
            paths.append(FastPath(kind, (None,) * arity, table[(name, arity)]))
    return paths


def property_fast_paths(name: str) -> list[FastPath]:
    """The fast paths of `$x.name`: a map's entry (called as function(target, name))."""
    return [FastPath(dict, (None,), dict.get)]


def get_property(target: object, name: str) -> Any:
    """`$target.name` as Velocity resolves it: Map#get for maps, a getter otherwise."""
    if isinstance(target, dict):
        return target.get(name)
    getter: Callable[[str], Any] | None = getattr(target, "vtl_property", None)
    if getter is None:
        raise UnsupportedVtl(
            f"property '{name}' of {type(target).__name__} is not supported by the renderer"
        )
    return getter(name)
