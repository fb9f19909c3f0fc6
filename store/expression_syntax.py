"""DynamoDB's expression language, parsed as DynamoDB parses it, with its refusals.

The grammar is the DynamoDB Developer Guide's "Using expressions in DynamoDB"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.html):
condition, filter and key condition expressions ("Condition and filter expressions,
operators, and functions"), update expressions ("Using update expressions") and projection
expressions. Parsing is cached per text and refuses, as DynamoDB does with a
ValidationException whose sentence starts "Invalid <kind>: ":

- a syntax error (a word that is a keyword of the grammar, `a-b`, `_a`, `:v + :v + :v`);
- redundant parentheses (`((a = :v))`, `SET a = ((:v))`; one pair around anything is fine);
- an unescaped reserved word as an attribute name (store/reserved_words.py), at any depth;
- an unknown function (function names are case-sensitive), a function with the wrong number
  of operands, or one that needs a document path given a value (`attribute_exists(:v)`).

What depends on the request's ExpressionAttributeNames and ExpressionAttributeValues is
checked when they are bound (store/expressions.py).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, TypeAlias

from beekeeper.store.reserved_words import is_reserved

CONDITION = "ConditionExpression"
FILTER = "FilterExpression"
KEY_CONDITION = "KeyConditionExpression"
UPDATE = "UpdateExpression"
PROJECTION = "ProjectionExpression"


class ExpressionInvalid(Exception):
    """DynamoDB refuses the request (ValidationException); the message says why."""


class _SyntaxError(ExpressionInvalid):
    pass


# -- the tree --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Path:
    """A document path: names (or `#placeholders`) and list indexes, as written; `plain`, the
    name itself when the path is one name without a placeholder (most are)."""

    parts: tuple[str | int, ...]
    text: str
    plain: str | None = None


@dataclass(frozen=True)
class Value:
    placeholder: str  # ":v"


@dataclass(frozen=True)
class Call:
    """A function that gives a value: size() in conditions, if_not_exists() and
    list_append() in updates; or a condition function (begins_with, ...) as a condition."""

    function: str
    arguments: tuple[Node, ...]


@dataclass(frozen=True)
class Arithmetic:
    op: str  # "+" or "-"
    left: Node
    right: Node


@dataclass(frozen=True)
class Group:
    """A pair of parentheses, kept so that redundant ones are found."""

    inner: Node


@dataclass(frozen=True)
class Comparison:
    op: str  # = <> < <= > >=
    left: Node
    right: Node


@dataclass(frozen=True)
class Between:
    subject: Node
    low: Node
    high: Node


@dataclass(frozen=True)
class In:
    subject: Node
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    inner: Node


@dataclass(frozen=True)
class Logical:
    op: str  # AND or OR
    left: Node
    right: Node


@dataclass(frozen=True)
class Action:
    """One action of an update: SET path = value, REMOVE path, ADD/DELETE path :value."""

    section: str
    path: Path
    value: Node | None


Node: TypeAlias = (
    Path | Value | Call | Arithmetic | Group | Comparison | Between | In | Not | Logical
)

# Functions by where they may stand (names are case-sensitive).
CONDITION_FUNCTIONS = {
    "attribute_exists": 1,
    "attribute_not_exists": 1,
    "attribute_type": 2,
    "begins_with": 2,
    "contains": 2,
}
CONDITION_OPERAND_FUNCTIONS = {"size": 1}
UPDATE_OPERAND_FUNCTIONS = {"if_not_exists": 2, "list_append": 2}
# Functions whose first operand must be a document path.
_PATH_FIRST = frozenset({"attribute_exists", "attribute_not_exists", "attribute_type"})
_PATH_FIRST_UPDATE = frozenset({"if_not_exists"})
COMPARATORS = ("=", "<>", "<", "<=", ">", ">=")
KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE"})
SECTIONS = ("SET", "REMOVE", "ADD", "DELETE")


# -- tokens ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Token:
    kind: str  # name, keyword, #, :, index, op, end
    text: str
    start: int
    end: int


_LEXEME = re.compile(
    r"""(?P<space>\s+)
      | (?P<name>[A-Za-z][A-Za-z0-9_]*)
      | (?P<hash>\#[A-Za-z0-9_]+)
      | (?P<colon>:[A-Za-z0-9_]+)
      | (?P<index>[0-9]+)
      | (?P<op><>|<=|>=|[=<>(),+\-.\[\]])""",
    re.VERBOSE,
)
_PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
_KINDS = {"name": "name", "hash": "#", "colon": ":", "index": "index", "op": "op"}


def _tokens(expression: str, kind: str) -> list[_Token]:
    out: list[_Token] = []
    position = 0
    while position < len(expression):
        match = _LEXEME.match(expression, position)
        if match is None:
            out.append(_Token("op", expression[position], position, position + 1))
            raise _syntax_error(expression, kind, out, len(out) - 1)
        group = match.lastgroup or ""
        if group != "space":
            text = match.group()
            token_kind = _KINDS[group]
            if token_kind == "name" and text.upper() in KEYWORDS:
                token_kind = "keyword"
            out.append(_Token(token_kind, text, match.start(), match.end()))
        position = match.end()
    out.append(_Token("end", "<EOF>", len(expression), len(expression)))
    return out


def _syntax_error(expression: str, kind: str, tokens: list[_Token], at: int) -> _SyntaxError:
    """DynamoDB's sentence: the offending token and the text around it."""
    token = tokens[at]
    first = tokens[at - 1].start if at > 0 else token.start
    last = tokens[at + 1].end if at + 1 < len(tokens) else token.end
    near = expression[first:last] if token.kind != "end" else expression[first : token.start]
    return _SyntaxError(
        f'Invalid {kind}: Syntax error; token: "{token.text}", near: "{near.strip()}"'
    )


# -- the parser ------------------------------------------------------------------------------


class _Parser:
    def __init__(self, expression: str, kind: str) -> None:
        self.expression = expression
        self.kind = kind
        self.tokens = _tokens(expression, kind)
        self.position = 0

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.position + ahead, len(self.tokens) - 1)]

    def fail(self) -> _SyntaxError:
        return _syntax_error(self.expression, self.kind, self.tokens, self.position)

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        token = self.peek()
        if (text is not None and token.text != text) or (kind is not None and token.kind != kind):
            raise self.fail()
        if token.kind == "end":
            raise self.fail()
        self.position += 1
        return token

    def keyword(self, word: str) -> bool:
        token = self.peek()
        if token.kind == "keyword" and token.text.upper() == word:
            self.position += 1
            return True
        return False

    def end(self) -> None:
        if self.peek().kind != "end":
            raise self.fail()

    # conditions: OR < AND < NOT < a comparison, BETWEEN, IN, a function or ( condition )

    def condition(self) -> Node:
        left = self.conjunction()
        while self.keyword("OR"):
            left = Logical("OR", left, self.conjunction())
        return left

    def conjunction(self) -> Node:
        left = self.negation()
        while self.keyword("AND"):
            left = Logical("AND", left, self.negation())
        return left

    def negation(self) -> Node:
        if self.keyword("NOT"):
            return Not(self.negation())
        return self.primary()

    def primary(self) -> Node:
        if self.peek().text == "(":
            saved = self.position
            try:
                self.take("(")
                inner = self.condition()
                self.take(")")
                return Group(inner)
            except _SyntaxError:
                self.position = saved  # a parenthesised operand: `(a) = :v`
        token = self.peek()
        if (
            token.kind == "name"
            and self.peek(1).text == "("
            and token.text not in CONDITION_OPERAND_FUNCTIONS
        ):
            return self.call()
        left = self.operand()
        if self.keyword("BETWEEN"):
            low = self.operand()
            if not self.keyword("AND"):
                raise self.fail()
            return Between(left, low, self.operand())
        if self.keyword("IN"):
            self.take("(")
            options = [self.operand()]
            while self.peek().text == ",":
                self.take(",")
                options.append(self.operand())
            self.take(")")
            return In(left, tuple(options))
        op = self.peek()
        if op.text not in COMPARATORS:
            raise self.fail()
        self.take()
        return Comparison(op.text, left, self.operand())

    def operand(self) -> Node:
        token = self.peek()
        if token.text == "(":
            self.take("(")
            inner = self.value()
            self.take(")")
            return Group(inner)
        if token.kind == ":":
            self.take()
            return Value(token.text)
        if token.kind == "name" and self.peek(1).text == "(":
            return self.call()
        return self.path()

    def call(self) -> Call:
        name = self.take(kind="name").text
        self.take("(")
        arguments = [self.value()]
        while self.peek().text == ",":
            self.take(",")
            arguments.append(self.value())
        self.take(")")
        return Call(name, tuple(arguments))

    def value(self) -> Node:
        """An operand; in an update, also `operand + operand` or `operand - operand`."""
        left = self.operand()
        if self.kind == UPDATE and self.peek().text in ("+", "-"):
            op = self.take().text
            return Arithmetic(op, left, self.operand())
        return left

    def path(self) -> Path:
        first = self.peek()
        if first.kind not in ("name", "#"):
            raise self.fail()
        self.take()
        parts: list[str | int] = [first.text]
        while self.peek().text in (".", "["):
            if self.take().text == ".":
                token = self.peek()
                if token.kind not in ("name", "#"):
                    raise self.fail()
                parts.append(self.take().text)
            else:
                parts.append(int(self.take(kind="index").text))
                self.take("]")
        text = self.expression[first.start : self.tokens[self.position - 1].end]
        plain = first.text if len(parts) == 1 and first.kind == "name" else None
        return Path(tuple(parts), text, plain)

    # updates: one or more sections, each at most once

    def update(self) -> tuple[Action, ...]:
        actions: list[Action] = []
        seen: set[str] = set()
        while self.peek().kind != "end":
            token = self.take(kind="keyword")
            section = token.text.upper()
            if section not in SECTIONS:
                self.position -= 1
                raise self.fail()
            if section in seen:
                raise ExpressionInvalid(
                    f'Invalid {UPDATE}: The "{section}" section can only be used once in an '
                    "update expression;"
                )
            seen.add(section)
            actions.append(self.action(section))
            while self.peek().text == ",":
                self.take(",")
                actions.append(self.action(section))
        return tuple(actions)

    def action(self, section: str) -> Action:
        path = self.path()
        if section == "SET":
            self.take("=")
            return Action(section, path, self.value())
        if section == "REMOVE":
            return Action(section, path, None)
        return Action(section, path, Value(self.take(kind=":").text))

    def projection(self) -> tuple[Path, ...]:
        paths = [self.path()]
        while self.peek().text == ",":
            self.take(",")
            paths.append(self.path())
        return tuple(paths)


