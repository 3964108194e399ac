"""Times and durations written and read the way Go (and so nats-server) does.

Clients see Go's formats in JSON replies (``"2026-01-02T15:04:05.123456789Z"``,
``"0001-01-01T00:00:00Z"`` for "never"), in headers (``Nats-TTL: 1m30s``) and
in status texts (``Exceeded MaxRequestExpires of 1s``).  Internally fakejs
keeps times as integer nanoseconds since the Unix epoch and durations as
integer nanoseconds.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta

NS = 1_000_000_000
ZERO_TIME = "0001-01-01T00:00:00Z"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def time_quote(text: str) -> str:
    """How Go's time package quotes input in its errors: control and non-ASCII runes byte by byte as ``\\xHH``."""
    out = ['"']
    for ch in text:
        if " " <= ch < "\x80":
            out.append("\\" + ch if ch in '"\\' else ch)
        else:
            out.extend("\\x%02x" % b for b in ch.encode("utf-8", "surrogatepass"))
    out.append('"')
    return "".join(out)


@functools.lru_cache(maxsize=256)
def _second_stamp(seconds: int) -> str:
    """The date and time of day of a whole second (cached: timestamps written together share it)."""
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")


def rfc3339(ns: int, offset: int = 0) -> str:
    """Go's ``time.RFC3339Nano``; ``0`` means the zero time.

    ``offset`` (seconds east of UTC) writes the time in that zone, as Go
    does for a ``time.Time`` parsed with an offset.
    """
    if ns == 0 and offset == 0:
        return ZERO_TIME
    seconds, frac = divmod(ns, NS)
    stamp = _second_stamp(seconds + offset)
    if frac:
        stamp = f"{stamp}.{frac:09d}".rstrip("0")
    if offset == 0:
        return stamp + "Z"
    sign = "+" if offset > 0 else "-"
    hours, minutes = divmod(abs(offset) // 60, 60)
    return f"{stamp}{sign}{hours:02d}:{minutes:02d}"


def unix_nano(ns: int) -> int:
    """Go's ``Time.UnixNano``: wraps outside the int64 range (years before 1678 or after 2262)."""
    return (ns + 2**63) % 2**64 - 2**63


class GoTime:
    """A ``time.Time`` from JSON: an instant plus the zone offset it was written with.

    Compares and hashes by instant (Go's ``Time.Equal``); :meth:`text` writes
    it back with its offset, as Go marshals it.
    """

    __slots__ = ("ns", "offset")

    def __init__(self, ns: int, offset: int = 0) -> None:
        self.ns = ns
        self.offset = offset

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GoTime) and other.ns == self.ns

    def __hash__(self) -> int:
        return hash(self.ns)

    def __repr__(self) -> str:
        return f"GoTime({self.text()})"

    def text(self) -> str:
        return rfc3339(self.ns, self.offset)

    def utc(self) -> GoTime:
        return GoTime(self.ns, 0)

    @property
    def is_zero(self) -> bool:
        return self.ns == 0 and self.offset == 0


_RFC3339_RE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d\d):(\d\d))$"
)


def parse_rfc3339(text: str) -> int:
    """Parse an RFC 3339 time into Unix nanoseconds; raises ``ValueError``."""
    match = _RFC3339_RE.match(text)
    if match is None:
        raise ValueError(f"cannot parse {text!r} as RFC 3339")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    frac = match.group(7) or ""
    nanos = int(frac.ljust(9, "0")) if frac else 0
    offset = 0
    if match.group(9):
        offset = (int(match.group(10)) * 60 + int(match.group(11))) * 60
        if match.group(9) == "-":
            offset = -offset
    moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC) - timedelta(seconds=offset)
    if year == 1 and month == 1 and day == 1 and hour == minute == second == 0 and nanos == 0 and offset == 0:
        return 0
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * NS + nanos


