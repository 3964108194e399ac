"""NATS header blocks: ``NATS/1.0[ <code>[ <text>]]\\r\\n(Key: Value\\r\\n)*\\r\\n``.

Lookups follow nats-server's byte search rather than a MIME parser: a key
matches only with the exact case, at the start of a line, immediately
followed by ``:``; the value skips leading spaces and runs to CRLF.  That
is what decides, for example, whether ``nats-msg-id`` deduplicates (it
does not).
"""

from __future__ import annotations

HEADER_LINE = b"NATS/1.0\r\n"
_VERSION = b"NATS/1.0"


def build(pairs: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (), status: str = "") -> bytes:
    """Build a header block; ``status`` is e.g. ``"404 No Messages"``."""
    parts = [_VERSION + (b" " + status.encode() if status else b""), b"\r\n"]
    for key, value in pairs:
        parts.append(key.encode() + b": " + value.encode("utf-8", "surrogateescape") + b"\r\n")
    parts.append(b"\r\n")
    return b"".join(parts)


def key_index(block: bytes, key: str) -> int:
    """Index of ``key`` at a line start followed by ``:``, or -1."""
    if not block:
        return -1
    bkey = key.encode()
    size = len(block)
    offset = 0
    while True:
        index = block.find(bkey, offset)
        if index < 2:
            return -1
        if index >= size - 1 or block[index - 1] != 0x0A or block[index - 2] != 0x0D:
            offset = index + len(bkey)
            continue
        if index + len(bkey) >= size:
            return -1
        if block[index + len(bkey)] != 0x3A:
            offset = index + len(bkey)
            continue
        return index


def get(block: bytes | None, key: str) -> bytes | None:
    """The first value of ``key``, or ``None`` (nats-server's ``getHeader``)."""
    if not block:
        return None
    index = key_index(block, key)
    if index < 0:
        return None
    index += len(key) + 1
    size = len(block)
    while index < size and block[index] == 0x20:
        index += 1
    end = block.find(b"\r\n", index)
    if end < 0:
        end = size
    return block[index:end]


def without_status(block: bytes) -> bytes:
    """Drop a status from the version line (``NATS/1.0 503 x`` -> ``NATS/1.0``).

    A block left with nothing but the version line becomes ``b""``.
    """
    end = block.find(b"\r")
    if not block.startswith(_VERSION) or end <= len(_VERSION):
        return block
    block = _VERSION + block[end:]
    return b"" if block == HEADER_LINE + b"\r\n" else block


def remove(block: bytes, key: str) -> bytes:
    """Drop every ``key`` line; returns ``b""`` if only the version line is left."""
    while True:
        index = key_index(block, key)
        if index < 1:
            return block
        end = block.find(b"\r\n", index)
        if end < 0:
            return block
        block = block[:index] + block[end + 2 :]
        if len(block) <= len(HEADER_LINE) + 2:
            return b""


def add(block: bytes | None, key: str, value: str) -> bytes:
    """Append ``key: value`` to a block (or start one)."""
    if block and len(block) > 2:
        return block[:-2] + key.encode() + b": " + value.encode("utf-8", "surrogateescape") + b"\r\n\r\n"
    return build([(key, value)])


def extend(block: bytes | None, pairs: list[tuple[str, str]]) -> bytes:
    """:func:`add` of every pair in turn, in one copy."""
    head = block[:-2] if block and len(block) > 2 else HEADER_LINE
    lines = [key.encode() + b": " + value.encode("utf-8", "surrogateescape") + b"\r\n" for key, value in pairs]
    return head + b"".join(lines) + b"\r\n"


def set_value(hdr: bytes | None, key: str, value: str) -> bytes:
    """nats-server's ``setHeader``: the first ``key`` line's value replaced in place, else the line appended."""
    index = key_index(hdr, key) if hdr else -1
    if hdr is None or index < 0:
        return add(hdr, key, value)
    start = index + len(key) + 1
    if start < len(hdr) and hdr[start] == 0x20:
        start += 1
    end = hdr.find(b"\r", start)
    if end < 0:
        return hdr
    return hdr[:start] + value.encode() + hdr[end:]


def status(block: bytes | None) -> tuple[int, str]:
    """The status code and description of a block, ``(0, "")`` when absent."""
    if not block or not block.startswith(_VERSION):
        return 0, ""
    line_end = block.find(b"\r\n")
    line = block[len(_VERSION) : line_end if line_end >= 0 else len(block)].strip()
    if not line:
        return 0, ""
    code, _, text = line.partition(b" ")
    try:
        return int(code), text.decode("utf-8", "replace")
    except ValueError:
        return 0, ""


def pairs(block: bytes | None) -> list[tuple[str, str]]:
    """All ``(key, value)`` pairs in order, for introspection and tests."""
    if not block:
        return []
    out = []
    for line in block.split(b"\r\n")[1:]:
        if not line:
            continue
        key, sep, value = line.partition(b":")
        if sep:
            out.append((key.decode("utf-8", "replace"), value.strip().decode("utf-8", "replace")))
    return out
