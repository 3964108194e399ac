"""Go's ``flag`` package: command-line parsing as nats-server's ``FlagSet`` does it.

The rules, as Go applies them:

* a flag is ``-name`` or ``--name`` (the two are the same), its value
  ``-name=value`` or ``-name value``; a boolean flag takes only ``-name`` or
  ``-name=BOOL`` (``strconv.ParseBool``: 1 t T TRUE true True, 0 f F FALSE
  false False), so ``-js false`` leaves ``false`` as an argument;
* a non-boolean flag without ``=`` takes the next argument whatever it looks
  like (``-p -1`` sets the port to -1);
* ``--`` ends the flags, and so does the first argument that is not a flag
  (``-`` alone is not a flag); what is left is :attr:`Parsed.args`;
* no abbreviations, no glued short options: ``-cluster_name`` is the flag
  ``cluster_name`` or an error, never ``-c luster_name``;
* a flag given twice keeps its last value (flags sharing a variable, like
  ``-p`` and ``--port``, overwrite each other in order);
* integers are ``strconv.ParseInt(s, 0, 64)``: an optional sign, ``0x``,
  ``0o``, ``0b`` or a leading ``0`` (octal), underscores between digits.

Errors carry Go's exact text (``flag provided but not defined: -x``); what
a program then prints and its exit status are the program's business.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from fakejs.gocompat.goquote import quote

BOOL_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
BOOL_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

# strconv's error texts, as the flag package reports them
PARSE_ERROR = "parse error"
RANGE_ERROR = "value out of range"


class FlagError(Exception):
    """A command line the flag package refuses; ``str()`` is Go's message."""


class NumError(ValueError):
    """``strconv``'s failure: ``str()`` is ``parse error`` or ``value out of range``."""


def parse_bool(text: str) -> bool:
    """``strconv.ParseBool``."""
    if text in BOOL_TRUE:
        return True
    if text in BOOL_FALSE:
        return False
    raise NumError(PARSE_ERROR)


def _underscore_ok(text: str) -> bool:
    """Go's rule: an underscore only between digits (or right after a base prefix)."""
    saw = "^"
    i = 0
    if text[:1] in ("+", "-"):
        text = text[1:]
    hexadecimal = False
    if len(text) >= 2 and text[0] == "0" and text[1].lower() in "box":
        i = 2
        saw = "0"
        hexadecimal = text[1].lower() == "x"
    for ch in text[i:]:
        if "0" <= ch <= "9" or (hexadecimal and "a" <= ch.lower() <= "f"):
            saw = "0"
            continue
        if ch == "_":
            if saw != "0":
                return False
            saw = "_"
            continue
        if saw == "_":
            return False
        saw = "!"
    return saw != "_"


def _parse_uint(text: str, bits: int) -> int:
    """``strconv.ParseUint(text, 0, bits)``."""
    if not text:
        raise NumError(PARSE_ERROR)
    body = text
    base = 10
    if body[0] == "0":
        if len(body) >= 3 and body[1].lower() in "box":
            base = {"b": 2, "o": 8, "x": 16}[body[1].lower()]
            body = body[2:]
        else:
            base = 8
            body = body[1:]
    limit = (1 << bits) - 1
    value = 0
    underscores = False
    for ch in body:
        if ch == "_":
            underscores = True
            continue
        if "0" <= ch <= "9":
            digit = ord(ch) - 48
        elif "a" <= ch.lower() <= "z":
            digit = ord(ch.lower()) - 87
        else:
            raise NumError(PARSE_ERROR)
        if digit >= base:
            raise NumError(PARSE_ERROR)
        value = value * base + digit
        if value > limit:
            raise NumError(RANGE_ERROR)
    if underscores and not _underscore_ok(text):
        raise NumError(PARSE_ERROR)
    return value


def parse_int(text: str, bits: int = 64) -> int:
    """``strconv.ParseInt(text, 0, bits)``: raises :class:`NumError`."""
    if not text:
        raise NumError(PARSE_ERROR)
    negative = text[0] == "-"
    body = text[1:] if text[0] in "+-" else text
    value = _parse_uint(body, bits)
    cutoff = 1 << (bits - 1)
    if (not negative and value >= cutoff) or (negative and value > cutoff):
        raise NumError(RANGE_ERROR)
    return -value if negative else value


def parse_float(text: str) -> float:
    """A float flag's value: Python's ``float`` syntax without surrounding spaces (close to ``ParseFloat``)."""
    if not text or text != text.strip() or "_" in text:
        raise NumError(PARSE_ERROR)
    try:
        return float(text)
    except ValueError:
        raise NumError(PARSE_ERROR) from None


def go_quote(text: str) -> str:
    """Go's ``%q`` of an argument (raw bytes of the command line, as the OS gave them)."""
    return quote(os.fsencode(text))


