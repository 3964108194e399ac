"""WebSocket frames on wsproto's sans-IO frame protocol, with nats-server's visible choices.

wsproto (:class:`wsproto.frame_protocol.FrameProtocol`, server side, with
:class:`~wsproto.extensions.PerMessageDeflate` when compression was
negotiated) parses and serializes the frames.  What a client can tell apart
from nats-server is adjusted here, and only that:

* the checks nats-server makes on a frame header run first, in its order,
  with its texts (``RSV2 and RSV3 must be clear``, ``mask bit missing``...);
  wsproto's own :class:`~wsproto.frame_protocol.ParseFailed` messages are
  translated by a small table;
* like nats-server, a payload length needlessly written in 2 or 8 bytes is
  accepted, text frames are not checked for UTF-8, a ``Nats-No-Masking``
  client sends unmasked frames, and a close frame is echoed with nats-server's
  rules (close codes 1012-1014 and 3000-4999 accepted, a body that is not
  UTF-8 answered with 1007);
* output: all pending bytes in one binary message, compressed only above 64
  bytes, without context takeover; browsers get frames of at most 4 KiB (a
  compressed message is deflated whole, then cut, as nats-server does);
* a compressed message is limited as nats-server limits it (8 times
  max_payload of compressed bytes, max_payload once inflated), and each close
  reason earns nats-server's close code.
"""

from __future__ import annotations

import struct

from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import (
    CloseReason,
    Frame,
    FrameDecoder,
    FrameProtocol,
    MessageDecoder,
    Opcode,
    ParseFailed,
    RsvBits,
)

from fakejs.core.clientio import READ_ERROR
from fakejs.server.layers import LayerFailed

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

# wsproto's ParseFailed messages (by prefix) and nats-server's words for the same fault.
_TEXTS = (
    ("unexpected CONTINUATION", "invalid continuation frame"),
    ("expected CONTINUATION", "new message started before final frame for previous message was received"),
)


def close_reason_code(reason: str) -> int:
    """The close code nats-server sends when it closes a client for ``reason``."""
    return _CLOSE_CODES.get(reason, CLOSE_INTERNAL_ERROR)


def close_text(text: str) -> str:
    """A close frame's text, cut to fit a control frame with a trailing ``...`` (nats-server's rule)."""
    body = text.encode()
    if len(body) > MAX_CONTROL_PAYLOAD - 2:
        return body[: MAX_CONTROL_PAYLOAD - 5].decode(errors="ignore") + "..."
    return text


def valid_close_code(code: int) -> bool:
    """nats-server's ``wsIsValidCloseStatus`` (wider than wsproto's: 1012-1014 and 3000-4999 pass)."""
    if code in (CLOSE_NO_STATUS, 1004, 1006, CLOSE_TLS_HANDSHAKE):
        return False
    return 1000 <= code < 5000 and not 1016 <= code <= 2999


