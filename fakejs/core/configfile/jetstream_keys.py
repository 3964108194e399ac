"""``jetstream`` (a bool, ``enabled``/``disabled``, or a block) and the top-level ``store_dir``.

nats-server's ``parseJetStream``: the first failing check of the block ends
it (the rest of the block is not read); a value of the wrong Go type is
reported at the top-level ``jetstream`` key, since this parser does not
recover its own panics.  Sizes are integers (with the format's suffixes) or
strings ending in K, M, G or T (powers of 1024).
"""

from __future__ import annotations

from fakejs.conf import Token
from fakejs.core.cluster_checks import WILL_EXTEND
from fakejs.core.configfile import jetstream_limits
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import duration, go_type, want
from fakejs.core.options import ServerOptions
from fakejs.gocompat.gotime import NS

_SHIFTS = {"K": 10, "M": 20, "G": 30, "T": 40}


class _Stop(Exception):
    """nats-server's ``return &configErr{...}`` out of the block: the error, at its token."""

    def __init__(self, token: Token, reason: str) -> None:
        super().__init__(reason)
        self.token = token
        self.reason = reason


def _parse_int(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)``, with its error text."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    number = int(text)
    if not -(2**63) <= number < 2**63:
        raise ValueError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return number


def storage_size(value: object) -> int:
    """nats-server's ``getStorageSize``; ``ValueError`` with its text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise ValueError("must be int64 or string")
    if not value:
        return 0
    number = _parse_int(value[:-1])
    shift = _SHIFTS.get(value[-1])
    if shift is None:
        raise ValueError("sizes defined as strings must end in K, M, G, T")
    return ((number << shift) + 2**63) % 2**64 - 2**63


def store_dir(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    if options.store_dir:
        context.error(token, "Duplicate 'store_dir' configuration")
        return
    options.store_dir = want(token, str)


def apply(key: str, token: Token, options: ServerOptions, context: ConfigContext) -> None:
    value = token.value
    if isinstance(value, bool):
        options.jetstream = value
    elif isinstance(value, str):
        word = value.lower()
        if word in ("enabled", "enable"):
            options.jetstream = True
        elif word in ("disabled", "disable"):
            options.jetstream = False
        else:
            context.error(token, f"Expected 'enabled' or 'disabled' for string value, got '{value}'")
    elif isinstance(value, dict):
        try:
            enable = True
            for member_key, member in value.items():
                enable = _member(member_key, member, token, options, context, enable)
            options.jetstream = enable
        except _Stop as stop:
            context.error(stop.token, stop.reason)
    else:
        context.error(token, f"Expected map, bool or string to define JetStream, got {go_type(value)}")


def _size(name: str, member: Token) -> int:
    try:
        return storage_size(member.value)
    except ValueError as exc:
        raise _Stop(member, f"{name} {exc}") from None


def _count(key: str, member: Token) -> int:
    value = member.value
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Stop(member, f'Expected a parseable size for "{key}", got {_go_value(value)}')
    return value


def _go_s(value: object) -> str:
    """Go's ``%s`` of a value: strings as they are, other types as ``%!s(type=value)``."""
    if isinstance(value, str):
        return value
    return f"%!s({go_type(value)}={_go_value(value)})"


def _go_value(value: object) -> str:
    """Go's ``%v`` of a simple value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _member(key: str, member: Token, top: Token, options: ServerOptions, context: ConfigContext, enable: bool) -> bool:
    lowered = key.lower()
    if lowered == "strict":
        if not isinstance(member.value, bool):
            raise _Stop(member, f"Expected 'true' or 'false' for bool value, got '{_go_s(member.value)}'")
        options.jetstream_strict = member.value
    elif lowered in ("store", "store_dir", "storedir"):
        if options.store_dir:
            raise _Stop(member, "Duplicate 'store_dir' configuration")
        options.store_dir = want(member, str, top)
    elif lowered in ("sync", "sync_interval"):
        if isinstance(member.value, str) and member.value.lower() == "always":
            options.jetstream_sync_always = True
        else:
            ns = duration(key, member, context, top)
            options.jetstream_sync_interval = None if ns is None else ns / NS
    elif lowered in ("max_memory_store", "max_mem_store", "max_mem"):
        options.jetstream_max_memory = _size("max_mem_store", member)
    elif lowered in ("max_file_store", "max_file"):
        options.jetstream_max_store = _size("max_file_store", member)
    elif lowered == "domain":
        options.jetstream_domain = want(member, str, top)
    elif lowered in ("enable", "enabled"):
        return bool(want(member, bool, top))
    elif lowered == "unique_tag":
        options.jetstream_unique_tag = want(member, str, top).strip().lower()
    elif lowered == "max_outstanding_catchup":
        options.jetstream_max_catchup = _size(lowered, member)
    elif lowered == "max_buffered_size":
        options.jetstream_max_buffered_size = _size(lowered, member)
    elif lowered == "max_buffered_msgs":
        options.jetstream_max_buffered_msgs = _count(key, member)
    elif lowered == "request_queue_limit":
        options.jetstream_request_queue_limit = _count(key, member)
    elif lowered == "info_queue_limit":
        options.jetstream_info_queue_limit = _count(key, member)
    elif lowered == "extension_hint":
        hint = want(member, str, top)
        if hint.lower() == WILL_EXTEND:
            context.refuse(member, f"a JetStream extended over a leaf node (jetstream {{ {key}: {hint} }})")
        options.jetstream_extension_hint = hint
    elif lowered == "limits":
        stop = jetstream_limits.parse(member, options, context)
        if stop is not None:
            raise _Stop(*stop)
    elif lowered in REFUSED:
        context.refuse(member, f"{REFUSED[lowered]} (jetstream {{ {key} }})")
    else:
        context.unknown(key, member)
    return enable


# Keys of the block that would change what is stored or how: refused until fakejs has them.
REFUSED = {
    "key": "encryption at rest",
    "ek": "encryption at rest",
    "encryption_key": "encryption at rest",
    "prev_key": "encryption at rest",
    "prev_ek": "encryption at rest",
    "prev_encryption_key": "encryption at rest",
    "cipher": "encryption at rest",
    "tpm": "encryption at rest",
    "meta_compact": "clustered JetStream",
    "meta_compact_size": "clustered JetStream",
    "meta_compact_sync": "clustered JetStream",
    "max_concurrent_io": "a limit of concurrent store I/O",
}
