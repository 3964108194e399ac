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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakejs.gocompat.gotime import parse_go_time
from fakejs.gocompat.jsonscan import (
    WHITESPACE,
    SyntaxFailure,
    Truncated,
    quote_char,
    scan_error,
    scan_value,
    skip_space,
)

__all__ = ["Field", "GoJSONError", "Struct", "decode", "dumps", "loads", "quote_char"]


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

    def __new__(cls, text: str) -> GoNumber:
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
            return _no_surrogates(_decoder.decode(text))
        except (ValueError, RecursionError):
            pass
    error = scan_error(raw)
    if error is None:
        # Valid for Go but not for Python: invalid UTF-8 inside strings,
        # which Go replaces with U+FFFD.
        return _no_surrogates(_decoder.decode(raw.decode("utf-8", "replace")))
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


def split_stream(data: bytes) -> list[Any]:
    """Go's ``json.Decoder`` over ``data``: every complete top-level value, in order.

    Raises :class:`GoJSONError` the way ``Decoder.Decode`` fails: syntax
    errors name the offset (``... at offset 15``, as nats-server reports
    them) and a value cut short is ``unexpected EOF``.  Values that come
    before the failure are not returned (the request fails as a whole).
    """
    values: list[Any] = []
    i = 0
    n = len(data)
    while True:
        i = skip_space(data, i)
        if i >= n:
            return values
        try:
            end = scan_value(data, i)
        except SyntaxFailure as exc:
            raise GoJSONError(f"{exc.message} at offset {exc.offset}") from None
        except Truncated:
            raise GoJSONError("unexpected EOF") from None
        values.append(_python_value(data[i:end]))
        i = end


def _python_value(chunk: bytes) -> Any:
    """Parse a chunk the Go scanner accepted."""
    return _decoder.decode(chunk.decode("utf-8", "replace"))


# ---------------------------------------------------------------------------
# Typed decoding with Go's rules.