class NatsDeflate(PerMessageDeflate):
    """permessage-deflate without context takeover, limited and framed as nats-server does.

    Inbound, wsproto's inflating is kept; this counts the compressed bytes
    of a message (at most 8 x max_payload) and the inflated ones (at most
    max_payload).  Outbound, the layer deflates a whole message with
    :meth:`deflate` and frames the result itself (so that it can cut it in
    4 KiB frames for browsers); :meth:`frame_outbound` only marks the first
    frame of such a message with RSV1.
    """

    def __init__(self, max_payload: int) -> None:
        super().__init__(client_no_context_takeover=True, server_no_context_takeover=True)
        self.finalize("permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        self._max_payload = max_payload
        self._limit = min(max_payload * MAX_MESSAGE_MULTIPLE, MAX_MESSAGE_LIMIT)
        self._compressed_in = 0
        self._inflated = 0
        self.within_limit = b""  # of a message inflating beyond max_payload: its first max_payload bytes
        self.deflated_output = False  # the frames being written carry a message made by deflate()

    def frame_inbound_header(
        self, proto: FrameDecoder | FrameProtocol, opcode: Opcode, rsv: RsvBits, payload_length: int
    ) -> CloseReason | RsvBits:
        if opcode is not Opcode.CONTINUATION and not opcode.iscontrol():
            self._compressed_in = self._inflated = 0
        return super().frame_inbound_header(proto, opcode, rsv, payload_length)

    def frame_inbound_payload_data(self, proto: FrameDecoder | FrameProtocol, data: bytes) -> bytes | CloseReason:
        self._compressed_in += len(data)
        if self._compressed_in > self._limit:
            return CloseReason.MESSAGE_TOO_BIG
        return self._count(super().frame_inbound_payload_data(proto, data))

    def frame_inbound_complete(self, proto: FrameDecoder | FrameProtocol, fin: bool) -> bytes | CloseReason | None:
        if fin and self._compressed_in and self._compressed_in + len(DEFLATE_TAIL) > self._limit:
            return CloseReason.MESSAGE_TOO_BIG
        result = super().frame_inbound_complete(proto, fin)
        return self._count(result) if isinstance(result, bytes) else result

    def _count(self, inflated: bytes | CloseReason) -> bytes | CloseReason:
        if isinstance(inflated, bytes) and self._compressed_in:
            room = self._max_payload - self._inflated
            self._inflated += len(inflated)
            if self._inflated > self._max_payload:
                self.within_limit = inflated[:room]  # nats-server parses a message up to max_payload bytes
                return CloseReason.MESSAGE_TOO_BIG
        return inflated

    def deflate(self, proto: FrameProtocol, data: bytes) -> bytes:
        """One whole message deflated with a fresh compressor (no context takeover)."""
        _, payload = super().frame_outbound(proto, Opcode.BINARY, RsvBits(False, False, False), data, True)
        return payload

    def frame_outbound(
        self, proto: FrameDecoder | FrameProtocol, opcode: Opcode, rsv: RsvBits, data: bytes, fin: bool
    ) -> tuple[RsvBits, bytes]:
        if self.deflated_output and opcode is not Opcode.CONTINUATION and not opcode.iscontrol():
            rsv = RsvBits(True, rsv.rsv2, rsv.rsv3)
        return rsv, data


class _NatsFrameDecoder(FrameDecoder):
    """wsproto's frame decoder behind nats-server's header checks (run first, in its order)."""

    def __init__(self, *, masked: bool, compression: bool, extensions: list[NatsDeflate]) -> None:
        # a Nats-No-Masking client sends unmasked frames: wsproto's client-side rule
        super().__init__(client=not masked, extensions=list(extensions))
        self._masked = masked
        self._compression = compression

    def parse_header(self) -> bool:
        if len(self.buffer) >= 2:
            problem = self._header_problem(self.buffer.buffer[0], self.buffer.buffer[1])
            if problem:
                raise ParseFailed(problem)
        return super().parse_header()

    def _header_problem(self, b0: int, b1: int) -> str:
        """nats-server's checks on a frame's first two bytes, in its order; "" when they pass."""
        opcode, final, compressed, length = b0 & 0x0F, bool(b0 & 0x80), bool(b0 & 0x40), b1 & 0x7F
        if b0 & 0x30:
            return "RSV2 and RSV3 must be clear"
        if compressed and not self._compression:
            return "compressed frame received without negotiated permessage-deflate"
        if self._masked and not b1 & 0x80:
            return "mask bit missing"
        if opcode in (Opcode.CLOSE, Opcode.PING, Opcode.PONG):
            if length > MAX_CONTROL_PAYLOAD:
                return f"control frame length bigger than maximum allowed of {MAX_CONTROL_PAYLOAD} bytes"
            if not final:
                return "control frame does not have final bit set"
            if compressed:
                return "control frame must not be compressed"
        elif opcode == Opcode.CONTINUATION and compressed:
            return "invalid continuation frame"
        elif opcode not in (Opcode.CONTINUATION, Opcode.TEXT, Opcode.BINARY):
            return f"unknown opcode {opcode}"
        return ""

    def parse_extended_payload_length(self, opcode: Opcode, payload_len: int) -> int | None:
        """As nats-server, a length written in more bytes than needed is accepted."""
        size = {126: 2, 127: 8}.get(payload_len)
        if size is None:
            return payload_len
        data = self.buffer.consume_exactly(size)
        if data is None:
            return None
        length = int.from_bytes(data, "big")
        if length >> 63:
            raise ParseFailed("invalid 64-bit payload length")
        return length


class _BytesMessages(MessageDecoder):
    """Text frames carry NATS bytes as binary ones do (nats-server does not check them for UTF-8)."""

    def process_frame(self, frame: Frame) -> Frame:
        if frame.opcode is Opcode.TEXT:
            frame = frame._replace(opcode=Opcode.BINARY)
        return super().process_frame(frame)


class NatsFrameProtocol(FrameProtocol):
    """wsproto's server-side frame protocol with the decoder and close rules above."""

    def __init__(self, *, masked: bool, deflate: NatsDeflate | None) -> None:
        extensions = [deflate] if deflate is not None else []
        super().__init__(client=False, extensions=list(extensions))
        self._frame_decoder = _NatsFrameDecoder(masked=masked, compression=deflate is not None, extensions=extensions)
        self._message_decoder = _BytesMessages()

    def _process_close(self, frame: Frame) -> Frame:
        """nats-server's reading of a close frame: ``(code, text)`` to echo; 1005 means no payload."""
        data = frame.payload
        assert isinstance(data, bytes | bytearray)
        if len(data) == 1:
            raise ParseFailed("close frame payload cannot be 1 byte")
        code, text = CLOSE_NO_STATUS, ""
        if data:
            (code,) = struct.unpack_from(">H", data)
            if not valid_close_code(code):
                raise ParseFailed(f"invalid close status code {code}")
            try:
                text = bytes(data[2:]).decode()
            except UnicodeDecodeError:
                code, text = CLOSE_INVALID_PAYLOAD, "invalid utf8 body in close frame"
        return Frame(frame.opcode, (code, text), frame.frame_finished, frame.message_finished)


def close_frame(proto: FrameProtocol, code: int, text: str) -> bytes:
    """A close frame (empty for 1005, "no status", as nats-server echoes a bare close)."""
    if code == CLOSE_NO_STATUS:
        return bytes(proto.close())
    return bytes(proto.close(code, close_text(text)))


def frame_failure(proto: FrameProtocol, failed: ParseFailed) -> LayerFailed:
    """A broken frame as nats-server ends the connection for it."""
    if failed.code == CloseReason.MESSAGE_TOO_BIG:  # nats-server closes it as a read error, without a frame
        return LayerFailed("read error: maximum payload exceeded", READ_ERROR)
    if failed.code == CloseReason.INVALID_FRAME_PAYLOAD_DATA:  # a compressed message that does not inflate
        return LayerFailed(f"read error: {failed}", READ_ERROR)
    message = str(failed)
    for prefix, text in _TEXTS:
        if message.startswith(prefix):
            message = text
            break
    return LayerFailed(f"read error: {message}", READ_ERROR, close_frame(proto, CLOSE_PROTOCOL_ERROR, message))


class FrameCodec:
    """One client's frames: client frames in, NATS bytes out; the session's output in frames.

    Pongs and the close echo are left in :attr:`replies`; :attr:`closed`
    tells that the client sent a close frame.
    """

    def __init__(self, *, compression: bool, masked: bool, max_payload: int, frame_size: int = 0) -> None:
        self._deflate = NatsDeflate(max_payload if max_payload > 0 else 1024 * 1024) if compression else None
        self._proto = NatsFrameProtocol(masked=masked, deflate=self._deflate)
        self._frame_size = frame_size  # 0: output in one frame
        self.whole_compressed = False  # never cut a compressed message into frames (Safari)
        self.replies: list[bytes] = []
        self.closed = False

    def feed(self, data: bytes) -> bytes:
        """Parse what has arrived; returns the NATS bytes carried by the frame pieces read."""
        proto = self._proto
        proto.receive_bytes(data)
        out: list[bytes] = []
        try:
            for frame in proto.received_frames():
                if frame.opcode is Opcode.BINARY:
                    assert isinstance(frame.payload, bytes)
                    out.append(frame.payload)
                elif frame.opcode is Opcode.PING:
                    assert isinstance(frame.payload, bytes)
                    self.replies.append(bytes(proto.pong(frame.payload)))
                elif frame.opcode is Opcode.CLOSE:
                    assert isinstance(frame.payload, tuple)
                    code, text = frame.payload
                    self.replies.append(close_frame(proto, code, text))
                    self.closed = True
                    break
        except ParseFailed as failed:
            failure = frame_failure(proto, failed)
            if self._deflate is not None:
                out.append(self._deflate.within_limit)
                self._deflate.within_limit = b""
            failure.passed = b"".join(out)
            raise failure from None
        return b"".join(out)

    def encode(self, data: bytes) -> bytes:
        """The session's output as one binary message; deflated above 64 bytes; cut for browsers."""
        proto, size = self._proto, self._frame_size
        deflate = self._deflate
        if deflate is not None and len(data) > COMPRESS_THRESHOLD:
            payload = deflate.deflate(proto, data)
            pieces = _pieces(payload, size) if size and not self.whole_compressed else [payload]
            deflate.deflated_output = True
            try:
                return b"".join(
                    proto.send_data(piece, fin=index == len(pieces) - 1) for index, piece in enumerate(pieces)
                )
            finally:
                deflate.deflated_output = False
        # uncompressed output cut for a browser: each piece is a whole binary frame, as nats-server cuts them
        return b"".join(proto.send_data(piece) for piece in (_pieces(data, size) if size else [data]))

    def close_for(self, reason: str) -> bytes:
        """The close frame nats-server sends when it closes a client for ``reason``."""
        return close_frame(self._proto, close_reason_code(reason), reason)


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]