# -- checks that need no placeholder's meaning ---------------------------------------------


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Group | Not):
        return (node.inner,)
    if isinstance(node, Call):
        return node.arguments
    if isinstance(node, Arithmetic | Comparison | Logical):
        return (node.left, node.right)
    if isinstance(node, Between):
        return (node.subject, node.low, node.high)
    if isinstance(node, In):
        return (node.subject, *node.options)
    return ()


def walk(node: Node) -> list[Node]:
    out = [node]
    for child in children(node):
        out.extend(walk(child))
    return out


def _check(
    kind: str, roots: list[Node], operand_functions: dict[str, int], *, conditions: bool
) -> None:
    """`roots` are conditions (`conditions`) or operands: a function at a condition's place
    is a condition function, anywhere else an operand function."""
    nodes = [node for root in roots for node in walk(root)]
    for node in nodes:
        if isinstance(node, Group) and isinstance(node.inner, Group):
            raise ExpressionInvalid(f"Invalid {kind}: The expression has redundant parentheses;")
    for node in nodes:
        if isinstance(node, Path):
            for part in node.parts:
                if isinstance(part, str) and not part.startswith("#") and is_reserved(part):
                    raise ExpressionInvalid(
                        f"Invalid {kind}: Attribute name is a reserved keyword; "
                        f"reserved keyword: {part}"
                    )
    for node in nodes:
        if isinstance(node, Call):
            as_condition = conditions and any(_is_condition_position(node, r) for r in roots)
            _check_call(kind, node, operand_functions, as_condition)


