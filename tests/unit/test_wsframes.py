"""The WebSocket frame codec: nats-server's framing rules without a socket."""

from __future__ import annotations

import struct
import zlib

import pytest

from fakejs.server import wsframes
from fakejs.server.layers import LayerFailed


def masked(opcode: int, payload: bytes, fin: bool = True, rsv: int = 0) -> bytes:
    key = b"\x09\x08\x07\x06"
    body = bytes(c ^ key[i % 4] for i, c in enumerate(payload))
    return bytes([(0x80 if fin else 0) | rsv | opcode, 0x80 | len(payload)]) + key + body


def test_frames_split_anywhere_are_reassembled() -> None:
    reader = wsframes.FrameReader(compression=False, masked=True, max_payload=1024)
    data = masked(2, b"PUB a 1\r\n", fin=False) + masked(0, b"x\r\n")
    assert b"".join(reader.feed(data[i : i + 1]) for i in range(len(data))) == b"PUB a 1\r\nx\r\n"


def test_compressed_message_is_inflated() -> None:
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    text = b"PING\r\n" * 50
    payload = (deflater.compress(text) + deflater.flush(zlib.Z_SYNC_FLUSH))[:-4]
    reader = wsframes.FrameReader(compression=True, masked=True, max_payload=1024)
    assert reader.feed(masked(2, payload, rsv=0x40)) == text


def test_inflated_message_over_max_payload_is_refused() -> None:
    deflater = zlib.compressobj(6, zlib.DEFLATED, -15)
    payload = (deflater.compress(b"x" * 5000) + deflater.flush(zlib.Z_SYNC_FLUSH))[:-4]
    reader = wsframes.FrameReader(compression=True, masked=True, max_payload=1024)
    with pytest.raises(LayerFailed) as failed:
        reader.feed(masked(2, payload, rsv=0x40))
    assert failed.value.reason == "Maximum Message Payload Exceeded"
    assert failed.value.farewell[2:4] == struct.pack(">H", 1009)


def test_output_compressed_only_above_the_threshold() -> None:
    assert wsframes.encode_output(b"x" * 64, compress=True) == bytes([0x82, 64]) + b"x" * 64
    out = wsframes.encode_output(b"x" * 65, compress=True)
    assert out[0] == 0xC2
    assert zlib.decompressobj(-15).decompress(out[2:] + wsframes.DEFLATE_TAIL) == b"x" * 65


def test_close_text_is_cut_to_fit_a_control_frame() -> None:
    payload = wsframes.close_payload(1002, "y" * 200)
    assert len(payload) == 2 + 120 + 3 and payload.endswith(b"...")


def test_close_codes_follow_the_reason() -> None:
    assert wsframes.close_frame_for("Client Closed")[2:4] == struct.pack(">H", 1000)
    assert wsframes.close_frame_for("Stale Connection")[2:4] == struct.pack(">H", 1001)
    assert wsframes.close_frame_for("Kicked")[2:4] == struct.pack(">H", 1011)
