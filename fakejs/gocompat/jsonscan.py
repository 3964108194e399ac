"""Go's JSON reader (``encoding/json`` v1 running on the v2 ``jsontext`` engine), iteratively.

nats-server 2.15.1 is built with Go's JSON v2 engine behind the v1 API, so a
syntax error reads like ``invalid escape sequence `\\p` in string`` or
``invalid character 'é' looking for beginning of object key string``; the
offending rune (or escape) is quoted whole, and the error's offset is the
position just past it.  Nesting deeper than 10,000 arrays and objects fails
with ``exceeded max depth``.  Invalid UTF-8 inside strings is accepted and
read as U+FFFD, one per bad byte, as are escaped lone surrogates.

:func:`parse_value` reads one value into :mod:`~fakejs.gocompat.jsonvalue`
types with an explicit stack, never recursing, so the deepest document Go
accepts parses under any recursion limit.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from typing import Any

from fakejs.gocompat.goquote import decode_rune, quote_rune, show_invalid
from fakejs.gocompat.jsonvalue import GoNumber, GoObject, parse_int

MAX_DEPTH = 10_000
WHITESPACE = b" \t\r\n"

_REPLACE = "gojson-per-byte"


def _per_byte(exc: UnicodeError) -> tuple[str, int]:
    """Go reads each byte of an invalid UTF-8 sequence as its own U+FFFD."""
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd" * (exc.end - exc.start), exc.end


codecs.register_error(_REPLACE, _per_byte)

_PLAIN = re.compile(rb'[^"\\\x00-\x1f]*')
_SPACE = re.compile(rb"[ \t\r\n]*")
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_HEX = frozenset(b"0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}


class SyntaxFailure(Exception):
    """A Go syntax error: its message and offset (the position just past the offending text).

    ``at`` is where the offending text starts; ``cut``, when given, tells
    the same failure as Go reports it when its read buffer ends at a given
    index inside the offending rune.
    """

    def __init__(
        self, message: str, offset: int, at: int | None = None, cut: Callable[[int], SyntaxFailure] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.at = offset - 1 if at is None else at
        self.cut = cut

    def seen_up_to(self, end: int) -> SyntaxFailure:
        """This failure as a reader that holds the input only up to ``end`` reports it."""
        if self.cut is None or self.offset <= end:
            return self
        return self.cut(end)


class Truncated(Exception):
    """The input ended inside a value."""


def invalid_character(data: bytes, i: int, where: str) -> SyntaxFailure:
    """``invalid character 'X' <where>`` for the rune (or invalid byte) at ``i``."""
    _, size = decode_rune(data, i)
    message = f"invalid character {quote_rune(data[i : i + size])} {where}"
    return SyntaxFailure(message, i + size, i, lambda end: invalid_character(data[:end], i, where))


def skip_space(data: bytes, i: int) -> int:
    match = _SPACE.match(data, i)
    return match.end() if match else i


def _decode_run(data: bytes) -> str:
    return data.decode("utf-8", _REPLACE)


def _escape_failure(data: bytes, i: int, what: bytes) -> SyntaxFailure:
    return SyntaxFailure(f"invalid escape sequence {show_invalid(what)} in string", i + len(what))


def _maybe_unicode_escape(tail: bytes) -> bool:
    """Whether ``tail`` (shorter than six bytes) could still grow into a ``\\uXXXX`` escape."""
    for k, c in enumerate(tail):
        if (k == 0 and c != 0x5C) or (k == 1 and c != 0x75) or (k >= 2 and c not in _HEX):
            return False
    return True


def _unicode_escape(data: bytes, i: int) -> int:
    """The code unit of the ``\\uXXXX`` escape at ``i`` (Go's checks and errors)."""
    if len(data) < i + 6:
        if _maybe_unicode_escape(data[i:]):
            raise Truncated()
        raise _escape_failure(data, i, data[i:])
    digits = data[i + 2 : i + 6]
    if not all(c in _HEX for c in digits):
        raise _escape_failure(data, i, data[i : i + 6])
    return int(digits, 16)


def _low_surrogate_at(data: bytes, i: int) -> int | None:
    """The low surrogate escaped at ``i``, if one is there (it pairs with a preceding high one)."""
    if data[i : i + 2] != b"\\u" or len(data) < i + 6:
        return None
    digits = data[i + 2 : i + 6]
    if not all(c in _HEX for c in digits):
        return None
    unit = int(digits, 16)
    return unit if 0xDC00 <= unit <= 0xDFFF else None


def _escape(data: bytes, i: int, parts: list[str]) -> int:
    """Decode the escape at ``i`` into ``parts``; return the index after it."""
    if i + 1 >= len(data):
        raise Truncated()
    simple = _SIMPLE_ESCAPES.get(data[i + 1])
    if simple is not None:
        parts.append(simple)
        return i + 2
    if data[i + 1] != 0x75:
        raise _escape_failure(data, i, data[i : i + 2])
    unit = _unicode_escape(data, i)
    i += 6
    if 0xD800 <= unit <= 0xDBFF:
        low = _low_surrogate_at(data, i)
        if low is not None:
            parts.append(chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)))
            return i + 6
        parts.append("\ufffd")
    elif 0xDC00 <= unit <= 0xDFFF:
        parts.append("\ufffd")
    else:
        parts.append(chr(unit))
    return i