def _check_call(
    kind: str, call: Call, operand_functions: dict[str, int], as_condition: bool
) -> None:
    allowed = CONDITION_FUNCTIONS if as_condition else operand_functions
    arity = allowed.get(call.function)
    if arity is None:
        if call.function in CONDITION_FUNCTIONS or call.function in operand_functions:
            raise ExpressionInvalid(
                f"Invalid {kind}: The function is not allowed to be used this way in an "
                f"expression; function: {call.function}"
            )
        raise ExpressionInvalid(f"Invalid {kind}: Invalid function name; function: {call.function}")
    if len(call.arguments) != arity:
        raise ExpressionInvalid(
            f"Invalid {kind}: Incorrect number of operands for operator or function; "
            f"operator or function: {call.function}, number of operands: {len(call.arguments)}"
        )
    if call.function in _PATH_FIRST | _PATH_FIRST_UPDATE and not isinstance(
        call.arguments[0], Path
    ):
        raise ExpressionInvalid(
            f"Invalid {kind}: Operator or function requires a document path; "
            f"operator or function: {call.function}"
        )


def _is_condition_position(call: Call, root: Node) -> bool:
    """Whether `call` stands where a condition stands (not as an operand) under `root`."""
    if root is call:
        return True
    if isinstance(root, Group | Not):
        return _is_condition_position(call, root.inner)
    if isinstance(root, Logical):
        return _is_condition_position(call, root.left) or _is_condition_position(call, root.right)
    return False


