"""The values a Go-faithful JSON parse produces.

Go decodes an object member by member into its destination, in document
order, so duplicate keys, their order and the way a key was written all
matter (the last match wins, the first type error is the one reported and it
names the key as written).  A Python ``dict`` loses all of that, so objects
are parsed into :class:`GoObject`, a list of ``(key, value)`` pairs.

Numbers keep what Go's messages need: :class:`GoNumber` keeps the literal of
a number written with a fraction or exponent (``number 1e3``) and
:class:`NegativeZero` tells ``-0`` (which an unsigned field refuses) from ``0``.
"""

from __future__ import annotations

import json
from typing import Any


class GoJSONError(ValueError):
    """A JSON error carrying Go's message text."""


class GoObject(list[tuple[str, Any]]):
    """A JSON object as written: its members in document order, duplicates included.

    ``spans`` -- where each member's value lies in the document -- is known
    when the careful reader built the object (``None`` from the fast path).
    """

    spans: list[tuple[int, int]] | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """The value of the last member named exactly ``key`` (what Go's ``map[string]any`` keeps)."""
        found = default
        for name, value in self:
            if name == key:
                found = value
        return found


class GoNumber(float):
    """A JSON number written with a fraction or exponent; keeps its text for Go's messages."""

    text: str

    def __new__(cls, text: str) -> GoNumber:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


class NegativeZero(int):
    """The integer literal ``-0``: zero for signed fields, a type error for unsigned ones."""

    text = "-0"

    def __new__(cls) -> NegativeZero:
        return super().__new__(cls, 0)


def parse_int(text: str) -> int:
    """Integer literals as Python ints, except ``-0`` which keeps its sign as a marker."""
    return NegativeZero() if text == "-0" else int(text)


def number_text(value: int | float) -> str:
    """A number's JSON literal, as Go quotes it in ``cannot unmarshal number X`` messages."""
    if isinstance(value, (GoNumber, NegativeZero)):
        return value.text
    if isinstance(value, float):
        return repr(value)
    return str(value)


def kind(value: Any) -> str:
    """The JSON kind Go names in type errors (``number``, ``string``, ``object``...)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (GoObject, dict)):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null"


def to_plain(value: Any) -> Any:
    """What Go's ``interface{}`` would hold: objects become dicts (last duplicate wins).

    Iterative, so a value nested ten thousand levels deep converts without
    touching Python's recursion limit.
    """
    if not isinstance(value, list):
        return value
    root: list[Any] = [None]
    # (source container, destination container, key or index in the destination's parent)
    work: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while work:
        source, parent, slot = work.pop()
        if isinstance(source, GoObject):
            target: Any = dict(source)
            parent[slot] = target
            for name, item in target.items():
                if isinstance(item, list):
                    work.append((item, target, name))
        else:
            target = list(source)
            parent[slot] = target
            for index, item in enumerate(source):
                if isinstance(item, list):
                    work.append((item, target, index))
    return root[0]


class RawJSON:
    """A member value as a type with its own ``UnmarshalJSON`` receives it: the raw text, and its parse."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any) -> None:
        self.text = text
        self.value = value

    def __repr__(self) -> str:
        return f"RawJSON({self.text!r})"


def plain_value(value: Any) -> Any:
    """The decoded value of a :class:`RawJSON` (anything else as it is)."""
    return to_plain(value.value) if isinstance(value, RawJSON) else value


def raw_text(value: Any) -> str:
    """The JSON text of a :class:`RawJSON` as written, or of a plain value re-serialised compactly."""
    if isinstance(value, RawJSON):
        return value.text
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def canonical_text(value: Any) -> str:
    """The text a scalar value was necessarily written as, when the document has no escapes."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_text(value)
    return json.dumps(to_plain(value), ensure_ascii=False, separators=(",", ":"))