def parse_string(data: bytes, i: int) -> tuple[str, int]:
    """The string whose opening quote is at ``i``, and the index after its closing quote."""
    n = len(data)
    i += 1
    match = _PLAIN.match(data, i)
    end = match.end() if match else i
    if end < n and data[end] == 0x22:
        return _decode_run(data[i:end]), end + 1
    parts: list[str] = []
    while True:
        parts.append(_decode_run(data[i:end]))
        if end >= n:
            raise Truncated()
        c = data[end]
        if c == 0x22:
            return "".join(parts), end + 1
        if c == 0x5C:
            i = _escape(data, end, parts)
        else:
            raise invalid_character(data, end, "in string")
        match = _PLAIN.match(data, i)
        end = match.end() if match else i


def _parse_number(data: bytes, i: int) -> tuple[Any, int]:
    match = _NUMBER.match(data, i)
    end = match.end() if match else i
    if (end < len(data) and data[end] in b".eE+-0123456789") or match is None:
        _check_number(data, i)
    text = data[i:end].decode("ascii")
    if match is not None and (match.group(1) or match.group(2)):
        return GoNumber(text), end
    return parse_int(text), end


def _digits(data: bytes, i: int) -> int:
    """Index after a required run of digits at ``i`` (Go's errors when there is none)."""
    if i >= len(data):
        raise Truncated()
    if not 0x30 <= data[i] <= 0x39:
        raise invalid_character(data, i, "in numeric literal")
    while i < len(data) and 0x30 <= data[i] <= 0x39:
        i += 1
    return i


def _check_number(data: bytes, i: int) -> None:
    """Raise the error Go reports for the malformed (or cut short) number at ``i``, if any."""
    n = len(data)
    if data[i] == 0x2D:
        i += 1
    if i < n and data[i] == 0x30:
        i += 1
    else:
        i = _digits(data, i)
    if i < n and data[i] == 0x2E:
        i = _digits(data, i + 1)
    if i < n and data[i] in b"eE":
        i += 1
        if i < n and data[i] in b"+-":
            i += 1
        _digits(data, i)


def _parse_literal(data: bytes, i: int, word: bytes, value: Any) -> tuple[Any, int]:
    for k in range(len(word)):
        if i + k >= len(data):
            raise Truncated()
        if data[i + k] != word[k]:
            where = f"in literal {word.decode()} (expecting {quote_rune(word[k : k + 1])})"
            raise invalid_character(data, i + k, where)
    return value, i + len(word)


