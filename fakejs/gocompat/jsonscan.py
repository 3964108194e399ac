"""Go's JSON scanner: where a value ends, and the syntax error Go reports when it does not.

nats-server's decoder runs Go's scanner before decoding, so the first syntax
error wins, with Go's text (``invalid character 'x' looking for beginning of
value``) and offset.  :func:`scan_value` finds the end of one value,
:func:`scan_error` gives ``json.Unmarshal``'s verdict on a whole document;
:mod:`fakejs.gocompat.gojson` builds the decoder and encoder on them.
"""

from __future__ import annotations


def quote_char(c: int) -> str:
    """Format one input byte the way Go's scanner quotes it in errors."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    ch = chr(c)
    if ch.isprintable() and c != 0x7F and not (0x80 <= c < 0xA0) and c != 0xAD:
        return "'" + ch + "'"
    if c < 0x20 and ch in "\a\b\f\n\r\t\v":
        return (
            "'" + {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch] + "'"
        )
    if c < 0x80:
        return "'\\x%02x'" % c
    return "'\\u%04x'" % c


WHITESPACE = b" \t\r\n"


class SyntaxFailure(Exception):
    """A Go ``*json.SyntaxError``: message and offset (bytes read, bad byte included)."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class Truncated(Exception):
    """The input ended inside a value."""


def _invalid(data: bytes, i: int, context: str) -> SyntaxFailure:
    return SyntaxFailure("invalid character " + quote_char(data[i]) + " " + context, i + 1)


def skip_space(data: bytes, i: int) -> int:
    n = len(data)
    while i < n and data[i] in WHITESPACE:
        i += 1
    return i


def scan_value(data: bytes, i: int) -> int:
    """Scan one JSON value starting at ``i`` (no leading blanks); return its end.

    Raises :class:`SyntaxFailure` with Go's message and offset, or
    :class:`Truncated` when the input ends inside the value.
    """
    n = len(data)
    stack: list[int] = []  # 0x7B for objects, 0x5B for arrays
    expect = "value"
    while True:
        if expect != "value":
            i = skip_space(data, i)
        if i >= n:
            raise Truncated()
        c = data[i]
        if expect == "value" or expect == "value-or-close":
            if expect == "value-or-close" and c == 0x5D:
                stack.pop()
                i += 1
            elif c == 0x7B:
                stack.append(0x7B)
                i += 1
                expect = "key-or-close"
                continue
            elif c == 0x5B:
                stack.append(0x5B)
                i += 1
                expect = "value-or-close"
                i = skip_space(data, i)
                continue
            else:
                i = _scan_scalar(data, i, "looking for beginning of value")
        elif expect == "key-or-close" or expect == "key":
            if expect == "key-or-close" and c == 0x7D:
                stack.pop()
                i += 1
            elif c == 0x22:
                i = _scan_string(data, i)
                expect = "colon"
                continue
            else:
                raise _invalid(data, i, "looking for beginning of object key string")
        elif expect == "colon":
            if c != 0x3A:
                raise _invalid(data, i, "after object key")
            i = skip_space(data, i + 1)
            expect = "value"
            continue
        else:  # after a value inside a container
            i, expect = _after_element(data, i, c, stack[-1])
            if expect != "closed":
                continue
            stack.pop()
        # a value (scalar or container) just ended
        if not stack:
            return i
        expect = "after"


def _after_element(data: bytes, i: int, c: int, container: int) -> tuple[int, str]:
    """After a value inside an object or array: a comma (what comes next) or the container's close."""
    if container == 0x7B:
        if c == 0x2C:
            return i + 1, "key"
        if c != 0x7D:
            raise _invalid(data, i, "after object key:value pair")
    else:
        if c == 0x2C:
            return skip_space(data, i + 1), "value"
        if c != 0x5D:
            raise _invalid(data, i, "after array element")
    return i + 1, "closed"


def _scan_scalar(data: bytes, i: int, context: str) -> int:
    c = data[i]
    if c == 0x22:
        return _scan_string(data, i)
    if c == 0x2D or 0x30 <= c <= 0x39:
        return _scan_number(data, i)
    for word in (b"true", b"false", b"null"):
        if c == word[0]:
            return _scan_literal(data, i, word)
    raise _invalid(data, i, context)


def _scan_string(data: bytes, i: int) -> int:
    n = len(data)
    i += 1
    while i < n:
        c = data[i]
        if c == 0x22:
            return i + 1
        if c == 0x5C:
            i += 1
            if i >= n:
                raise Truncated()
            e = data[i]
            if e in b'"\\/bfnrt':
                i += 1
                continue
            if e != 0x75:
                raise _invalid(data, i, "in string escape code")
            i += 1
            for _ in range(4):
                if i >= n:
                    raise Truncated()
                h = data[i]
                if not (0x30 <= h <= 0x39 or 0x41 <= h <= 0x46 or 0x61 <= h <= 0x66):
                    raise _invalid(data, i, "in \\u hexadecimal character escape")
                i += 1
            continue
        if c < 0x20:
            raise _invalid(data, i, "in string literal")
        i += 1
    raise Truncated()


def _digits(data: bytes, i: int) -> int:
    n = len(data)
    while i < n and 0x30 <= data[i] <= 0x39:
        i += 1
    return i


def _scan_number(data: bytes, i: int) -> int:
    n = len(data)
    if data[i] == 0x2D:
        i += 1
        if i >= n:
            raise Truncated()
        if not 0x30 <= data[i] <= 0x39:
            raise _invalid(data, i, "in numeric literal")
    i = i + 1 if data[i] == 0x30 else _digits(data, i)
    if i < n and data[i] == 0x2E:
        i += 1
        if i >= n:
            raise Truncated()
        if not 0x30 <= data[i] <= 0x39:
            raise _invalid(data, i, "after decimal point in numeric literal")
        i = _digits(data, i)
    if i < n and data[i] in b"eE":
        i += 1
        if i < n and data[i] in b"+-":
            i += 1
        if i >= n:
            raise Truncated()
        if not 0x30 <= data[i] <= 0x39:
            raise _invalid(data, i, "in exponent of numeric literal")
        i = _digits(data, i)
    return i


def _scan_literal(data: bytes, i: int, word: bytes) -> int:
    n = len(data)
    for k in range(1, len(word)):
        if i + k >= n:
            raise Truncated()
        if data[i + k] != word[k]:
            raise _invalid(data, i + k, "in literal %s (expecting %s)" % (word.decode(), quote_char(word[k])))
    return i + len(word)


def scan_error(data: bytes) -> str | None:
    """Go's ``json.Unmarshal`` verdict on ``data``: its error message, or ``None``."""
    try:
        i = skip_space(data, 0)
        if i >= len(data):
            raise Truncated()
        end = scan_value(data, i)
        rest = skip_space(data, end)
        if rest < len(data):
            raise _invalid(data, rest, "after top-level value")
    except SyntaxFailure as exc:
        return exc.message
    except Truncated:
        return "unexpected end of JSON input"
    return None
