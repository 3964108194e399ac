"""Typed decoding with Go's rules: a parsed JSON value into a table of struct fields.

Go matches each object member to a field -- exact name first, then a
case-insensitive match with Unicode simple folding (``paſſ`` finds
``pass``) -- member by member in document order, so a later duplicate
overwrites an earlier one and a nested object merges into what an earlier
duplicate left.  A value of the wrong type is skipped and remembered; the
first such error is the one reported, naming the path *as written* in the
document (``config.DURABLE_NAME``, ``subjects.0``) the way nats-server's Go
shows it.  Unknown members are an error only when ``strict`` (nats-server's
``DisallowUnknownFields``).

Decoding follows the schema, whose depth is fixed, so it recurses only as
deep as the struct tables nest; free-form (``any``) values are converted
without recursion.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from fakejs.gocompat.goquote import quote_text
from fakejs.gocompat.gotime import parse_go_time
from fakejs.gocompat.jsonvalue import (
    GoJSONError,
    GoObject,
    NegativeZero,
    RawJSON,
    canonical_text,
    kind,
    number_text,
    to_plain,
)

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
_ZERO: dict[str, Any] = {"string": "", "bool": False, **{name: 0 for name in INT_RANGES}}

Path = list[str | int]
_NILLABLE = ("[]", "map[", "any")


def _fold_char(ch: str) -> str:
    folded = ch.casefold()
    if len(folded) == 1:
        return folded
    lower = ch.lower()
    return lower if len(lower) == 1 else ch


@functools.lru_cache(maxsize=4096)
def fold_name(name: str) -> str:
    """A key under which names equal in Go's case-insensitive (simple folding) comparison meet."""
    if name.isascii():
        return name.lower()
    return "".join(_fold_char(ch) for ch in name)


class Field:
    """One struct field: its JSON name and Go type.

    ``go_type`` is a Go type name (``bool``, ``string``, ``int64``,
    ``time.Duration``, ``time.Time``, ``[]string``, ``map[string]string``,
    ``any``), a nested :class:`Struct`, or ``("[]", Struct)`` /
    ``("[]*", Struct)`` for a slice of structs or of pointers to them.
    ``decoder`` stands for a type with its own ``UnmarshalJSON`` (enums,
    times): it converts the JSON value or raises :class:`GoJSONError` with
    that type's message.  A plain class, as :class:`Struct`: a dataclass costs its
    import, and every start imports this module.
    """

    __slots__ = ("decoder", "go_type", "name")

    def __init__(self, name: str, go_type: Any, decoder: Callable[[Any], Any] | None = None) -> None:
        self.name = name
        self.go_type = go_type
        self.decoder = decoder

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.go_type!r})"


class Struct:
    """A Go struct: its name, its package-qualified type name, and its JSON fields."""

    __slots__ = ("_by_fold", "_by_name", "fields", "go_name", "qualified")

    def __init__(self, go_name: str, fields: tuple[Field, ...], qualified: str = "") -> None:
        self.go_name = go_name
        self.fields = fields
        self.qualified = qualified
        self._by_name: dict[str, Field] = {}
        self._by_fold: dict[str, Field] = {}
        for f in fields:
            self._by_name[f.name] = f
            self._by_fold.setdefault(fold_name(f.name), f)

    def __repr__(self) -> str:
        return f"Struct({self.go_name!r})"

    @property
    def type_name(self) -> str:
        return self.qualified or "server." + self.go_name

    def lookup(self, key: str) -> Field | None:
        found = self._by_name.get(key)
        if found is None:
            found = self._by_fold.get(fold_name(key))
        return found

    def extend(self, go_name: str, *fields: Field) -> Struct:
        """A struct embedding this one (Go promotes the embedded fields)."""
        return Struct(go_name, self.fields + fields)


def members(value: Any) -> Iterable[tuple[str, Any]]:
    """The (key, value) pairs of a parsed object, in document order."""
    return value.items() if isinstance(value, dict) else value


def is_object(value: Any) -> bool:
    return isinstance(value, (GoObject, dict))


def _pointer_token(key: str) -> str:
    """A key as a JSON Pointer token, which is how Go writes it in a field path."""
    return key.replace("~", "~0").replace("/", "~1")


def type_name(go_type: Any) -> str:
    if isinstance(go_type, Struct):
        return go_type.type_name
    if isinstance(go_type, tuple):
        return str(go_type[0]) + str(go_type[1].type_name)
    return str(go_type)


class NeedSpans(Exception):
    """A type with its own ``UnmarshalJSON`` needs raw text the fast reader did not keep."""


