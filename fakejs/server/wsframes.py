"""WebSocket frames as nats-server reads and writes them (RFC 6455, RFC 7692 without context takeover).

The frame rules are written out here rather than taken from a general
WebSocket library because a client sees nats-server's own choices: which
check fails first, the text of the close frame a broken frame earns
(``mask bit missing``, ``invalid continuation frame``), all pending output
in one binary frame (4 KiB frames for browsers), compression only above 64
bytes, and the close code each close reason maps to.  Compression is raw
DEFLATE with a fresh compressor per message (``server_no_context_takeover``):
the bytes differ from Go's ``flate`` but decompress to the same text.
"""

from __future__ import annotations

import struct
import zlib

from fakejs.server.layers import LayerFailed

OP_CONTINUATION = 0
OP_TEXT = 1
OP_BINARY = 2
OP_CLOSE = 8
OP_PING = 9
OP_PONG = 10

FIN = 0x80
RSV1 = 0x40
RSV23 = 0x30
MASK = 0x80

MAX_CONTROL_PAYLOAD = 125
BROWSER_FRAME_SIZE = 4096  # nats-server limits frames to browsers (User-Agent "Mozilla/...")
COMPRESS_THRESHOLD = 64  # output this small (or smaller) is never compressed
MAX_MESSAGE_MULTIPLE = 8  # a compressed message may carry several max_payload operations
MAX_MESSAGE_LIMIT = 64 * 1024 * 1024
DEFLATE_TAIL = b"\x00\x00\xff\xff"

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_PROTOCOL_ERROR = 1002
CLOSE_NO_STATUS = 1005
CLOSE_INVALID_PAYLOAD = 1007
CLOSE_POLICY_VIOLATION = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL_ERROR = 1011
CLOSE_TLS_HANDSHAKE = 1015

READ_ERROR = "Read Error"  # nats-server's close reason for a broken frame
MAX_PAYLOAD_EXCEEDED = "Maximum Message Payload Exceeded"

# nats-server's close reasons and the close code each earns (anything else: 1011).
_CLOSE_CODES: dict[str, int] = {"Client Closed": CLOSE_NORMAL, "TLS Handshake Failure": CLOSE_TLS_HANDSHAKE}
for _reason in (
    "Authentication Timeout",
    "Authentication Failure",
    "Slow Consumer (Pending Bytes)",
    "Slow Consumer (Write Deadline)",
    "Maximum Account Connections Exceeded",
    "Maximum Connections Exceeded",
    "Maximum Control Line Exceeded",
    "Maximum Subscriptions Exceeded",
    "Missing Account",
    "Authentication Expired",
    "Credentials Revoked",
):
    _CLOSE_CODES[_reason] = CLOSE_POLICY_VIOLATION
for _reason in ("Parse Error", "Protocol Violation", "Bad Client Protocol Version"):
    _CLOSE_CODES[_reason] = CLOSE_PROTOCOL_ERROR
for _reason in ("Write Error", "Read Error", "Stale Connection", "Server Shutdown"):
    _CLOSE_CODES[_reason] = CLOSE_GOING_AWAY
_CLOSE_CODES[MAX_PAYLOAD_EXCEEDED] = CLOSE_TOO_BIG


def frame_header(
    opcode: int, length: int, *, first: bool = True, final: bool = True, compressed: bool = False
) -> bytes:
    """An unmasked frame header (servers never mask)."""
    b0 = (opcode if first else OP_CONTINUATION) | (FIN if final else 0) | (RSV1 if compressed else 0)
    if length <= 125:
        return bytes((b0, length))
    if length < 65536:
        return struct.pack(">BBH", b0, 126, length)
    return struct.pack(">BBQ", b0, 127, length)


def control_frame(opcode: int, payload: bytes = b"") -> bytes:
    return frame_header(opcode, len(payload)) + payload


def close_payload(code: int, text: str) -> bytes:
    """The close frame's payload: the code, then the text (cut to fit with a trailing ``...``)."""
    body = text.encode()
    if len(body) > MAX_CONTROL_PAYLOAD - 2:
        body = body[: MAX_CONTROL_PAYLOAD - 5] + b"..."
    return struct.pack(">H", code) + body


