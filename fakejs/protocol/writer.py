"""Server-to-client frames, byte for byte as nats-server writes them.

Pure functions from values to ``bytes``; nothing here knows about sockets.
"""

from __future__ import annotations

from typing import Any

from fakejs.gocompat.gojson import dumps

PING = b"PING\r\n"
PONG = b"PONG\r\n"
OK = b"+OK\r\n"


def encode_subject(subject: str) -> bytes:
    """Subjects travel as the bytes the client sent (see events module)."""
    return subject.encode("utf-8", "surrogateescape")


def info(fields: dict[str, Any]) -> bytes:
    """``INFO {...} \\r\\n`` -- note the blank before CRLF, as nats-server has it."""
    return b"INFO " + dumps(fields).encode() + b" \r\n"


def err(text: str) -> bytes:
    """``-ERR '<text>'\\r\\n``."""
    return b"-ERR '" + text.encode("utf-8", "surrogateescape") + b"'\r\n"


def msg(subject: bytes, sid: bytes, reply: bytes | None, payload: bytes) -> bytes:
    """``MSG <subject> <sid> [reply] <size>`` followed by the payload.

    ``reply=None`` writes an empty reply-to field (two spaces), as
    nats-server does for some internal messages.  Each frame is one
    formatting: one buffer made, the payload copied once.
    """
    if reply:
        return b"MSG %s %s %s %d\r\n%s\r\n" % (subject, sid, reply, len(payload), payload)
    if reply is None:
        return b"MSG %s %s  %d\r\n%s\r\n" % (subject, sid, len(payload), payload)
    return b"MSG %s %s %d\r\n%s\r\n" % (subject, sid, len(payload), payload)


def hmsg(subject: bytes, sid: bytes, reply: bytes | None, headers: bytes, payload: bytes) -> bytes:
    """``HMSG <subject> <sid> [reply] <hdr size> <total size>`` and the body."""
    hdr = len(headers)
    if reply:
        return b"HMSG %s %s %s %d %d\r\n%s%s\r\n" % (subject, sid, reply, hdr, hdr + len(payload), headers, payload)
    if reply is None:
        return b"HMSG %s %s  %d %d\r\n%s%s\r\n" % (subject, sid, hdr, hdr + len(payload), headers, payload)
    return b"HMSG %s %s %d %d\r\n%s%s\r\n" % (subject, sid, hdr, hdr + len(payload), headers, payload)


def go_quote(text: str) -> str:
    """Go's ``%q`` for the ASCII-printable texts nats-server quotes in errors.

    Non-printable and non-ASCII characters use Go's escapes so the output
    stays byte-identical for odd subjects too.
    """
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif ch in _GO_SHORT_ESCAPES:
            out.append(_GO_SHORT_ESCAPES[ch])
        elif 0xDC80 <= code <= 0xDCFF:  # an undecodable byte (surrogateescape)
            out.append("\\x%02x" % (code - 0xDC00))
        elif code < 0x20 or code == 0x7F:
            out.append("\\x%02x" % code)
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x10000:
            out.append("\\u%04x" % code)
        else:
            out.append("\\U%08x" % code)
    out.append('"')
    return "".join(out)


_GO_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
