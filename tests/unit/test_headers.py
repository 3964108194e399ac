"""Header blocks (fakejs.protocol.headers): what several lines appended at once come to."""

from __future__ import annotations

import pytest

from fakejs.protocol import headers

PAIRS = [("Nats-Stream", "S"), ("Nats-Subject", "a.b"), ("Nats-Sequence", "12"), ("Odd", "\udcff")]


@pytest.mark.parametrize(
    "block",
    [None, b"", b"\r\n", b"NATS/1.0\r\n\r\n", b"NATS/1.0\r\nA: 1\r\n\r\n", b"NATS/1.0 100 Idle\r\nB:2\r\n\r\n"],
)
def test_extend_is_add_for_each_pair(block: bytes | None) -> None:
    expected = block
    for key, value in PAIRS:
        expected = headers.add(expected, key, value)
    assert headers.extend(block, PAIRS) == expected


def test_extend_with_nothing_to_add_starts_or_keeps_a_block() -> None:
    assert headers.extend(None, []) == b"NATS/1.0\r\n\r\n"
    assert headers.extend(b"NATS/1.0\r\nA: 1\r\n\r\n", []) == b"NATS/1.0\r\nA: 1\r\n\r\n"
