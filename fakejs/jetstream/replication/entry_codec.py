"""The frame every replicated group's entries share, and the checks their bodies need.

An entry is a msgpack array ``[version, operation, body]``: the version of
its format, the operation's number (numbers are only ever added) and a map.
The meta group's (:mod:`fakejs.jetstream.cluster.entries`), a stream's
(:mod:`fakejs.jetstream.stream.entries`) and a consumer's
(:mod:`fakejs.jetstream.consumer.entries`) entries are framed here; each
codec names its own error, which every function raises through ``malformed``
(a callable taking the reason), and nothing else, for bytes that are not an
entry.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import msgpack

__all__ = ["MAX_INT64", "MAX_UINT64", "MIN_INT64", "Malformed", "number", "pack_entry", "text", "unpack_entry"]

MAX_UINT64 = 2**64 - 1
MAX_INT64 = 2**63 - 1
MIN_INT64 = -(2**63)

Malformed = Callable[[str], Exception]
"""Makes a codec's own error from the reason an entry is malformed."""

Operation = TypeVar("Operation", bound=enum.IntEnum)


def pack_entry(version: int, operation: enum.IntEnum, body: Mapping[str, Any]) -> bytes:
    """The entry's bytes: ``[version, operation, body]`` in msgpack (strings as str, bytes as bin)."""
    return bytes(msgpack.packb([version, int(operation), body], use_bin_type=True))


def unpack_entry(
    data: bytes, version: int, operations: type[Operation], malformed: Malformed
) -> tuple[Operation, dict[str, Any]]:
    """The operation and body ``data`` frames, of format ``version``; raises ``malformed(reason)`` otherwise."""
    try:
        document = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as exc:  # noqa: BLE001 - msgpack raises many kinds; all mean "not one"
        raise malformed(f"not msgpack ({type(exc).__name__})") from None
    if not isinstance(document, list) or len(document) != 3:
        raise malformed("not a [version, operation, body] array")
    found, operation, body = document
    if type(found) is not int or found != version:
        raise malformed(f"unknown version {found!r}")
    if not isinstance(body, dict):
        raise malformed("the body is not a map")
    if type(operation) is not int or operation not in operations.__members__.values():
        raise malformed(f"unknown operation {operation!r}")
    return operations(operation), body


def number(body: Mapping[str, Any], key: str, low: int, high: int, malformed: Malformed) -> int:
    """The integer ``body[key]``, within ``[low, high]``."""
    value = body.get(key)
    if type(value) is not int or not low <= value <= high:
        raise malformed(f"{key} is not an integer in [{low}, {high}]")
    return value


def text(body: Mapping[str, Any], key: str, malformed: Malformed, *, empty: bool = True) -> str:
    """The string ``body[key]`` (not empty, unless ``empty``)."""
    value = body.get(key)
    if not isinstance(value, str) or not (value or empty):
        raise malformed(f"{key} is missing or not a string" if not empty else f"{key} is not a string")
    return value
