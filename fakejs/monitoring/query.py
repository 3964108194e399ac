"""What the monitoring endpoints share: query decoding and Go's number formats.

nats-server reads monitoring options from the URL query with Go's
``strconv`` functions and answers a bad value with ``400`` and the parse
error as plain text.  Scripts that probe for supported options see those
texts, so :class:`Query` reproduces them exactly.
"""

from __future__ import annotations

import builtins
import re

from fakejs.core.accounts import GLOBAL_ACCOUNT
from fakejs.gocompat.gotime import NS
from fakejs.protocol.writer import go_quote

__all__ = [
    "DEFAULT_LIST_SIZE",
    "GLOBAL_ACCOUNT",
    "SYSTEM_ACCOUNT",
    "BadRequest",
    "Query",
    "go_float",
    "go_uptime",
    "page_bounds",
]

# The system account nats-server always has (it holds no clients here).
SYSTEM_ACCOUNT = "$SYS"

# Page size when a query gives no (or a non-positive) ``limit``.
DEFAULT_LIST_SIZE = 1024

_TRUE = frozenset(("1", "t", "T", "TRUE", "true", "True"))
_FALSE = frozenset(("0", "f", "F", "FALSE", "false", "False"))
_INT = re.compile(r"[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1


class BadRequest(Exception):
    """An option nats-server rejects with ``400`` and this message (plain text)."""


class Query:
    """A parsed query string read the way Go's ``url.Values.Get`` does (first value, ``""`` if absent)."""

    def __init__(self, params: dict[str, list[str]]) -> None:
        self._params = params

    def text(self, name: str) -> str:
        values = self._params.get(name)
        return values[0] if values else ""

    def bool(self, name: str) -> bool:
        """``strconv.ParseBool``; an absent or empty value is false."""
        text = self.text(name)
        if not text or text in _FALSE:
            return False
        if text in _TRUE:
            return True
        raise BadRequest(
            f"Error decoding boolean for '{name}': strconv.ParseBool: parsing {go_quote(text)}: invalid syntax"
        )

    def int(self, name: str) -> int:
        """``strconv.Atoi`` (64-bit); an absent or empty value is 0."""
        text = self.text(name)
        if not text:
            return 0
        if not _INT.fullmatch(text):
            raise BadRequest(f"Error decoding int for '{name}': strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
        value = int(text)
        if not -_INT64_MAX - 1 <= value <= _INT64_MAX:
            raise BadRequest(
                f"Error decoding int for '{name}': strconv.Atoi: parsing {go_quote(text)}: value out of range"
            )
        return value

    def uint(self, name: str) -> builtins.int:
        """``strconv.ParseUint(text, 10, 64)``; an absent or empty value is 0."""
        text = self.text(name)
        if not text:
            return 0
        if not _UINT.fullmatch(text):
            raise BadRequest(
                f"Error decoding uint64 for '{name}': strconv.ParseUint: parsing {go_quote(text)}: invalid syntax"
            )
        value = int(text)
        if value > _UINT64_MAX:
            raise BadRequest(
                f"Error decoding uint64 for '{name}': strconv.ParseUint: parsing {go_quote(text)}: value out of range"
            )
        return value


def page_bounds(offset: int, limit: int, size: int) -> tuple[int, int]:
    """The slice of a ``size``-long list that ``offset``/``limit`` select, clamped as nats-server does."""
    start = min(max(offset, 0), size)
    return start, start + min(limit, size - start)


def go_uptime(ns: int) -> str:
    """nats-server's uptime and idle format (whole seconds): ``1y2d3h4m5s`` down to ``5s``."""
    secs = max(ns, 0) // NS
    mins, hours, days = secs // 60, secs // 3600, secs // 86400
    years = days // 365
    if years:
        return f"{years}y{days % 365}d{hours % 24}h{mins % 60}m{secs % 60}s"
    if days:
        return f"{days}d{hours % 24}h{mins % 60}m{secs % 60}s"
    if hours:
        return f"{hours}h{mins % 60}m{secs % 60}s"
    if mins:
        return f"{mins}m{secs % 60}s"
    return f"{secs}s"


def go_float(value: float) -> int | float:
    """A float64 as Go's JSON writes it: whole numbers without a fraction (``0``, not ``0.0``)."""
    return int(value) if value.is_integer() else value
