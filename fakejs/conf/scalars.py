"""Scalar items to Python values, with nats-server's rules and error texts.

Sizes: a number may carry a suffix, matched case-insensitively.  A bare
letter is a power of 1000 (``k`` = 10^3, ``m``, ``g``, ``t``, ``p``, ``e``);
the letter followed by ``b``, ``i`` or ``ib`` is a power of 1024 (``kb`` =
``ki`` = ``kib`` = 2^10, up to ``eb`` = 2^60).  Any other run of ``b``/``i``
letters (``1kbb``) lexes as a number but gives no value at all: nats-server
silently drops the key.  Products wrap around like Go's int64.
"""

from __future__ import annotations

import datetime as dt
import math

from fakejs.conf.errors import ConfigError
from fakejs.conf.lexcore import is_digit

_INT64 = 1 << 64
_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5, "e": 6}
#: Every size suffix nats-server knows, with its multiplier.
SUFFIXES: dict[str, int] = {}
for _letter, _power in _POWERS.items():
    if _letter:
        SUFFIXES[_letter] = 1000**_power
        for _tail in ("b", "i", "ib"):
            SUFFIXES[_letter + _tail] = 1024**_power
SUFFIXES[""] = 1


def _wrap64(number: int) -> int:
    """Go's int64 overflow: silently modulo 2^64."""
    return (number + (1 << 63)) % _INT64 - (1 << 63)


def _go_parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: None for bad syntax, ValueError-free; raises on range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(text)


def integer(val: str) -> int | None:
    """An integer item's value, or None when its suffix is unknown (nats-server then sets nothing)."""
    # nats-server counts leading digits and minus signs in characters and slices the bytes there.
    count = 0
    for ch in val:
        if not is_digit(ch) and ch != "-":
            break
        count += 1
    raw = val.encode("utf-8", "surrogateescape")
    number_text = raw[:count].decode("utf-8", "surrogateescape")
    suffix = raw[count:].decode("utf-8", "surrogateescape").strip().lower()
    number = _go_parse_int(number_text)
    if number is None:
        raise ConfigError(f"expected integer, but got '{val}'")
    if not -(1 << 63) <= number < (1 << 63):
        raise ConfigError(f"integer '{val}' is out of the range")
    multiplier = SUFFIXES.get(suffix)
    if multiplier is None:
        return None
    return _wrap64(number * multiplier)


def floating(val: str) -> float:
    """A float item's value (``1.5``, ``-0.25``); Go's range error for ones too large."""
    if not val.isascii():
        raise ConfigError(f"expected float, but got '{val}'")
    try:
        number = float(val)
    except ValueError:
        raise ConfigError(f"expected float, but got '{val}'") from None
    if math.isinf(number):
        raise ConfigError(f"float '{val}' is out of the range")
    return number


def boolean(val: str) -> bool:
    """``true``/``yes``/``on`` and ``false``/``no``/``off`` in any letter case."""
    lowered = val.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    raise ConfigError(f"expected boolean value, but got '{val}'")


def datetime(val: str) -> dt.datetime:
    """A Zulu timestamp, ``2016-05-04T18:53:41Z``, as an aware UTC datetime."""
    try:
        if not val.isascii():
            raise ValueError(val)
        stamp = dt.datetime.strptime(val, "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        raise ConfigError(f"expected Zulu formatted DateTime, but got '{val}'") from None
    return stamp.replace(tzinfo=dt.UTC)