_LITERALS = {0x74: (b"true", True), 0x66: (b"false", False), 0x6E: (b"null", None)}


def parse_scalar(data: bytes, i: int) -> tuple[Any, int]:
    """A string, number or literal starting at ``i``."""
    c = data[i]
    if c == 0x22:
        return parse_string(data, i)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return _parse_number(data, i)
    literal = _LITERALS.get(c)
    if literal is not None:
        return _parse_literal(data, i, *literal)
    raise invalid_character(data, i, "looking for beginning of value")


def _object_key(data: bytes, i: int) -> tuple[str, int]:
    """The key at ``i`` and the index of the value after its colon."""
    if data[i] != 0x22:
        raise invalid_character(data, i, "looking for beginning of object key string")
    key, i = parse_string(data, i)
    i = skip_space(data, i)
    if i >= len(data):
        raise Truncated()
    if data[i] != 0x3A:
        raise invalid_character(data, i, "after object key")
    i = skip_space(data, i + 1)
    if i >= len(data):
        raise Truncated()
    return key, i


def parse_value(data: bytes, i: int) -> tuple[Any, int]:
    """Parse the value starting at ``i`` (a non-blank byte); return it and the index after it.

    Each object also records where its member values lie in ``data``
    (``GoObject.spans``): types with their own ``UnmarshalJSON`` get the raw
    text.  Raises :class:`SyntaxFailure` or :class:`Truncated`.
    """
    n = len(data)
    stack: list[list[Any]] = []  # open containers: GoObject or list
    keys: list[str] = []  # the pending key of each open container ("" for arrays)
    starts: list[int] = []  # where each open container began
    while True:
        start = i
        c = data[i]
        if c == 0x7B or c == 0x5B:
            if len(stack) >= MAX_DEPTH:
                raise SyntaxFailure("exceeded max depth", i + 1)
            i = skip_space(data, i + 1)
            if i >= n:
                raise Truncated()
            container: list[Any] = _new_object() if c == 0x7B else []
            if data[i] != (0x7D if c == 0x7B else 0x5D):
                stack.append(container)
                starts.append(start)
                if c == 0x7B:
                    key, i = _object_key(data, i)
                    keys.append(key)
                else:
                    keys.append("")
                continue
            value: Any = container
            i += 1
        else:
            value, i = parse_scalar(data, i)
        while stack:
            i, value, start = _after_value(data, i, stack, keys, starts, (value, start))
            if value is _MORE:
                break
        else:
            return value, i


_MORE = object()


def _new_object() -> GoObject:
    obj = GoObject()
    obj.spans = []
    return obj


def _after_value(
    data: bytes, i: int, stack: list[list[Any]], keys: list[str], starts: list[int], done: tuple[Any, int]
) -> tuple[int, Any, int]:
    """Store the value just read (and where it began) in the innermost container; read what follows.

    Returns the index of the next value to read and ``_MORE``, or -- when
    the container closed -- the index after it, the container and its start.
    """
    value, start = done
    parent = stack[-1]
    if isinstance(parent, GoObject):
        parent.append((keys[-1], value))
        assert parent.spans is not None
        parent.spans.append((start, i))
    else:
        parent.append(value)
    i = skip_space(data, i)
    if i >= len(data):
        raise Truncated()
    c = data[i]
    if c == 0x2C:
        i = skip_space(data, i + 1)
        if i >= len(data):
            raise Truncated()
        if isinstance(parent, GoObject):
            keys[-1], i = _object_key(data, i)
        return i, _MORE, 0
    if c == (0x7D if isinstance(parent, GoObject) else 0x5D):
        keys.pop()
        return i + 1, stack.pop(), starts.pop()
    where = "after object key:value pair" if isinstance(parent, GoObject) else "after array element"
    raise invalid_character(data, i, where)
