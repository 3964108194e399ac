"""The WebSocket frame codec (wsproto underneath): nats-server's framing rules without a socket."""

from __future__ import annotations

import random
import struct
import zlib

import pytest

from fakejs.server import wsframes
from fakejs.server.layers import LayerFailed


def masked(opcode: int, payload: bytes, fin: bool = True, rsv: int = 0, long: bool = False) -> bytes:
    key = b"\x09\x08\x07\x06"
    body = bytes(c ^ key[i % 4] for i, c in enumerate(payload))
    length = bytes([0x80 | 127]) + struct.pack(">Q", len(payload)) if long else bytes([0x80 | len(payload)])
    return bytes([(0x80 if fin else 0) | rsv | opcode]) + length + key + body


def codec(*, compression: bool = False, frame_size: int = 0) -> wsframes.FrameCodec:
    return wsframes.FrameCodec(compression=compression, masked=True, max_payload=1024, frame_size=frame_size)


def test_frames_split_anywhere_are_reassembled() -> None:
    reader = codec()
    data = masked(2, b"PUB a 1\r\n", fin=False) + masked(0, b"x\r\n")
    assert b"".join(reader.feed(data[i : i + 1]) for i in range(len(data))) == b"PUB a 1\r\nx\r\n"


def test_text_frames_are_bytes_and_long_lengths_are_accepted() -> None:
    """nats-server neither checks text frames for UTF-8 nor insists on the shortest length encoding."""
    assert codec().feed(masked(1, b"\xff\xfe", long=True)) == b"\xff\xfe"


def test_compressed_message_is_inflated() -> None:
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    text = b"PING\r\n" * 50
    payload = (deflater.compress(text) + deflater.flush(zlib.Z_SYNC_FLUSH))[:-4]
    assert codec(compression=True).feed(masked(2, payload, rsv=0x40)) == text


def test_inflated_message_over_max_payload_is_a_read_error() -> None:
    """Its first max_payload bytes still reach the session; no close frame (nats-server skips the flush)."""
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    payload = (deflater.compress(b"x" * 5000) + deflater.flush(zlib.Z_SYNC_FLUSH))[:-4]
    with pytest.raises(LayerFailed) as failed:
        codec(compression=True).feed(masked(2, payload, rsv=0x40))
    assert (failed.value.reason, failed.value.log) == ("Read Error", "read error: maximum payload exceeded")
    assert failed.value.farewell == b""
    assert failed.value.passed == b"x" * 1024


def test_output_compressed_only_above_the_threshold() -> None:
    assert codec(compression=True).encode(b"x" * 64) == bytes([0x82, 64]) + b"x" * 64
    out = codec(compression=True).encode(b"x" * 65)
    assert out[0] == 0xC2
    assert zlib.decompressobj(-15).decompress(out[2:] + wsframes.DEFLATE_TAIL) == b"x" * 65


def test_compressed_output_is_cut_after_deflating() -> None:
    data = random.Random(7).randbytes(16384)  # incompressible: several 4 KiB frames
    out = codec(compression=True, frame_size=4096).encode(data)
    frames, pos = [], 0
    while pos < len(out):
        n = out[pos + 1] & 0x7F
        head = 2
        if n == 126:
            (n,) = struct.unpack_from(">H", out, pos + 2)
            head = 4
        frames.append((out[pos], out[pos + head : pos + head + n]))
        pos += head + n
    assert frames[0][0] == 0x42 and all(b0 == 0x00 for b0, _ in frames[1:-1]) and frames[-1][0] == 0x80
    assert max(len(p) for _, p in frames) <= 4096
    inflated = zlib.decompressobj(-15).decompress(b"".join(p for _, p in frames) + wsframes.DEFLATE_TAIL)
    assert inflated == data


def test_close_text_is_cut_to_fit_a_control_frame() -> None:
    text = wsframes.close_text("y" * 200)
    assert len(text) == 120 + 3 and text.endswith("...")


def test_close_codes_follow_the_reason() -> None:
    assert codec().close_for("Client Closed")[2:4] == struct.pack(">H", 1000)
    assert codec().close_for("Stale Connection")[2:4] == struct.pack(">H", 1001)
    assert codec().close_for("Kicked")[2:4] == struct.pack(">H", 1011)


@pytest.mark.parametrize(
    "data,text",
    [
        (masked(2, b"x", fin=False) + masked(2, b"y"), "new message started before final frame"),
        (masked(8, struct.pack(">H", 1016)), "invalid close status code 1016"),
        (masked(9, b"x", fin=False), "control frame does not have final bit set"),
    ],
)
def test_broken_frames_get_nats_server_texts(data: bytes, text: str) -> None:
    with pytest.raises(LayerFailed) as failed:
        codec().feed(data)
    assert failed.value.reason == "Read Error"
    assert failed.value.farewell[2:4] == struct.pack(">H", 1002) and failed.value.farewell[4:].startswith(text.encode())


def test_close_echo_follows_nats_server() -> None:
    """Codes wsproto would refuse (1014, 4000) are echoed; a body that is not UTF-8 is answered with 1007."""
    reader = codec()
    reader.feed(masked(8, struct.pack(">H", 1014) + b"bye"))
    assert reader.closed and reader.replies == [b"\x88\x05" + struct.pack(">H", 1014) + b"bye"]
    reader = codec()
    reader.feed(masked(8, struct.pack(">H", 4000) + b"\xff"))
    assert reader.replies == [bytes([0x88, 2 + 32]) + struct.pack(">H", 1007) + b"invalid utf8 body in close frame"]
    reader = codec()
    reader.feed(masked(8, b""))
    assert reader.replies == [b"\x88\x00"]


def test_unmasked_frames_from_a_no_masking_client() -> None:
    reader = wsframes.FrameCodec(compression=False, masked=False, max_payload=1024)
    assert reader.feed(bytes([0x82, 6]) + b"PING\r\n") == b"PING\r\n"
