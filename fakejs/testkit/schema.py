"""Declared request bodies: each field once, read by one checker, shown by one table.

A :class:`Request` declares the JSON object a request takes: for each
:class:`Field` its name, its type, whether it is required or its default,
and a line saying what it does.  :func:`check` reads a body against the
declaration and refuses, naming the field and what it expects, a field the
declaration does not list, a required field that is missing, and a value
of the wrong type.  JSON integers are numbers; booleans are not, and
neither is ``null`` unless the field says so.  An object field may name the
declaration its own keys are read against, chosen from the rest of the
body (a fault's ``args`` depend on its ``do``).  :func:`markdown_table`
renders a declaration for the documentation, so the reference is the
declaration.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BOOLEAN",
    "INTEGER",
    "NUMBER",
    "OBJECT",
    "STRING",
    "STRING_OR_INTEGER",
    "Field",
    "Kind",
    "Request",
    "SchemaError",
    "check",
    "markdown_table",
]

SHOWN_VALUE_LENGTH = 60  # how much of a refused value an error repeats


class SchemaError(ValueError):
    """A request body that does not fit its declaration; the message names the field and what it expects."""


def _is_integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    """A JSON number a float can hold (an integer too large for one is refused, as infinity is)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


@dataclass(frozen=True, eq=False)
class Kind:
    """A JSON type a field takes: its name in the reference, how an error says it, and the test."""

    name: str
    phrase: str
    accepts: Callable[[object], bool]


NUMBER = Kind("number", "a number", _is_number)
INTEGER = Kind("integer", "an integer", _is_integer)
STRING = Kind("string", "a string", lambda value: isinstance(value, str))
BOOLEAN = Kind("boolean", "true or false", lambda value: isinstance(value, bool))
OBJECT = Kind("object", "an object", lambda value: isinstance(value, dict))
STRING_OR_INTEGER = Kind(
    "string or integer", "a string or an integer", lambda value: isinstance(value, str) or _is_integer(value)
)


@dataclass(frozen=True, eq=False)
class Field:
    """One field of a request body.

    An optional field that is absent takes ``default``; ``nullable`` lets
    ``null`` through (its meaning is the description's); ``choices`` are
    the only values allowed; a number is at least ``minimum``.  ``inner`` chooses, from the checked body, the
    declaration an object field's keys are read against (``None``: not here).
    """

    name: str
    kind: Kind
    description: str
    required: bool = False
    default: Any = None
    nullable: bool = False
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    inner: Callable[[Mapping[str, Any]], Request | None] | None = None

    @property
    def expects(self) -> str:
        """What the field takes, as an error says it."""
        if self.choices:
            return f"one of {_names(self.choices)}"
        return self.kind.phrase + self._limits

    @property
    def type_text(self) -> str:
        """The field's type, as the reference shows it."""
        return self.kind.name + self._limits

    @property
    def _limits(self) -> str:
        at_least = "" if self.minimum is None else f" >= {self.minimum:g}"
        return at_least + (" or null" if self.nullable else "")


@dataclass(frozen=True, eq=False)
class Request:
    """The body one request takes: its fields, and a group of which exactly one must be given (``one_of``)."""

    name: str
    description: str
    fields: tuple[Field, ...] = ()
    one_of: tuple[str, ...] = ()

    def field(self, name: str) -> Field:
        return next(spec for spec in self.fields if spec.name == name)


def check(request: Request, body: Mapping[str, Any], where: str = "", defaults: bool = True) -> dict[str, Any]:
    """The arguments ``body`` gives ``request`` (absent optional fields at their default unless ``defaults`` is off).

    Raises :class:`SchemaError` naming the field.  ``where`` names the
    request in messages (default: its name).
    """
    where = where or request.name
    known = {spec.name for spec in request.fields}
    for key in body:
        if key not in known:
            expected = f"expected one of {_names(sorted(known))}" if known else "it takes no fields"
            raise SchemaError(f"unknown field {_quoted(key)} in {where}: {expected}")
    given = [name for name in request.one_of if name in body]
    if request.one_of and len(given) != 1:
        got = f" (got {_names(given)})" if given else ""
        raise SchemaError(f"{where} needs exactly one of {_names(request.one_of)}{got}")
    args: dict[str, Any] = {}
    for spec in request.fields:
        if spec.name in body:
            args[spec.name] = _value(spec, body[spec.name], where)
        elif spec.required:
            raise SchemaError(f"missing field {_quoted(spec.name)} in {where}: expected {spec.expects}")
        elif defaults:
            args[spec.name] = copy.deepcopy(spec.default)
    for spec in request.fields:  # nested declarations are chosen from the fields just checked
        if spec.inner is not None and isinstance(args.get(spec.name), dict):
            inner = spec.inner(args)
            if inner is not None:
                label = inner.name.rsplit("/", 1)[-1]
                check(inner, args[spec.name], f"{where} {spec.name} ({label})", defaults=False)
    return args


def _value(spec: Field, value: Any, where: str) -> Any:
    if value is None and spec.nullable:
        return None
    if (
        not spec.kind.accepts(value)
        or (spec.choices and value not in spec.choices)
        or (spec.minimum is not None and value < spec.minimum)
    ):
        raise SchemaError(f"field {_quoted(spec.name)} of {where}: expected {spec.expects}, got {_shown(value)}")
    return value


def _quoted(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)


def _names(names: Any) -> str:
    return ", ".join(_quoted(name) for name in names)


def _shown(value: Any) -> str:
    """A refused value as JSON, cut short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:  # an integer longer than Python converts to text
        return "an integer too long to show"
    return text if len(text) <= SHOWN_VALUE_LENGTH else text[: SHOWN_VALUE_LENGTH - 3] + "..."


# -- the reference -------------------------------------------------------------------------------


def markdown_table(request: Request) -> str:
    """The declaration as a Markdown table (a line saying it takes no fields when it takes none)."""
    if not request.fields:
        return "No fields.\n"
    lines = ["| field | type | default | description |", "| --- | --- | --- | --- |"]
    for spec in request.fields:
        lines.append(f"| `{spec.name}` | {spec.type_text} | {_default_cell(spec)} | {_description_cell(spec)} |")
    if request.one_of:
        lines += ["", f"Give exactly one of {', '.join(f'`{name}`' for name in request.one_of)}."]
    return "\n".join(lines) + "\n"


def _default_cell(spec: Field) -> str:
    if spec.required:
        return "required"
    if spec.default is None and not spec.nullable:
        return ""
    return f"`{json.dumps(spec.default)}`"


def _description_cell(spec: Field) -> str:
    text = spec.description
    if spec.choices:
        text += f" (one of {', '.join(f'`{choice}`' for choice in spec.choices)})"
    return text.replace("|", "\\|")