def close_frame_for(reason: str) -> bytes:
    """The close frame nats-server sends when it closes a client for ``reason``."""
    return control_frame(OP_CLOSE, close_payload(_CLOSE_CODES.get(reason, CLOSE_INTERNAL_ERROR), reason))


def protocol_error(message: str) -> LayerFailed:
    """A broken frame: close code 1002 with nats-server's text, logged as a read error."""
    return LayerFailed(
        f"read error: {message}", READ_ERROR, control_frame(OP_CLOSE, close_payload(CLOSE_PROTOCOL_ERROR, message))
    )


def valid_close_code(code: int) -> bool:
    if code in (CLOSE_NO_STATUS, 1004, 1006, CLOSE_TLS_HANDSHAKE):
        return False
    return 1000 <= code < 5000 and not 1016 <= code <= 2999


def encode_output(data: bytes, *, compress: bool, frame_size: int = 0, whole_compressed: bool = False) -> bytes:
    """The session's output as frames: one binary frame, or ``frame_size`` pieces; deflated above 64 bytes."""
    if compress and len(data) > COMPRESS_THRESHOLD:
        deflater = zlib.compressobj(1, zlib.DEFLATED, -15)
        payload = deflater.compress(data) + deflater.flush(zlib.Z_SYNC_FLUSH)
        payload = payload.removesuffix(DEFLATE_TAIL)
        if frame_size and not whole_compressed and len(payload) > frame_size:
            return _fragments(payload, frame_size, compressed=True)
        return frame_header(OP_BINARY, len(payload), compressed=True) + payload
    if frame_size and len(data) > frame_size:
        # each piece is a whole binary frame of its own, as nats-server cuts them
        return b"".join(frame_header(OP_BINARY, len(piece)) + piece for piece in _pieces(data, frame_size))
    return frame_header(OP_BINARY, len(data)) + data


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def _fragments(payload: bytes, size: int, *, compressed: bool) -> bytes:
    """One message in continuation frames; only the first carries the compression bit."""
    pieces = _pieces(payload, size)
    out = []
    for index, piece in enumerate(pieces):
        first, final = index == 0, index == len(pieces) - 1
        out.append(
            frame_header(OP_BINARY, len(piece), first=first, final=final, compressed=compressed and first) + piece
        )
    return b"".join(out)