class Decoder:
    """One decode pass; remembers the first error the way Go's ``saveError`` does.

    ``source`` is the document the value was read from, for the raw text
    that types with their own ``UnmarshalJSON`` receive.
    """

    def __init__(self, top: str, strict: bool, source: bytes | None = None) -> None:
        self.top = top
        self.strict = strict
        self.source = source
        self.first_error: str | None = None

    def save(self, message: str) -> None:
        if self.first_error is None:
            self.first_error = message

    def type_error(self, what: str, go_type: Any, path: Path) -> None:
        where = ".".join(str(token) for token in path)
        # Go names a struct field only when the value sits under an object key.
        into = "" if path and isinstance(path[-1], int) else "Go struct field "
        self.save(f"json: cannot unmarshal {what} into {into}{self.top}.{where} of type {type_name(go_type)}")

    def struct(self, schema: Struct, obj: Any, path: Path, target: dict[str, Any]) -> None:
        """Decode the members of ``obj`` into ``target`` (a previous value merges, as in Go)."""
        spans = getattr(obj, "spans", None)
        for index, (key, raw) in enumerate(members(obj)):
            f = schema.lookup(key)
            if f is None:
                if self.strict:
                    self.save("json: unknown field " + quote_text(key))
                continue
            if f.decoder is not None:
                # Types with their own UnmarshalJSON see the raw text, null included.
                span = spans[index] if spans is not None else None
                try:
                    target[f.name] = f.decoder(RawJSON(self.raw_text(raw, span), raw))
                except GoJSONError as exc:
                    self.save(str(exc))
                continue
            kind_of = type(raw)
            go_type = f.go_type
            if (kind_of is str and go_type == "string") or (kind_of is bool and go_type == "bool"):
                target[f.name] = raw  # what field() would assign, without its calls (most members)
                continue
            if kind_of is int and go_type in INT_RANGES:
                low, high = INT_RANGES[go_type]
                if low <= raw <= high:
                    target[f.name] = raw
                    continue
            self.field(f, raw, [*path, _pointer_token(key)], target)

    def raw_text(self, value: Any, span: tuple[int, int] | None) -> str:
        """How ``value`` was written: from the document when its place is known, else rebuilt.

        A rebuilt text is only trusted for a scalar in a document without
        escapes; otherwise :class:`NeedSpans` asks for a careful re-read.
        """
        if span is not None and self.source is not None:
            # Invalid UTF-8 stays as escaped bytes: Go quotes them as \xHH, its encoder writes U+FFFD.
            return self.source[span[0] : span[1]].decode("utf-8", "surrogateescape")
        if self.source is not None and (isinstance(value, list) or (isinstance(value, str) and b"\\" in self.source)):
            raise NeedSpans()
        return canonical_text(value)

    def field(self, f: Field, raw: Any, path: Path, target: dict[str, Any]) -> None:
        if raw is None:
            if isinstance(f.go_type, tuple) or (isinstance(f.go_type, str) and f.go_type.startswith(_NILLABLE)):
                target.pop(f.name, None)  # Go sets slices, maps and interfaces to nil
            return
        ok, decoded = self.value(f.go_type, raw, path, target.get(f.name))
        if ok:
            target[f.name] = decoded

    def value(self, go_type: Any, value: Any, path: Path, current: Any = None) -> tuple[bool, Any]:
        """Decode ``value`` (not null) as ``go_type``; returns (assigned, result)."""
        if isinstance(go_type, Struct):
            if not is_object(value):
                self.type_error(kind(value), go_type, path)
                return False, None
            target = current if isinstance(current, dict) else {}
            self.struct(go_type, value, path, target)
            return True, target
        if isinstance(go_type, tuple) or go_type.startswith("[]"):
            return self._slice(go_type, value, path)
        if go_type.startswith("map[string]"):
            return self._map(go_type, value, path, current)
        return self._scalar(go_type, value, path)

    def _slice(self, go_type: Any, value: Any, path: Path) -> tuple[bool, Any]:
        if not isinstance(value, list) or isinstance(value, GoObject):
            self.type_error(kind(value), go_type, path)
            return False, None
        element = go_type[1] if isinstance(go_type, tuple) else go_type[2:]
        out = []
        for index, item in enumerate(value):
            out.append(None if item is None else self.value(element, item, [*path, index])[1])
        return True, out

    def _map(self, go_type: str, value: Any, path: Path, current: Any) -> tuple[bool, Any]:
        """A ``map[string]T``: members merge into an existing map; elements that fail are left out."""
        if not is_object(value):
            self.type_error(kind(value), go_type, path)
            return False, None
        inner = go_type[len("map[string]") :]
        out = current if isinstance(current, dict) else {}
        for key, item in members(value):
            if item is None:
                out[key] = _ZERO.get(inner)
                continue
            ok, decoded = self.value(inner, item, [*path, _pointer_token(key)])
            if ok:
                out[key] = decoded
        return True, out

    def _scalar(self, go_type: str, value: Any, path: Path) -> tuple[bool, Any]:
        """A bool, string, number, time or ``any`` value, with Go's type errors."""
        if go_type == "any":
            return True, to_plain(value)
        if go_type == "bool" or go_type == "string":
            if isinstance(value, bool if go_type == "bool" else str):
                return True, value
            self.type_error(kind(value), go_type, path)
            return False, None
        if go_type == "time.Time":
            return self._time(value, path)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.type_error(kind(value), go_type, path)
            return False, None
        if go_type in ("float64", "float32"):
            return True, float(value)
        low, high = INT_RANGES[go_type]
        unsigned_minus_zero = low == 0 and isinstance(value, NegativeZero)
        if isinstance(value, float) or not low <= value <= high or unsigned_minus_zero:
            self.type_error("number " + number_text(value), go_type, path)
            return False, None
        return True, int(value)

    def _time(self, value: Any, path: Path) -> tuple[bool, Any]:
        if not isinstance(value, str):
            self.type_error(kind(value), "time.Time", path)
            return False, None
        try:
            return True, parse_go_time(value)
        except ValueError as exc:
            self.save(str(exc))
            return False, None
