"""JSON as nats-server (Go's ``encoding/json``) reads and writes it.

Clients see Go's JSON behaviour in two places: error descriptions such as
``invalid JSON: invalid character 'x' looking for beginning of value`` and
the exact bytes of API replies (compact, ``<>&`` escaped).  Python's
``json`` module differs on both counts, so this module supplies:

* :func:`parse` -- ``json.Unmarshal``'s reading of one document, objects kept
  as :class:`~fakejs.gocompat.jsonvalue.GoObject` (members in order, duplicates
  included) for typed decoding; :func:`loads` gives plain Python values;
* :func:`read_stream` -- ``json.Decoder``'s reading of a stream of values;
* :func:`decode` / :func:`decode_request` -- Go-style decoding into a
  :class:`Struct` (see :mod:`fakejs.gocompat.gostruct`);
* :func:`dumps` -- compact output escaped the way ``json.Marshal`` does.

Parsing has a fast path: a shallow document that Python's C decoder reads
without complaint is read by it; anything deep, odd or broken goes through
the iterative reader of :mod:`fakejs.gocompat.jsonscan`, which gives Go's
exact verdict.  Both produce the same values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from fakejs.gocompat.gostruct import Decoder, Field, NeedSpans, Struct, is_object
from fakejs.gocompat.jsonscan import (
    SyntaxFailure,
    Truncated,
    invalid_character,
    parse_value,
    skip_space,
)
from fakejs.gocompat.jsonvalue import GoJSONError, GoNumber, GoObject, kind, parse_int, to_plain
from fakejs.gocompat.jsonwindow import DecoderWindow

__all__ = [
    "Field",
    "GoJSONError",
    "GoObject",
    "Struct",
    "decode",
    "decode_request",
    "dumps",
    "loads",
    "parse",
    "read_stream",
    "unmarshal",
]

# Documents with more brackets than this skip the C decoder, which recurses per level.
FAST_PATH_MAX_BRACKETS = 200
NUMBER_START = frozenset(b"-0123456789")
# An escaped surrogate: Go reads a lone one as U+FFFD, Python keeps it.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


def _no_constants(name: str) -> Any:
    raise ValueError(name)


_decoder = json.JSONDecoder(
    object_pairs_hook=GoObject, parse_float=GoNumber, parse_int=parse_int, parse_constant=_no_constants
)
_SLOW = object()


def _as_bytes(data: bytes | bytearray | memoryview | str) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8", "surrogateescape")
    return bytes(data)


def _fast(data: bytes) -> Any:
    """The document read by Python's C decoder, or ``_SLOW`` when only the careful reader will do."""
    if data.count(b"[") + data.count(b"{") > FAST_PATH_MAX_BRACKETS or _ESCAPED_SURROGATE.search(data):
        return _SLOW
    try:
        return _decoder.decode(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return _SLOW


def parse(data: bytes | bytearray | memoryview | str, careful: bool = False) -> Any:
    """Read one document as ``json.Unmarshal`` does; raise :class:`GoJSONError` with Go's text.

    ``careful`` skips the fast path, so objects know where their values lie.
    """
    raw = _as_bytes(data)
    value = _SLOW if careful else _fast(raw)
    if value is not _SLOW:
        return value
    try:
        i = skip_space(raw, 0)
        if i >= len(raw):
            raise Truncated()
        value, end = parse_value(raw, i)
        rest = skip_space(raw, end)
        if rest < len(raw):
            raise invalid_character(raw, rest, "after top-level value")
    except SyntaxFailure as exc:
        raise GoJSONError(exc.message) from None
    except Truncated:
        raise GoJSONError("unexpected end of JSON input") from None
    return value


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Like :func:`parse`, with objects as plain dicts (the last duplicate wins, as in a Go map)."""
    return to_plain(parse(data))


def read_stream(data: bytes | bytearray | memoryview | str, careful: bool = False) -> Iterator[Any]:
    """Go's ``json.Decoder`` over ``data``: each top-level value in turn.

    A value is only read when the previous one has been handled, as Go does:
    a problem decoding it comes before a syntax error further on.  Syntax
    errors name their offset (``... at offset 15``, as nats-server reports
    them) and see only what Go's read buffer holds (see
    :mod:`~fakejs.gocompat.jsonwindow`); a value cut short is ``unexpected EOF``.
    """
    raw = _as_bytes(data)
    whole = _SLOW if careful else _fast(raw)
    if whole is not _SLOW:
        yield whole
        return
    window = DecoderWindow(len(raw))
    i = 0
    while True:
        i = skip_space(raw, i)
        window.end_seeing(i)
        if i >= len(raw):
            return
        try:
            value, end = parse_value(raw, i)
        except SyntaxFailure as exc:
            seen = exc.seen_up_to(window.end_seeing(exc.at))
            raise GoJSONError(f"{seen.message} at offset {seen.offset}") from None
        except Truncated:
            raise GoJSONError("unexpected EOF") from None
        window.end_seeing(end if raw[i] in NUMBER_START else end - 1)  # a number's end is seen past it
        window.value_read(end)
        i = end
        yield value


_GO_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


_SURROGATE = re.compile("[\ud800-\udfff]")

# ``json.dumps`` with these arguments builds an encoder on every call; one kept does the same writing.
_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def dumps(value: Any) -> str:
    """Serialise like Go's ``json.Marshal``: compact, HTML-safe escapes, invalid UTF-8 as U+FFFD."""
    text = _encoder.encode(value)
    if not text.isascii() and _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_GO_ESCAPES)
    return text


