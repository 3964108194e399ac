"""JSON as nats-server (Go's ``encoding/json``) reads and writes it.

Clients see Go's JSON behaviour in two places: error descriptions such as
``invalid JSON: invalid character 'x' looking for beginning of value`` and
the exact bytes of API replies (compact, ``<>&`` escaped).  Python's
``json`` module differs on both counts, so this module supplies:

* :func:`loads` -- parse bytes, raising :class:`GoJSONError` whose text is
  the message Go's scanner would give for the same input;
* :func:`dumps` -- compact output escaped the way ``json.Marshal`` does;
* :class:`Struct` / :func:`decode` -- Go-style decoding of a parsed value into
  a typed field table: keys match case-insensitively, ``null`` leaves a
  field alone, unknown keys are ignored, and type mismatches produce Go's
  ``json: cannot unmarshal ...`` message (the first one wins, as in Go).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["GoJSONError", "loads", "dumps", "Struct", "Field", "decode", "quote_char"]


class GoJSONError(ValueError):
    """A JSON error carrying Go's message text."""


def _no_constants(name: str) -> Any:
    raise ValueError(name)


class GoNumber(float):
    """A JSON number written with a fraction or exponent; keeps its text.

    Go reports the literal (``number 1e3``) when such a number does not fit
    an integer field, so the text is kept next to the value.
    """

    text: str

    def __new__(cls, text: str) -> "GoNumber":
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


_decoder = json.JSONDecoder(parse_constant=_no_constants, parse_float=GoNumber)


def loads(data: bytes | str) -> Any:
    """Parse JSON like Go's ``json.Unmarshal`` into ``interface{}``-ish values.

    Numbers keep Python's int/float distinction so typed decoding can tell
    ``1`` from ``1.5``; a syntax error raises :class:`GoJSONError` with Go's
    exact message.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    else:
        text = data
        raw = data.encode("utf-8", "surrogateescape")
    if text is not None:
        try:
            return _decoder.decode(text)
        except (ValueError, RecursionError):
            pass
    error = scan_error(raw)
    if error is None:
        # Valid for Go but not for Python: invalid UTF-8 inside strings,
        # which Go replaces with U+FFFD.
        return _decoder.decode(raw.decode("utf-8", "replace"))
    raise GoJSONError(error)


_GO_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def dumps(value: Any) -> str:
    """Serialise like Go's ``json.Marshal``: compact, HTML-safe escapes."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_GO_ESCAPES)
    return text