class Flag:
    """One flag name; several names may share a ``dest`` (``-p`` and ``--port``).

    The names sharing a dest are one flag declared once with its aliases
    (:meth:`FlagSet.string` and the others take the dest, then every name);
    readers ask :class:`Parsed` by dest, so each alias has its long form's effect.
    A plain class: a start declares every flag, and a dataclass costs its import.
    """

    __slots__ = ("bits", "default", "dest", "kind", "name", "usage")

    def __init__(self, name: str, dest: str, kind: str, default: Any, usage: str = "", bits: int = 64) -> None:
        self.name = name
        self.dest = dest
        self.kind = kind  # "bool", "string", "int", "float", "list"
        self.default = default
        self.usage = usage
        self.bits = bits

    def convert(self, text: str) -> Any:
        if self.kind == "bool":
            return parse_bool(text)
        if self.kind == "int":
            return parse_int(text, self.bits)
        if self.kind == "float":
            return parse_float(text)
        return text


class Parsed:
    """The outcome of :meth:`FlagSet.parse`."""

    __slots__ = ("args", "defaults", "seen", "spellings", "values")

    def __init__(self, values: dict[str, Any], defaults: dict[str, Any] | None = None) -> None:
        self.values = values
        # every flag's default, by dest
        self.defaults: dict[str, Any] = {} if defaults is None else defaults
        # flag names in the order they were given (a name given twice appears twice)
        self.seen: list[str] = []
        # what follows the flags: the first non-flag argument and everything after it
        self.args: list[str] = []
        # the name each given dest was last given as (``cluster`` -> ``cluster_listen``)
        self.spellings: dict[str, str] = {}

    def given(self, *dests: str) -> bool:
        """Whether any of ``dests`` was on the command line under any of its names (Go's ``FlagSet.Visit``).

        A flag is asked for by its dest, never by one of its names, so an
        alias is always read as its long form; a dest no flag has raises
        ``KeyError``.
        """
        for dest in dests:
            if dest not in self.defaults:
                raise KeyError(f"no flag has the dest {dest!r}")
        return any(dest in self.spellings for dest in dests)

    def spelling(self, dest: str) -> str:
        """The name ``dest`` was last given as on the command line ("" when it was not given)."""
        return self.spellings.get(dest, "")


class FlagSet:
    """A set of flags parsed the way Go's ``flag.FlagSet.Parse`` parses them."""

    def __init__(self) -> None:
        self.flags: dict[str, Flag] = {}

    def _add(self, kind: str, dest: str, names: Sequence[str], default: Any, usage: str, bits: int = 64) -> None:
        for name in names:
            if name in self.flags:
                raise ValueError(f"flag redefined: {name}")
            self.flags[name] = Flag(name, dest, kind, default, usage, bits)

    def bool(self, dest: str, *names: str, default: bool = False, usage: str = "") -> None:
        self._add("bool", dest, names, default, usage)

    def string(self, dest: str, *names: str, default: str = "", usage: str = "") -> None:
        self._add("string", dest, names, default, usage)

    def int(self, dest: str, *names: str, default: int = 0, usage: str = "", bits: int = 64) -> None:
        self._add("int", dest, names, default, usage, bits)

    def float(self, dest: str, *names: str, default: float = 0.0, usage: str = "") -> None:
        self._add("float", dest, names, default, usage)

    def list(self, dest: str, *names: str, usage: str = "") -> None:
        """A repeatable string flag: each use appends (a ``flag.Value`` of Go's kind)."""
        self._add("list", dest, names, (), usage)

    def defaults(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for flag in self.flags.values():
            values.setdefault(flag.dest, [] if flag.kind == "list" else flag.default)
        return values

    def parse(self, argv: Sequence[str], values: dict[str, Any] | None = None) -> Parsed:
        """Parse ``argv`` (without the program name) over ``values`` (default: every flag's default).

        Raises :class:`FlagError` with Go's message at the first bad argument.
        """
        defaults = self.defaults()
        parsed = Parsed(dict(defaults) if values is None else dict(values), defaults)
        args = list(argv)
        while args:
            arg = args[0]
            if len(arg) < 2 or arg[0] != "-":
                break
            dashes = 1
            if arg[1] == "-":
                dashes = 2
                if len(arg) == 2:  # "--" ends the flags
                    args.pop(0)
                    break
            name = arg[dashes:]
            if not name or name[0] in "-=":
                raise FlagError(f"bad flag syntax: {arg}")
            args.pop(0)
            name, eq, value = name.partition("=")
            flag = self.flags.get(name)
            if flag is None:
                raise FlagError(f"flag provided but not defined: -{name}")
            if flag.kind == "bool":
                if eq:
                    try:
                        converted = flag.convert(value)
                    except NumError as exc:
                        raise FlagError(f"invalid boolean value {go_quote(value)} for -{name}: {exc}") from None
                else:
                    converted = True
            else:
                if not eq:
                    if not args:
                        raise FlagError(f"flag needs an argument: -{name}")
                    value = args.pop(0)
                try:
                    converted = flag.convert(value)
                except NumError as exc:
                    raise FlagError(f"invalid value {go_quote(value)} for flag -{name}: {exc}") from None
            if flag.kind == "list":
                parsed.values[flag.dest] = [*parsed.values[flag.dest], converted]
            else:
                parsed.values[flag.dest] = converted
            parsed.seen.append(name)
            parsed.spellings[flag.dest] = name
        parsed.args = args
        return parsed
