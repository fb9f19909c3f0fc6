"""CloudWatch metric math, the part the room's alarms use, to evaluate an alarm in a test.

Semantics as the CloudWatch User Guide states them ("Using math expressions with CloudWatch
metrics"): arithmetic treats a missing value as 0 and drops a data point that divides by zero;
a comparison or logical operator between two time series treats a missing value as 0 and gives
0 or 1; FILL(m, s) puts s where m has no value; IF(condition, a, b) takes a where the condition
is non-zero, b where it is 0, and drops the point where b (a time series) has none.

Supported: numbers, metric ids, + - * /, < <= > >= == !=, AND/&&, OR/||, parentheses, FILL
with a number and IF with three arguments. Anything else raises, so a test can not pass by
evaluating an expression the alarm does not have.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Series = dict[int, float]  # period start -> value; a missing period has no key
Value = Series | float

_TOKEN = re.compile(
    r"\s*(\d+(?:\.\d+)?|[a-z][A-Za-z0-9_]*|[A-Z_]+|<=|>=|==|!=|&&|\|\||[-+*/(),<>])"
)
_ARITHMETIC: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}
_COMPARISON: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_LOGICAL = {"AND": "AND", "&&": "AND", "OR": "OR", "||": "OR"}
# Binding, loosest first.
_LEVELS: tuple[tuple[str, ...], ...] = (
    ("OR", "||"),
    ("AND", "&&"),
    tuple(_COMPARISON),
    ("+", "-"),
    ("*", "/"),
)


def tokens(expression: str) -> list[str]:
    found: list[str] = []
    position = 0
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None:
            if expression[position:].strip():
                raise ValueError(f"can not read {expression[position:]!r}")
            break
        found.append(match.group(1))
        position = match.end()
    return found


@dataclass
class _Parser:
    items: list[str]
    metrics: Mapping[str, Series]
    periods: Sequence[int]
    at: int = 0

    def peek(self) -> str | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        item = self.peek()
        if item is None or (expected is not None and item != expected):
            raise ValueError(f"expected {expected or 'more'}, found {item!r}")
        self.at += 1
        return item

    def expression(self, level: int = 0) -> Value:
        if level == len(_LEVELS):
            return self.unary()
        left = self.expression(level + 1)
        while self.peek() in _LEVELS[level]:
            symbol = self.take()
            right = self.expression(level + 1)
            left = _binary(symbol, left, right, self.periods)
        return left

    def unary(self) -> Value:
        if self.peek() == "-":
            self.take()
            value = self.unary()
            return _binary("-", 0.0, value, self.periods)
        return self.primary()

    def primary(self) -> Value:
        item = self.take()
        if item == "(":
            value = self.expression()
            self.take(")")
            return value
        if re.fullmatch(r"\d+(?:\.\d+)?", item):
            return float(item)
        if item in ("FILL", "IF"):
            self.take("(")
            arguments = [self.expression()]
            while self.peek() == ",":
                self.take()
                arguments.append(self.expression())
            self.take(")")
            return _function(item, arguments, self.periods)
        if item in self.metrics:
            return dict(self.metrics[item])
        raise ValueError(f"unknown name {item!r}")


def _binary(symbol: str, left: Value, right: Value, periods: Sequence[int]) -> Value:
    if isinstance(left, float) and isinstance(right, float):
        return _apply(symbol, left, right)
    result: Series = {}
    if isinstance(left, dict) and isinstance(right, dict):
        keys = sorted(set(left) | set(right))
        pairs = [(key, left.get(key, 0.0), right.get(key, 0.0)) for key in keys]
    elif isinstance(left, dict):
        pairs = [(key, value, float(right)) for key, value in left.items()]  # type: ignore[arg-type]
    else:
        assert isinstance(right, dict)
        pairs = [(key, float(left), value) for key, value in right.items()]
    for key, a, b in pairs:
        value = _apply(symbol, a, b)
        if value == value:  # NaN: a division by zero, dropped
            result[key] = value
    return result


def _apply(symbol: str, a: float, b: float) -> float:
    if symbol in _ARITHMETIC:
        if symbol == "/" and b == 0:
            return float("nan")
        return _ARITHMETIC[symbol](a, b)
    if symbol in _COMPARISON:
        return 1.0 if _COMPARISON[symbol](a, b) else 0.0
    if _LOGICAL.get(symbol) == "AND":
        return 1.0 if (a != 0 and b != 0) else 0.0
    if _LOGICAL.get(symbol) == "OR":
        return 1.0 if (a != 0 or b != 0) else 0.0
    raise ValueError(f"unknown operator {symbol!r}")


def _function(name: str, arguments: list[Value], periods: Sequence[int]) -> Value:
    if name == "FILL":
        series, filler = arguments
        if not isinstance(series, dict) or not isinstance(filler, float):
            raise ValueError("FILL takes a time series and a number here")
        return {period: series.get(period, filler) for period in periods}
    condition, when_true, when_false = arguments
    if not isinstance(condition, dict):
        raise ValueError("IF takes a time series as its condition here")
    result: Series = {}
    for period, flag in condition.items():
        chosen = when_true if flag != 0 else when_false
        if isinstance(chosen, float):
            result[period] = chosen
        elif period in chosen:
            result[period] = chosen[period]
    return result


def evaluate(expression: str, metrics: Mapping[str, Series], periods: Sequence[int]) -> Series:
    """The expression's time series over `periods` (the alarm's evaluation range)."""
    parser = _Parser(tokens(expression), metrics, periods)
    value = parser.expression()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r}")
    if not isinstance(value, dict):
        raise ValueError("an alarm's expression must give a time series")
    return value


def alarm_fires(
    series: Series,
    periods: Sequence[int],
    *,
    threshold: float,
    evaluation_periods: int,
    datapoints_to_alarm: int,
) -> bool:
    """GreaterThanOrEqualToThreshold over the last `evaluation_periods` periods, missing data
    not breaching: ALARM when at least `datapoints_to_alarm` of them breach."""
    last = list(periods)[-evaluation_periods:]
    breaching = sum(1 for period in last if period in series and series[period] >= threshold)
    return breaching >= datapoints_to_alarm