@dataclass(frozen=True)
class Parsed:
    """An expression parsed and checked, with what binding it to a request looks at (found
    once, as the text is parsed once): the paths that use a `#placeholder`, the
    `:placeholders`, the nodes that compare a path with other paths (`a = #b` may be
    `a = a`), and the nodes whose value operands must be of certain types."""

    tree: Node | None = None  # a condition
    actions: tuple[Action, ...] = ()  # an update
    paths: tuple[Path, ...] = ()  # a projection
    named_paths: tuple[Path, ...] = ()
    values: tuple[str, ...] = ()
    distinct: tuple[Node, ...] = ()
    typed: tuple[Node, ...] = ()

    @classmethod
    def of(cls, roots: list[Node], **parts: Any) -> Parsed:
        nodes = [node for root in roots for node in walk(root)]
        return cls(
            named_paths=tuple(
                node
                for node in nodes
                if isinstance(node, Path)
                and any(isinstance(p, str) and p.startswith("#") for p in node.parts)
            ),
            values=tuple(node.placeholder for node in nodes if isinstance(node, Value)),
            distinct=tuple(node for node in nodes if _compares_paths(node)),
            typed=tuple(node for node in nodes if _types_values(node)),
            **parts,
        )


def operands(node: Node) -> tuple[str, Node, tuple[Node, ...]] | None:
    """An operator's name, its first operand and the others, for the nodes DynamoDB wants a
    first operand distinct from the rest in; else None."""
    if isinstance(node, Comparison):
        return node.op, node.left, (node.right,)
    if isinstance(node, Between):
        return "BETWEEN", node.subject, (node.low, node.high)
    if isinstance(node, In):
        return "IN", node.subject, node.options
    if isinstance(node, Call) and node.function in ("begins_with", "contains"):
        return node.function, node.arguments[0], node.arguments[1:]
    return None


def unwrapped(node: Node) -> Node:
    while isinstance(node, Group):
        node = node.inner
    return node


def _compares_paths(node: Node) -> bool:
    found = operands(node)
    if found is None:
        return False
    _, first, rest = found
    return isinstance(unwrapped(first), Path) and any(
        isinstance(unwrapped(other), Path) for other in rest
    )


def _types_values(node: Node) -> bool:
    if isinstance(node, Comparison):
        sides: tuple[Node, ...] = () if node.op in ("=", "<>") else (node.left, node.right)
    elif isinstance(node, Between):
        sides = (node.subject, node.low, node.high)
    elif isinstance(node, Call) and node.function in ("begins_with", "size"):
        sides = node.arguments
    elif isinstance(node, Arithmetic):
        sides = (node.left, node.right)
    else:
        return False
    return any(isinstance(unwrapped(side), Value) for side in sides)


@functools.lru_cache(maxsize=4096)
def parse_condition(expression: str, kind: str = CONDITION) -> Parsed:
    """A condition, filter or key condition expression, parsed and checked."""
    if not expression.strip():
        raise ExpressionInvalid(f"Invalid {kind}: The expression can not be empty;")
    parser = _Parser(expression, kind)
    tree = parser.condition()
    parser.end()
    _check(kind, [tree], CONDITION_OPERAND_FUNCTIONS, conditions=True)
    return Parsed.of([tree], tree=tree)


@functools.lru_cache(maxsize=4096)
def parse_update(expression: str) -> Parsed:
    if not expression.strip():
        raise ExpressionInvalid(f"Invalid {UPDATE}: The expression can not be empty;")
    parser = _Parser(expression, UPDATE)
    actions = parser.update()
    parser.end()
    roots: list[Node] = [action.path for action in actions]
    roots += [action.value for action in actions if action.value is not None]
    _check(UPDATE, roots, UPDATE_OPERAND_FUNCTIONS, conditions=False)
    return Parsed.of(roots, actions=actions)


@functools.lru_cache(maxsize=1024)
def parse_projection(expression: str) -> Parsed:
    if not expression.strip():
        raise ExpressionInvalid(f"Invalid {PROJECTION}: The expression can not be empty;")
    parser = _Parser(expression, PROJECTION)
    paths = parser.projection()
    parser.end()
    _check(PROJECTION, list(paths), {}, conditions=False)
    return Parsed.of(list(paths), paths=paths)


@functools.lru_cache(maxsize=4096)
def placeholders(expression: str) -> frozenset[str]:
    """Every `#name` and `:value` placeholder the expression uses."""
    return frozenset(_PLACEHOLDER.findall(expression))
