"""Reading values the way nats-server's option stage does.

nats-server asserts a value's Go type (``v.(string)``); a value of another
type panics, and the panic is reported against the last token it unwrapped
as ``interface conversion: interface {} is int64, not string``.
:class:`Mismatch` is that panic here; the handler of a top-level key
reports it against the token nats-server would name.  Also here: Go's
``net.SplitHostPort`` as ``listen`` uses it, and duration values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.gocompat.gotime import NS, parse_duration


def go_type(value: Any) -> str:
    """Go's ``%T`` of a parsed value."""
    if isinstance(value, Token):
        value = value.value
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.datetime):
        return "time.Time"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return type(value).__name__


def go_value(value: Any) -> str:
    """Go's ``%v`` of a parsed value, near enough for error texts."""
    if isinstance(value, Token):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value).removesuffix(".0") if value == int(value) else repr(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


_NAMES = {
    str: "string",
    int: "int64",
    bool: "bool",
    float: "float64",
    dict: "map[string]interface {}",
    list: "[]interface {}",
}


class Mismatch(Exception):
    """A Go type assertion that failed: nats-server's recovered panic, reported at ``token``."""

    def __init__(self, token: Token, message: str) -> None:
        super().__init__(message)
        self.token = token
        self.message = message


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def want(token: Token, kind: type, at: Token | None = None) -> Any:
    """``token``'s value if it has Go type ``kind``; else :class:`Mismatch` reported at ``at`` (or ``token``)."""
    value = token.value
    if not _is(value, kind):
        raise Mismatch(at or token, f"interface conversion: interface {{}} is {go_type(value)}, not {_NAMES[kind]}")
    return value


def split_host_port(text: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``; ``ValueError`` when it fails (the caller words the message)."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or not text[end + 1 : end + 2] == ":":
            raise ValueError(text)
        host, port = text[1:end], text[end + 2 :]
        if "[" in host or "]" in port or "[" in port:
            raise ValueError(text)
        return host, port
    colon = text.rfind(":")
    if colon < 0:
        raise ValueError(text)
    host, port = text[:colon], text[colon + 1 :]
    if ":" in host or "[" in host or "]" in host or "[" in port or "]" in port:
        raise ValueError(text)
    return host, port


def _atoi(text: str) -> int:
    """Go's ``strconv.Atoi``: an optional sign and decimal digits only."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(text)
    number = int(text)
    if not -(2**63) <= number < 2**63:
        raise ValueError(text)
    return number


def parse_listen(value: Any) -> tuple[str, int]:
    """nats-server's ``listen``-style value (a port, or ``host:port``): (host, port); ``ValueError`` has its text."""
    if _is(value, int):
        return "", int(value)
    if isinstance(value, str):
        try:
            host, port = split_host_port(value)
        except ValueError:
            raise ValueError(f'could not parse address string "{value}"') from None
        try:
            return host, _atoi(port)
        except ValueError:
            raise ValueError(f'could not parse port "{port}"') from None
    raise ValueError(f"expected port or host:port, got {go_type(value)}")


def duration(field: str, token: Token, context: ConfigContext, at: Token | None = None) -> int | None:
    """nats-server's ``parseDuration``: a Go duration string, or (with a warning) whole seconds; nanoseconds.

    None after an error (already reported).
    """
    value = token.value
    if isinstance(value, str):
        try:
            return parse_duration(value)
        except ValueError as exc:
            context.error(token, f"error parsing {field}: {exc}")
            return None
    seconds = want(token, int, at)
    context.warning(token, f'invalid use of field "{field}": {field} should be converted to a duration')
    return int(seconds) * NS


def string_array(field: str, token: Token, context: ConfigContext) -> list[str]:
    """nats-server's ``parseStringArray``: one string or an array of them."""
    value = token.value
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        found = []
        for item in value:
            if isinstance(item.value, str):
                found.append(item.value)
            else:
                context.error(item, f"error parsing {field}: unsupported type in array {go_type(item.value)}")
        return found
    context.error(token, f"error parsing {field}: unsupported type {go_type(value)}")
    return []
