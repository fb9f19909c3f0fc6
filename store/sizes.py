"""What DynamoDB counts in bytes: an item's size, and the limits the store holds requests to.

An item's size is the sum of its attribute names' and values' sizes, as the DynamoDB
Developer Guide's "DynamoDB item sizes and formats" gives them
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
a string its UTF-8 bytes, a binary its raw bytes, a boolean or null 1 byte, a list or map
3 bytes plus 1 byte per element plus the elements (a map's keys counted as names), a set the
sum of its members. A number is "approximately 1 byte per two significant digits + 1 byte":
exactly, as DynamoDB Local measures it (tests/functional/store finds each size at the 400 KB
limit), 1 byte plus one per pair of digits counted from the decimal point (leading and
trailing zero pairs dropped), plus 1 for a negative number.

The limits are the Developer Guide's "Quotas in Amazon DynamoDB"
(https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html):
an item of at most 400 KB, a partition key value of at most 2,048 bytes and a sort key value
of at most 1,024 bytes (an index's keys too), and a Query or Scan page of at most 1 MB of data
read ("Query" and "Scan" in the API reference: the page ends with the item that reaches it).
"""

from __future__ import annotations

import base64
import functools
from typing import Any

MAX_ITEM_BYTES = 400 * 1024
MAX_PARTITION_KEY_BYTES = 2048
MAX_SORT_KEY_BYTES = 1024
PAGE_BYTES = 1024 * 1024
_CONTAINER_BYTES = 3  # a list or a map, empty or not
_ELEMENT_BYTES = 1  # each element of a list or a map


def item_size(item: dict[str, dict[str, Any]]) -> int:
    # Every write is measured: names, strings and numbers, the room's usual values, inline
    # (text_size's rule, without a call for each).
    total = 0
    for name, value in item.items():
        total += len(name) if name.isascii() else len(name.encode("utf-8"))
        ((kind, content),) = value.items()
        if kind == "S":
            total += len(content) if content.isascii() else len(content.encode("utf-8"))
        elif kind == "N":
            total += number_size(content)
        else:
            total += value_size(value)
    return total


def text_size(text: str) -> int:
    """A string's UTF-8 bytes."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def value_size(value: dict[str, Any]) -> int:
    """The bytes of one attribute value (without its name), in the wire format."""
    ((kind, content),) = value.items()
    if kind == "S":
        return text_size(content)
    if kind == "N":
        return number_size(content)
    if kind == "B":
        return len(base64.b64decode(content))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(member.encode("utf-8")) for member in content)
    if kind == "NS":
        return sum(number_size(member) for member in content)
    if kind == "BS":
        return sum(len(base64.b64decode(member)) for member in content)
    if kind == "L":
        return _CONTAINER_BYTES + sum(_ELEMENT_BYTES + value_size(v) for v in content)
    if kind == "M":
        return _CONTAINER_BYTES + sum(
            _ELEMENT_BYTES + len(name.encode("utf-8")) + value_size(v)
            for name, v in content.items()
        )
    raise ValueError(f"not an attribute value type: {kind}")


@functools.lru_cache(maxsize=1 << 16)  # the room writes the same times and counts again and again
def number_size(text: str) -> int:
    """A number's bytes, from its normalised text (no exponent, as the store keeps numbers):
    its digits in pairs from the decimal point (base 100), without leading or trailing zero
    pairs, one byte each, plus one for the exponent and one more for a negative number."""
    negative = text.startswith("-")
    whole, _, fraction = (text[1:] if negative else text).partition(".")
    # Pairs line up on the decimal point: pad the whole part on the left, the fraction on
    # the right, and count the pairs from the first nonzero digit's to the last one's.
    digits = ("0" * (len(whole) % 2)) + whole + fraction + ("0" * (len(fraction) % 2))
    first = len(digits) - len(digits.lstrip("0"))
    if first == len(digits):
        return 1  # zero
    last = len(digits.rstrip("0")) - 1
    return 1 + last // 2 - first // 2 + 1 + (1 if negative else 0)