def _decode_into(schema: Struct, value: Any, strict: bool, out: dict[str, Any], source: bytes | None) -> None:
    if value is None:
        return
    if not is_object(value):
        raise GoJSONError(f"json: cannot unmarshal {kind(value)} into Go value of type {schema.type_name}")
    d = Decoder(schema.go_name, strict, source)
    d.struct(schema, value, [], out)
    if d.first_error is not None:
        raise GoJSONError(d.first_error)


def decode(schema: Struct, value: Any, strict: bool = False) -> dict[str, Any]:
    """Decode a parsed JSON value into ``schema`` the way Go would.

    Returns the assigned fields (by canonical JSON name).  Raises
    :class:`GoJSONError` with Go's message on the first type mismatch (or
    unknown field when ``strict``, like ``DisallowUnknownFields``).
    """
    out: dict[str, Any] = {}
    _decode_into(schema, value, strict, out, None)
    return out


def unmarshal(schema: Struct, data: bytes | bytearray | memoryview | str, strict: bool = False) -> dict[str, Any]:
    """``json.Unmarshal`` of a document into ``schema``: :func:`parse` then :func:`decode`."""
    raw = _as_bytes(data)
    for careful in (False, True):
        out: dict[str, Any] = {}
        try:
            _decode_into(schema, parse(raw, careful), strict, out, raw)
        except NeedSpans:
            continue
        return out
    raise AssertionError("the careful reader keeps every span")


def decode_request(schema: Struct, data: bytes, strict: bool = True) -> dict[str, Any]:
    """Decode an API request body the way nats-server does.

    nats-server feeds the body to a ``json.Decoder`` that rejects unknown
    fields and decodes value after value into the same struct, so ``{"a":1}
    {"a":2}`` is accepted (the later value wins) and an empty body decodes
    to nothing.
    """
    whole = _fast(data if type(data) is bytes else _as_bytes(data))
    if whole is not _SLOW:  # one value read at once (most requests): read_stream's first step, without the generator
        out: dict[str, Any] = {}
        try:
            _decode_into(schema, whole, strict, out, data)
            return out
        except NeedSpans:
            pass
    for careful in (False, True):
        out = {}
        try:
            for value in read_stream(data, careful):
                _decode_into(schema, value, strict, out, data)
        except NeedSpans:
            continue
        return out
    raise AssertionError("the careful reader keeps every span")