# ---------------------------------------------------------------------------
# Go's scanner, reduced to what is needed to name the first syntax error.


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
        return "'" + {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[ch] + "'"
    if c < 0x80:
        return "'\\x%02x'" % c
    return "'\\u%04x'" % c


_WS = b" \t\r\n"


def scan_error(data: bytes) -> str | None:
    """Return Go's error message for ``data``, or ``None`` if it is valid."""
    stack: list[str] = []  # "obj-key", "obj-value", "arr"
    i = 0
    n = len(data)

    def err(c: int, context: str) -> str:
        return "invalid character " + quote_char(c) + " " + context

    def skip_ws(j: int) -> int:
        while j < n and data[j] in _WS:
            j += 1
        return j

    def scan_string(j: int) -> tuple[int, str | None]:
        # data[j] is the opening quote
        j += 1
        while j < n:
            c = data[j]
            if c == 0x22:
                return j + 1, None
            if c == 0x5C:
                j += 1
                if j >= n:
                    return j, "eof"
                e = data[j]
                if e in b'"\\/bfnrt':
                    j += 1
                    continue
                if e == 0x75:  # u
                    j += 1
                    for _ in range(4):
                        if j >= n:
                            return j, "eof"
                        h = data[j]
                        if not (0x30 <= h <= 0x39 or 0x41 <= h <= 0x46 or 0x61 <= h <= 0x66):
                            return j, err(h, "in \\u hexadecimal character escape")
                        j += 1
                    continue
                return j, err(e, "in string escape code")
            if c < 0x20:
                return j, err(c, "in string literal")
            j += 1
        return j, "eof"

    def scan_number(j: int) -> tuple[int, str | None]:
        if data[j] == 0x2D:
            j += 1
            if j >= n:
                return j, "eof"
            c = data[j]
            if not (0x30 <= c <= 0x39):
                return j, err(c, "in numeric literal")
        if data[j] == 0x30:
            j += 1
        else:
            while j < n and 0x30 <= data[j] <= 0x39:
                j += 1
        if j < n and data[j] == 0x2E:
            j += 1
            if j >= n:
                return j, "eof"
            if not (0x30 <= data[j] <= 0x39):
                return j, err(data[j], "after decimal point in numeric literal")
            while j < n and 0x30 <= data[j] <= 0x39:
                j += 1
        if j < n and data[j] in b"eE":
            j += 1
            if j < n and data[j] in b"+-":
                j += 1
            if j >= n:
                return j, "eof"
            if not (0x30 <= data[j] <= 0x39):
                return j, err(data[j], "in exponent of numeric literal")
            while j < n and 0x30 <= data[j] <= 0x39:
                j += 1
        return j, None

    def scan_literal(j: int, word: bytes) -> tuple[int, str | None]:
        for k in range(1, len(word)):
            if j + k >= n:
                return j + k, "eof"
            if data[j + k] != word[k]:
                return j + k, err(data[j + k], "in literal %s (expecting %s)" % (word.decode(), quote_char(word[k])))
        return j + len(word), None

    def scan_value(j: int, context: str) -> tuple[int, str | None, bool]:
        """Scan a value start; returns (next, error, opened_container)."""
        c = data[j]
        if c == 0x7B:
            return j + 1, None, True
        if c == 0x5B:
            return j + 1, None, True
        if c == 0x22:
            k, e = scan_string(j)
            return k, e, False
        if c == 0x2D or 0x30 <= c <= 0x39:
            k, e = scan_number(j)
            return k, e, False
        if c == 0x74:
            k, e = scan_literal(j, b"true")
            return k, e, False
        if c == 0x66:
            k, e = scan_literal(j, b"false")
            return k, e, False
        if c == 0x6E:
            k, e = scan_literal(j, b"null")
            return k, e, False
        return j, err(c, context), False

    def finish(e: str | None) -> str | None:
        if e == "eof":
            return "unexpected end of JSON input"
        return e

    # expecting: "value", "value-or-end-array", "key-or-end-object", "key",
    # "colon", "after-value", "top-end"
    expect = "value"
    while True:
        i = skip_ws(i)
        if i >= n:
            if expect == "top-end" or (expect == "after-value" and not stack):
                return None
            return "unexpected end of JSON input"
        c = data[i]
        if expect in ("value", "value-or-end-array"):
            if expect == "value-or-end-array" and c == 0x5D:
                stack.pop()
                i += 1
                expect = "after-value"
            else:
                j, e, opened = scan_value(i, "looking for beginning of value")
                if e:
                    return finish(e)
                if opened:
                    if c == 0x7B:
                        stack.append("obj")
                        expect = "key-or-end-object"
                    else:
                        stack.append("arr")
                        expect = "value-or-end-array"
                else:
                    expect = "after-value"
                i = j
        elif expect in ("key-or-end-object", "key"):
            if expect == "key-or-end-object" and c == 0x7D:
                stack.pop()
                i += 1
                expect = "after-value"
            elif c == 0x22:
                j, e = scan_string(i)
                if e:
                    return finish(e)
                i = j
                expect = "colon"
            else:
                return err(c, "looking for beginning of object key string")
        elif expect == "colon":
            if c != 0x3A:
                return err(c, "after object key")
            i += 1
            expect = "value"
        elif expect == "after-value":
            if not stack:
                expect = "top-end"
                continue
            top = stack[-1]
            if top == "obj":
                if c == 0x2C:
                    expect = "key"
                elif c == 0x7D:
                    stack.pop()
                else:
                    return err(c, "after object key:value pair")
            else:
                if c == 0x2C:
                    expect = "value"
                elif c == 0x5D:
                    stack.pop()
                else:
                    return err(c, "after array element")
            i += 1
        else:  # top-end
            return err(c, "after top-level value")


# ---------------------------------------------------------------------------
# Typed decoding with Go's rules.

INT_RANGES = {
    "int": (-(2**63), 2**63 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "uint32": (0, 2**32 - 1),
    "uint16": (0, 2**16 - 1),
    "uint8": (0, 2**8 - 1),
}


@dataclass(frozen=True)
class Field:
    """One struct field: its JSON name and Go type.

    ``go_type`` is a Go type name (``bool``, ``string``, ``int64``,
    ``[]string``, ``map[string]string``, ``time.Duration``, ``time.Time``,
    ``json.RawMessage``...) or a nested :class:`Struct` (also inside
    ``[]``).  ``decoder`` converts JSON for types with their own
    ``UnmarshalJSON`` (enums) and raises ``GoJSONError`` with their message.
    """

    name: str
    go_type: Any
    decoder: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Struct:
    """A Go struct: its name (for error messages) and its JSON fields."""

    go_name: str
    fields: tuple[Field, ...]
    _by_name: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)
    _by_fold: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for f in self.fields:
            self._by_name[f.name] = f
            self._by_fold.setdefault(f.name.lower(), f)

    def lookup(self, key: str) -> Field | None:
        found = self._by_name.get(key)
        if found is None:
            found = self._by_fold.get(key.lower())
        return found


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _number_text(value: int | float) -> str:
    if isinstance(value, GoNumber):
        return value.text
    if isinstance(value, float):
        return repr(value)
    return str(value)


class _Decoder:
    def __init__(self) -> None:
        self.first_error: str | None = None

    def type_error(self, what: str, go_type: str, struct: str, path: str) -> None:
        if self.first_error is None:
            if struct:
                self.first_error = f"json: cannot unmarshal {what} into Go struct field {struct}.{path} of type {go_type}"
            else:
                self.first_error = f"json: cannot unmarshal {what} into Go value of type {go_type}"

    def value(self, go_type: Any, value: Any, struct: str, path: str, decoder: Callable[[Any], Any] | None) -> tuple[bool, Any]:
        """Decode ``value``; returns (assigned, result)."""
        if value is None:
            return False, None
        if decoder is not None:
            try:
                return True, decoder(value)
            except GoJSONError as exc:
                if self.first_error is None:
                    self.first_error = str(exc)
                return False, None
        if isinstance(go_type, Struct):
            if not isinstance(value, dict):
                self.type_error(_kind(value), go_type.go_name, struct, path)
                return False, None
            return True, self.struct(go_type, value, go_type.go_name, path)
        if go_type == "bool":
            if isinstance(value, bool):
                return True, value
            self.type_error(_kind(value), "bool", struct, path)
            return False, None
        if go_type == "string":
            if isinstance(value, str):
                return True, value
            self.type_error(_kind(value), "string", struct, path)
            return False, None
        if go_type in INT_RANGES or go_type == "time.Duration":
            rng = INT_RANGES.get(go_type, INT_RANGES["int64"])
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.type_error(_kind(value), go_type, struct, path)
                return False, None
            if isinstance(value, float) or not rng[0] <= value <= rng[1]:
                self.type_error("number " + _number_text(value), go_type, struct, path)
                return False, None
            return True, value
        if go_type in ("float64", "float32"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.type_error(_kind(value), go_type, struct, path)
                return False, None
            return True, float(value)
        if go_type in ("any", "json.RawMessage"):
            return True, value
        if isinstance(go_type, str) and go_type.startswith("[]"):
            if not isinstance(value, list):
                self.type_error(_kind(value), go_type, struct, path)
                return False, None
            inner = go_type[2:]
            out = []
            for item in value:
                ok, decoded = self.value(inner, item, struct, path, None)
                out.append(decoded if ok else None)
            return True, out
        if isinstance(go_type, tuple) and go_type[0] == "[]":
            if not isinstance(value, list):
                self.type_error(_kind(value), "[]" + go_type[1].go_name, struct, path)
                return False, None
            out = []
            for item in value:
                ok, decoded = self.value(go_type[1], item, struct, path, None)
                out.append(decoded if ok else None)
            return True, out
        if isinstance(go_type, str) and go_type.startswith("map[string]"):
            if not isinstance(value, dict):
                self.type_error(_kind(value), go_type, struct, path)
                return False, None
            inner = go_type[len("map[string]") :]
            out_map = {}
            for k, v in value.items():
                ok, decoded = self.value(inner, v, struct, path + "." + k if path else k, None)
                if ok:
                    out_map[k] = decoded
            return True, out_map
        raise TypeError(f"unsupported Go type {go_type!r}")

    def struct(self, schema: Struct, obj: dict[str, Any], struct: str, prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in obj.items():
            f = schema.lookup(key)
            if f is None:
                continue
            path = f"{prefix}.{f.name}" if prefix else f.name
            ok, decoded = self.value(f.go_type, raw, struct, path, f.decoder)
            if ok:
                out[f.name] = decoded
        return out


def decode(schema: Struct, value: Any) -> dict[str, Any]:
    """Decode a parsed JSON value into ``schema`` the way Go would.

    Returns the assigned fields (by canonical JSON name).  Raises
    :class:`GoJSONError` with Go's message on the first type mismatch; Go
    still assigns the other fields, which callers never see because the
    whole request fails.
    """
    d = _Decoder()
    if not isinstance(value, dict):
        if value is None:
            return {}
        d.type_error(_kind(value), schema.go_name, "", "")
        raise GoJSONError(d.first_error)
    out = d.struct(schema, value, schema.go_name, "")
    if d.first_error is not None:
        raise GoJSONError(d.first_error)
    return out
