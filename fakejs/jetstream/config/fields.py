"""A config's fields declared once: rows in Go's field order, and what derives from them.

A :class:`ConfigField` row says what nats-server's struct says of one field:
its JSON name, its Go type (or nested :class:`~fakejs.gocompat.gojson.Struct`)
with the reader of an enum, its Go zero value (what an absent field means)
and how ``encoding/json`` writes it: :func:`always`, :func:`omitempty`, or a
writer of its own.  A :class:`ConfigTable` of rows gives the request schema,
the zero config, the JSON form (field order, omitted fields, sorted metadata
with the server's dynamic entries), the form kept in JSON files (times as
text) and the filling of absent and ``null`` fields.  The stream and consumer
tables are in :mod:`~fakejs.jetstream.config.stream` and
:mod:`~fakejs.jetstream.config.consumer`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.gocompat.gojson import Field, Struct
from fakejs.gocompat.gotime import parse_go_time

OMIT: Final = object()
"""What a writer returns for a field left out of the JSON."""

Writer = Callable[[Any], Any]
"""A field's value to what nats-server writes for it, or :data:`OMIT`."""

_EMPTY: tuple[Any, ...] = ("", 0, False, None, [], {})


def always(value: Any) -> Any:
    """A field without ``omitempty``: written whatever it holds (a list as a copy)."""
    return list(value) if isinstance(value, list) else value


def omitempty(value: Any) -> Any:
    """A field with ``omitempty``: left out when it is Go's empty value."""
    return OMIT if value in _EMPTY else always(value)


def time_text(value: Any) -> Any:
    """A ``*time.Time`` with ``omitempty``: its RFC 3339 text, left out when nil."""
    return OMIT if value is None else value.text()


def omitted_when(default: str) -> Writer:
    """An enum written only when it is not ``default`` (its Go zero value, which marshals as empty)."""

    def write(value: Any) -> Any:
        return OMIT if value == default else value

    return write


def metadata_json(value: dict[str, str] | None) -> Any:
    """``Metadata``: its entries sorted by key, as Go writes a map; left out when empty."""
    if not value:
        return OMIT
    return {key: value[key] for key in sorted(value)}


def with_dynamic_metadata(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The config with the server's version and API level added to its metadata, as nats-server shows it."""
    metadata = dict(cfg["metadata"] or {})
    metadata["_nats.ver"] = NATS_VERSION
    metadata["_nats.level"] = str(API_LEVEL)
    return {**cfg, "metadata": metadata}


@dataclass(frozen=True)
class TextForm:
    """How a field holding times is kept in a JSON file: with its times as text, and read back."""

    to_text: Callable[[Any], Any]
    from_text: Callable[[Any], Any]


TIME_TEXT = TextForm(
    to_text=lambda value: None if value is None else value.text(),
    from_text=lambda value: parse_go_time(value) if isinstance(value, str) else value,
)
"""A ``time.Time`` field's form in a JSON file (``None`` when unset)."""


@dataclass(frozen=True)
class ConfigField:
    """One field of a config as nats-server's struct declares it.

    ``go_type`` and ``decoder`` are those of :class:`~fakejs.gocompat.gojson.Field`;
    ``zero`` is Go's zero value, what an absent field means (an empty list or
    dict here also replaces a ``null`` in a request); ``write`` says how the
    field is marshalled.  ``stored`` is the field's form in a JSON file when it
    holds times; a ``time.Time`` field is kept as its text without saying so.
    """

    name: str
    go_type: Any
    zero: Any
    write: Writer
    decoder: Callable[[Any], Any] | None = None
    stored: TextForm | None = None


class ConfigTable:
    """A config's fields in Go's field order, and all that is derived from them.

    A config is a plain dict holding every field: :meth:`from_request` builds
    one, :meth:`to_json` writes it as nats-server marshals it, :meth:`to_storable`
    and :meth:`from_storable` carry it through a JSON file.
    """

    def __init__(self, go_name: str, fields: tuple[ConfigField, ...]) -> None:
        self.fields = fields
        self.names = tuple(f.name for f in fields)
        self.struct = Struct(go_name, tuple(Field(f.name, f.go_type, f.decoder) for f in fields))
        self.zero: dict[str, Any] = {f.name: f.zero for f in fields}
        self._writers = tuple((f.name, f.write) for f in fields)
        self._empty_for_null = tuple((f.name, f.zero) for f in fields if isinstance(f.zero, (list, dict)))
        self._stored = tuple((f.name, form) for f in fields if (form := _text_form(f)) is not None)

    def from_request(self, fields: Mapping[str, Any] | None) -> dict[str, Any]:
        """A full config from decoded request fields: absent ones at their zero value, unknown ones dropped."""
        merged: dict[str, Any] = copy.deepcopy(self.zero)
        for key, value in (fields or {}).items():
            if key in merged:
                merged[key] = value
        for key, empty in self._empty_for_null:
            if merged[key] is None:
                merged[key] = copy.copy(empty)
        return merged

    def to_json(self, cfg: Mapping[str, Any], dynamic_metadata: bool = True) -> dict[str, Any]:
        """The config as nats-server marshals it: Go's field order, each field by its writer."""
        values = with_dynamic_metadata(cfg) if dynamic_metadata else cfg
        out: dict[str, Any] = {}
        for name, write in self._writers:
            shown = write(values[name])
            if shown is not OMIT:
                out[name] = shown
        return out

    def to_storable(self, cfg: Mapping[str, Any]) -> dict[str, Any]:
        """The config with its times as text, for JSON files."""
        out = dict(cfg)
        for name, form in self._stored:
            out[name] = form.to_text(out[name])
        return out

    def from_storable(self, stored: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`to_storable` read back (a field missing from an older file at its zero value)."""
        fields = dict(stored)
        for name, form in self._stored:
            if name in fields:
                fields[name] = form.from_text(fields[name])
        return self.from_request(fields)


def _text_form(field: ConfigField) -> TextForm | None:
    if field.stored is not None:
        return field.stored
    return TIME_TEXT if field.go_type == "time.Time" else None