_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": NS, "m": 60 * NS, "h": 3600 * NS}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Go's ``time.ParseDuration``; raises ``ValueError`` with Go's message."""
    original = text
    if not text:
        raise ValueError("time: invalid duration " + time_quote(original))
    sign = 1
    if text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0
    if not text:
        raise ValueError("time: invalid duration " + time_quote(original))
    total = 0
    pos = 0
    while pos < len(text):
        match = _DURATION_PART.match(text, pos)
        if match is None:
            if re.match(r"(\d+(?:\.\d*)?|\.\d+)", text[pos:]):
                number = re.match(r"(\d+(?:\.\d*)?|\.\d+)", text[pos:])
                assert number is not None
                rest = text[pos + number.end() :]
                unit_text = re.match(r"[^\d.]*", rest)
                if unit_text and unit_text.group(0):
                    raise ValueError(
                        f"time: unknown unit {time_quote(unit_text.group(0))} in duration {time_quote(original)}"
                    )
                raise ValueError("time: missing unit in duration " + time_quote(original))
            raise ValueError("time: invalid duration " + time_quote(original))
        amount, unit = match.group(1), match.group(2)
        whole, _, frac = amount.partition(".")
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // (10 ** len(frac))
        total += value
        pos = match.end()
    if total > 2**63 - 1:
        raise ValueError("time: invalid duration " + time_quote(original))
    return sign * total


def format_duration(ns: int) -> str:
    """Go's ``time.Duration.String()``: ``1.5s``, ``2m0s``, ``500ms``, ``0s``."""
    if ns == 0:
        return "0s"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    if ns < NS:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3600 * NS)
    minutes, rest = divmod(rest, 60 * NS)
    seconds = _fraction(rest, NS) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{seconds}"
    if minutes:
        return f"{sign}{minutes}m{seconds}"
    return sign + seconds


def _fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}." + f"{frac:0{digits}d}".rstrip("0")


_LAYOUT = "2006-01-02T15:04:05Z07:00"
_ELEMENTS = (
    ("2006", r"\d{4}"),
    ("-", "-"),
    ("01", r"\d\d"),
    ("-", "-"),
    ("02", r"\d\d"),
    ("T", "T"),
    ("15", r"\d\d"),
    (":", ":"),
    ("04", r"\d\d"),
    (":", ":"),
    ("05", r"\d\d(?:\.\d+)?"),
    ("Z07:00", r"(?:Z|[+-]\d\d:\d\d)"),
)


# Go checks each element as it reads it, in layout order: (name, text slice, low, high).
_RANGES = (
    ("month", slice(5, 7), 1, 12),
    ("day", slice(8, 10), 0, 31),
    ("hour", slice(11, 13), 0, 23),
    ("minute", slice(14, 16), 0, 59),
    ("second", slice(17, 19), 0, 59),
)


def _check_ranges(text: str) -> None:
    """Raise Go's ``<element> out of range`` for the first element out of its range."""
    for name, where, low, high in _RANGES:
        if not low <= int(text[where]) <= high:
            raise ValueError(f"parsing time {time_quote(text)}: {name} out of range")


def parse_go_time(text: str) -> GoTime:
    """Go's strict RFC 3339 parse (``time.Time`` from JSON); ``ValueError`` has Go's text."""
    rest = text
    for element, pattern in _ELEMENTS:
        match = re.match(pattern, rest)
        if match is None:
            raise ValueError(
                f"parsing time {time_quote(text)} as {time_quote(_LAYOUT)}: cannot parse {time_quote(rest)} as {time_quote(element)}"
            )
        rest = rest[match.end() :]
    if rest:
        raise ValueError(f"parsing time {time_quote(text)}: extra text: {time_quote(rest)}")
    _check_ranges(text)
    try:
        ns = parse_rfc3339(text)
    except ValueError:
        raise ValueError(f"parsing time {time_quote(text)}: day out of range") from None
    zone = re.search(r"([+-])(\d\d):(\d\d)$", text)
    offset = 0
    if zone:
        offset = (int(zone.group(2)) * 60 + int(zone.group(3))) * 60 * (1 if zone.group(1) == "+" else -1)
    return GoTime(ns, offset)
