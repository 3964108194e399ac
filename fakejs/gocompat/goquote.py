"""Go's ``strconv`` quoting, as it shows up in nats-server's JSON error texts.

Error texts quote the offending input: ``invalid character 'é' ...`` quotes
one rune (``strconv.QuoteRune``), ``json: unknown field "a\\x7f"`` quotes a
name (``strconv.Quote``), ``invalid escape sequence `\\p` ...`` picks one of
the two forms or back-quotes.  Go works on raw bytes, so an invalid UTF-8
byte is written ``\\xff`` rather than decoded; these helpers take bytes for
that reason.
"""

from __future__ import annotations

import unicodedata

_NAMED_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}

# Go's unicode.IsSpace: the Latin-1 blanks plus the White_Space runes above U+00FF.
_SPACES = frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
    + list(range(0x2000, 0x200B))
)


# Blocks of letters and symbols added in Unicode 15.0-16.0, which Go's tables know and this
# Python's (Unicode 14) does not: an approximation of their printability, block by block.
_NEWER_PRINTABLE = (
    (0x105C0, 0x105FF),
    (0x10D40, 0x10D8F),
    (0x10EC0, 0x10EFF),
    (0x11380, 0x113FF),
    (0x11B00, 0x11B5F),
    (0x11BC0, 0x11BFF),
    (0x11F00, 0x11F5F),
    (0x13460, 0x143FF),
    (0x16100, 0x1613F),
    (0x16D40, 0x16D7F),
    (0x1CC00, 0x1CEBF),
    (0x1D2C0, 0x1D2DF),
    (0x1E030, 0x1E08F),
    (0x1E4D0, 0x1E4FF),
    (0x1E5D0, 0x1E5FF),
    (0x2EBF0, 0x2EE5F),
    (0x31350, 0x323AF),
)


def is_print(rune: int) -> bool:
    """Go's ``unicode.IsPrint``: graphic runes and the ASCII space.

    Python's notion matches Go's for every rune both Unicode versions know.
    """
    ch = chr(rune)
    if ch.isprintable():
        return True
    if unicodedata.category(ch) != "Cn":
        return False
    return any(low <= rune <= high for low, high in _NEWER_PRINTABLE)


def is_space(rune: int) -> bool:
    """Go's ``unicode.IsSpace``."""
    return rune in _SPACES


def decode_rune(data: bytes, i: int) -> tuple[int, int]:
    """Go's ``utf8.DecodeRune`` at ``i``: (rune, size); an invalid byte is (-1, 1)."""
    c = data[i]
    if c < 0x80:
        return c, 1
    for size in (2, 3, 4):
        chunk = data[i : i + size]
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) == 1:
            return ord(text), size
    return -1, 1


def _escape(rune: int, quote: int) -> str:
    if rune == quote or rune == 0x5C:
        return "\\" + chr(rune)
    if is_print(rune):
        return chr(rune)
    named = _NAMED_ESCAPES.get(rune)
    if named is not None:
        return named
    if rune < 0x20 or rune == 0x7F:
        return "\\x%02x" % rune
    if rune < 0x10000:
        return "\\u%04x" % rune
    return "\\U%08x" % rune


def quote_rune(data: bytes) -> str:
    """``strconv.QuoteRune`` of the first rune of ``data`` (``'\\xff'`` for an invalid byte)."""
    rune, _ = decode_rune(data, 0)
    if rune < 0:
        return "'\\x%02x'" % data[0]
    return "'" + _escape(rune, 0x27) + "'"


def quote(data: bytes) -> str:
    """``strconv.Quote`` of raw bytes: invalid UTF-8 bytes become ``\\xHH``."""
    out = ['"']
    i = 0
    while i < len(data):
        rune, size = decode_rune(data, i)
        out.append("\\x%02x" % data[i] if rune < 0 else _escape(rune, 0x22))
        i += size
    out.append('"')
    return "".join(out)


def quote_text(text: str) -> str:
    """``strconv.Quote`` of a decoded string."""
    return quote(text.encode("utf-8", "surrogatepass"))


def _runes(data: bytes) -> list[int]:
    runes = []
    i = 0
    while i < len(data):
        rune, size = decode_rune(data, i)
        runes.append(rune)
        i += size
    return runes


def show_invalid(what: bytes) -> str:
    """How Go's JSON errors show invalid input: one rune quoted, or the text in back-quotes or quotes."""
    runes = _runes(what)
    if len(runes) == 1:
        return quote_rune(what)
    if any(r in (-1, 0x60, 0xFFFD) or is_space(r) or not is_print(r) for r in runes):
        return quote(what)
    return "`" + what.decode("utf-8") + "`"
