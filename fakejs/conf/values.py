"""Parsed values with their positions, their plain Python form, and the digest.

nats-server keeps every value of a file in a token that remembers the line
and column of its key and the file it came from, so that option errors can
say ``FILE:LINE:COL: reason``; a token also remembers whether a ``$name``
reference used it, which makes an otherwise unknown top-level key acceptable.
:class:`Token` is that record.  Map values are dicts of tokens, array values
lists of tokens; :func:`plain` strips the tokens away.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fakejs.gocompat.gojson import dumps as go_json_string

__all__ = ["Token", "Tree", "digest", "go_json", "plain"]


@dataclass(eq=False, slots=True)
class Token:
    """One value of a configuration file, where it was found, and whether a variable used it.

    ``value`` is a str, int, float, bool or datetime, a ``dict[str, Token]``
    (a map) or a ``list[Token]`` (an array).  For map members ``line`` and
    ``pos`` are those of the key, as in nats-server; ``pos`` is nats-server's
    column (0-based on the first line, 1-based after it).
    """

    value: Any
    line: int
    pos: int
    source_file: str = ""
    used_variable: bool = False

    def where(self) -> str:
        """``FILE:LINE:COL``, the prefix nats-server's option stage puts on an error about this value."""
        return f"{self.source_file}:{self.line}:{self.pos}"

    def plain(self) -> Any:
        """The value without tokens anywhere inside it."""
        return plain(self.value)


Tree = dict[str, Token]


def plain(value: Any) -> Any:
    """Strip tokens: dicts, lists and scalars as nats-server's non-pedantic parser returns them."""
    if isinstance(value, Token):
        value = value.value
    if isinstance(value, dict):
        return {key: plain(member) for key, member in value.items()}
    if isinstance(value, list):
        return [plain(member) for member in value]
    return value


_EXPONENT = re.compile(r"e-0(\d)$")


def _go_float(number: float) -> str:
    """Go's ``encoding/json`` float64 text: plain digits in [1e-6, 1e21), shortest exponent form outside."""
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        return _EXPONENT.sub(r"e-\1", repr(number))
    return format(Decimal(repr(number)).normalize(), "f")


def go_json(value: Any) -> str:
    """The JSON Go's encoder writes for a parsed value (map keys sorted, times as RFC 3339)."""
    value = value.value if isinstance(value, Token) else value
    if isinstance(value, dict):
        members = (go_json_string(key) + ":" + go_json(value[key]) for key in sorted(value))
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(member) for member in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, dt.datetime):
        return '"' + value.strftime("%Y-%m-%dT%H:%M:%SZ") + '"'
    if value is None:
        return "null"
    return go_json_string(value)


def digest(tree: Tree) -> str:
    """``sha256:<hex>`` as ``nats-server -t`` prints it: the hash of the parsed file as JSON plus a newline."""
    return "sha256:" + hashlib.sha256((go_json(tree) + "\n").encode("utf-8", "surrogateescape")).hexdigest()