class FrameReader:
    """Client frames in, NATS bytes out; pongs and the close echo are left in :attr:`replies`.

    Holds the parse state between reads: a frame header may arrive in
    pieces, a message in many frames, a compressed message across reads.
    """

    def __init__(self, *, compression: bool, masked: bool, max_payload: int) -> None:
        self._compression = compression
        self._masked = masked
        self._max_payload = max_payload if max_payload > 0 else 1024 * 1024
        self._buffer = bytearray()
        self._final_seen = True  # the last data frame ended its message
        self._compressed = False  # the current message is compressed
        self._deflated: list[bytes] = []
        self._deflated_size = 0
        self.replies: list[bytes] = []
        self.closed = False  # the client sent a close frame

    def feed(self, data: bytes) -> bytes:
        """Parse what has arrived; returns the NATS bytes carried by complete frame pieces."""
        self._buffer += data
        out: list[bytes] = []
        while not self.closed:
            frame = self._next_frame()
            if frame is None:
                break
            opcode, final, _, payload = frame
            if opcode >= OP_CLOSE:
                self._control(opcode, payload)
            elif self._compressed:
                out.append(self._inflate(payload, final))
            else:
                out.append(payload)
        return b"".join(out)

    def _next_frame(self) -> tuple[int, bool, bool, bytes] | None:
        """The next whole frame (opcode, final, compressed, unmasked payload), checked as nats-server does."""
        buf = self._buffer
        if len(buf) < 2:
            return None
        b0, b1 = buf[0], buf[1]
        opcode, final, compressed = b0 & 0x0F, bool(b0 & FIN), bool(b0 & RSV1)
        if b0 & RSV23:
            raise protocol_error("RSV2 and RSV3 must be clear")
        if compressed and not self._compression:
            raise protocol_error("compressed frame received without negotiated permessage-deflate")
        if self._masked and not b1 & MASK:
            raise protocol_error("mask bit missing")
        length = b1 & 0x7F
        if opcode in (OP_CLOSE, OP_PING, OP_PONG):
            if length > MAX_CONTROL_PAYLOAD:
                raise protocol_error(f"control frame length bigger than maximum allowed of {MAX_CONTROL_PAYLOAD} bytes")
            if not final:
                raise protocol_error("control frame does not have final bit set")
            if compressed:
                raise protocol_error("control frame must not be compressed")
        elif opcode in (OP_TEXT, OP_BINARY):
            if not self._final_seen:
                raise protocol_error("new message started before final frame for previous message was received")
        elif opcode == OP_CONTINUATION:
            if self._final_seen or compressed:
                raise protocol_error("invalid continuation frame")
        else:
            raise protocol_error(f"unknown opcode {opcode}")
        offset = 2
        if length == 126:
            if len(buf) < 4:
                return None
            (length,) = struct.unpack_from(">H", buf, 2)
            offset = 4
        elif length == 127:
            if len(buf) < 10:
                return None
            (length,) = struct.unpack_from(">Q", buf, 2)
            if length & (1 << 63):
                raise protocol_error("invalid 64-bit payload length")
            offset = 10
        key = b""
        if b1 & MASK:
            if len(buf) < offset + 4:
                return None
            key = bytes(buf[offset : offset + 4])
            offset += 4
        if len(buf) < offset + length:
            return None
        payload = bytes(buf[offset : offset + length])
        del buf[: offset + length]
        if key:
            payload = _unmask(payload, key)
        if opcode in (OP_TEXT, OP_BINARY):
            self._compressed = compressed
        if opcode < OP_CLOSE:
            self._final_seen = final
        return opcode, final, compressed, payload

    def _control(self, opcode: int, payload: bytes) -> None:
        if opcode == OP_PING:
            self.replies.append(control_frame(OP_PONG, payload))
        elif opcode == OP_CLOSE:
            self.replies.append(control_frame(OP_CLOSE, _close_echo(payload)))
            self.closed = True

    def _inflate(self, payload: bytes, final: bool) -> bytes:
        """Collect a compressed message; at its last frame, inflate it (at most max_payload bytes)."""
        limit = min(self._max_payload * MAX_MESSAGE_MULTIPLE, MAX_MESSAGE_LIMIT)
        self._deflated_size += len(payload)
        if self._deflated_size > limit or (final and self._deflated_size + 9 > limit):
            raise LayerFailed(
                "read error: maximum payload exceeded", MAX_PAYLOAD_EXCEEDED, close_frame_for(MAX_PAYLOAD_EXCEEDED)
            )
        self._deflated.append(payload)
        if not final:
            return b""
        data = b"".join(self._deflated) + DEFLATE_TAIL
        self._deflated, self._deflated_size, self._compressed = [], 0, False
        inflater = zlib.decompressobj(-15)
        try:
            text = inflater.decompress(data, self._max_payload + 1)
        except zlib.error as exc:
            raise LayerFailed(f"read error: {exc}", READ_ERROR) from exc
        if len(text) > self._max_payload:
            raise LayerFailed(
                "read error: maximum payload exceeded", MAX_PAYLOAD_EXCEEDED, close_frame_for(MAX_PAYLOAD_EXCEEDED)
            )
        return text


def _close_echo(payload: bytes) -> bytes:
    """What answers a client's close frame: its code and text back (1007 for a text that is not UTF-8)."""
    if len(payload) == 1:
        raise protocol_error("close frame payload cannot be 1 byte")
    if not payload:
        return b""
    (code,) = struct.unpack_from(">H", payload)
    if not valid_close_code(code):
        raise protocol_error(f"invalid close status code {code}")
    body = payload[2:]
    try:
        text = body.decode()
    except UnicodeDecodeError:
        code, text = CLOSE_INVALID_PAYLOAD, "invalid utf8 body in close frame"
    return close_payload(code, text)


def _unmask(payload: bytes, key: bytes) -> bytes:
    """XOR with the 4-byte key, done on one big integer (much faster than per byte)."""
    n = len(payload)
    repeated = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(repeated, "little")).to_bytes(n, "little")