INT_RANGES = {
    "int": (-(2**63), 2**63 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "time.Duration": (-(2**63), 2**63 - 1),
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
    ``time.Duration``, ``[]string``, ``map[string]string``, ``any``) or a
    nested :class:`Struct`, or ``("[]", Struct)`` for a slice of structs.
    ``decoder`` stands for a type with its own ``UnmarshalJSON`` (enums,
    times): it converts the JSON value or raises :class:`GoJSONError` with
    that type's message.
    """

    name: str
    go_type: Any
    decoder: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Struct:
    """A Go struct: its name, its package-qualified type name, and its JSON fields."""

    go_name: str
    fields: tuple[Field, ...]
    qualified: str = ""
    _by_name: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)
    _by_fold: dict[str, Field] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for f in self.fields:
            self._by_name[f.name] = f
            self._by_fold.setdefault(f.name.lower(), f)

    @property
    def type_name(self) -> str:
        return self.qualified or "server." + self.go_name

    def lookup(self, key: str) -> Field | None:
        found = self._by_name.get(key)
        if found is None:
            found = self._by_fold.get(key.lower())
        return found

    def extend(self, go_name: str, *fields: Field) -> Struct:
        """A struct embedding this one (Go promotes the embedded fields)."""
        return Struct(go_name, self.fields + fields)


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
    """One decode pass; remembers the first error the way Go's ``saveError`` does."""

    def __init__(self, top: str, strict: bool) -> None:
        self.top = top
        self.strict = strict
        self.first_error: str | None = None

    def save(self, message: str) -> None:
        if self.first_error is None:
            self.first_error = message

    def type_error(self, what: str, go_type: str, path: str) -> None:
        self.save(f"json: cannot unmarshal {what} into Go struct field {self.top}.{path} of type {go_type}")

    def value(self, go_type: Any, value: Any, path: str, decoder: Callable[[Any], Any] | None) -> tuple[bool, Any]:
        """Decode ``value``; returns (assigned, result)."""
        if decoder is not None:
            # Types with their own UnmarshalJSON see null too.
            try:
                return True, decoder(value)
            except GoJSONError as exc:
                self.save(str(exc))
                return False, None
        if value is None:
            return False, None
        if isinstance(go_type, Struct):
            if not isinstance(value, dict):
                self.type_error(_kind(value), go_type.type_name, path)
                return False, None
            return True, self.struct(go_type, value, path)
        if isinstance(go_type, tuple):
            element = go_type[1]
            if not isinstance(value, list):
                self.type_error(_kind(value), "[]" + element.type_name, path)
                return False, None
            return True, [self.value(element, item, path, None)[1] for item in value]
        if go_type.startswith(("[]", "map[string]")):
            return self._collection(go_type, value, path)
        return self._scalar(go_type, value, path)

    def _scalar(self, go_type: str, value: Any, path: str) -> tuple[bool, Any]:
        """A bool, string, number, time or ``any`` value, with Go's type errors."""
        if go_type == "bool":
            if isinstance(value, bool):
                return True, value
            self.type_error(_kind(value), "bool", path)
            return False, None
        if go_type == "string":
            if isinstance(value, str):
                return True, value
            self.type_error(_kind(value), "string", path)
            return False, None
        rng = INT_RANGES.get(go_type)
        if rng is not None:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.type_error(_kind(value), go_type, path)
                return False, None
            if isinstance(value, float) or not rng[0] <= value <= rng[1]:
                self.type_error("number " + _number_text(value), go_type, path)
                return False, None
            return True, value
        if go_type == "time.Time":
            if isinstance(value, str):
                try:
                    return True, parse_go_time(value)
                except ValueError as exc:
                    self.save(str(exc))
                    return False, None
            self.type_error(_kind(value), "time.Time", path)
            return False, None
        if go_type in ("float64", "float32"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self.type_error(_kind(value), go_type, path)
                return False, None
            return True, float(value)
        if go_type == "any":
            return True, value
        raise TypeError(f"unsupported Go type {go_type!r}")

    def _collection(self, go_type: str, value: Any, path: str) -> tuple[bool, Any]:
        """A ``[]T`` or ``map[string]T`` value; elements that fail to decode are left out of maps."""
        if go_type.startswith("[]"):
            if not isinstance(value, list):
                self.type_error(_kind(value), go_type, path)
                return False, None
            inner = go_type[2:]
            return True, [self.value(inner, item, path, None)[1] for item in value]
        if go_type.startswith("map[string]"):
            if not isinstance(value, dict):
                self.type_error(_kind(value), go_type, path)
                return False, None
            inner = go_type[len("map[string]") :]
            out_map = {}
            for key, item in value.items():
                ok, decoded = self.value(inner, item, f"{path}.{key}", None)
                if ok:
                    out_map[key] = decoded
            return True, out_map
        raise TypeError(f"unsupported Go type {go_type!r}")

    def struct(self, schema: Struct, obj: dict[str, Any], prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, raw in obj.items():
            f = schema.lookup(key)
            if f is None:
                if self.strict:
                    self.save("json: unknown field " + _go_string(key))
                continue
            path = f"{prefix}.{f.name}" if prefix else f.name
            ok, decoded = self.value(f.go_type, raw, path, f.decoder)
            if ok:
                out[f.name] = decoded
        return out


def _go_string(text: str) -> str:
    """Go's ``%q`` of a short ASCII-ish string (used for unknown field names)."""
    return json.dumps(text, ensure_ascii=False)


def decode(schema: Struct, value: Any, strict: bool = False) -> dict[str, Any]:
    """Decode a parsed JSON value into ``schema`` the way Go would.

    Returns the assigned fields (by canonical JSON name).  Raises
    :class:`GoJSONError` with Go's message on the first type mismatch (or
    unknown field when ``strict``, like ``DisallowUnknownFields``).
    """
    if value is None:
        return {}
    d = _Decoder(schema.go_name, strict)
    if not isinstance(value, dict):
        raise GoJSONError(f"json: cannot unmarshal {_kind(value)} into Go value of type {schema.type_name}")
    out = d.struct(schema, value, "")
    if d.first_error is not None:
        raise GoJSONError(d.first_error)
    return out


def decode_request(schema: Struct, data: bytes, strict: bool = True) -> dict[str, Any]:
    """Decode an API request body the way nats-server does.

    nats-server feeds the body to a ``json.Decoder`` that rejects unknown
    fields and decodes value after value into the same struct, so ``{"a":1}
    {"a":2}`` is accepted (the later value wins) and an empty body decodes
    to nothing.  Syntax errors carry their offset.
    """
    stripped = data.strip(WHITESPACE) if data else b""
    if not stripped:
        return {}
    try:
        values = [_decoder.decode(data.decode("utf-8"))]
    except (ValueError, RecursionError):
        values = split_stream(data)
    out: dict[str, Any] = {}
    for value in values:
        out.update(decode(schema, _no_surrogates(value), strict))
    return out


def _no_surrogates(value: Any) -> Any:
    """Go turns escaped lone surrogates into U+FFFD; Python keeps them."""
    if isinstance(value, str):
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
            return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in value)
        return value
    if isinstance(value, dict):
        return {_no_surrogates(k): _no_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_surrogates(v) for v in value]
    return value
