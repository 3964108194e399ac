"""The account limit checks, as pure functions (the parity suite checks them end to end)."""

from __future__ import annotations

from typing import Any

import pytest

from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.jetstream.errors import ApiError
from fakejs.jetstream.service import limits


def cfg(name: str, storage: str = "memory", max_bytes: int = -1, max_consumers: int = -1) -> Any:
    return {"name": name, "storage": storage, "max_bytes": max_bytes, "max_consumers": max_consumers}


def code(call: Any) -> int | None:
    try:
        call()
    except ApiError as exc:
        return int(exc.to_dict()["err_code"])
    return None


def test_unlimited_accounts_never_refuse() -> None:
    free = JetStreamLimits()
    others = [cfg(f"S{i}", max_bytes=1 << 40) for i in range(100)]
    assert code(lambda: limits.new_stream(free, cfg("N", max_bytes=1 << 50), others)) is None
    assert not limits.publish_exceeds(free, True, 1 << 60, 1 << 20)
    assert code(lambda: limits.consumer_room(free, -1, 10_000)) is None


def test_reservations_count_one_storage_type_and_not_the_stream_itself() -> None:
    capped = JetStreamLimits(max_memory=100)
    others = [cfg("A", max_bytes=60), cfg("F", storage="file", max_bytes=1000)]
    assert limits.reserved(others, memory=True) == 60
    assert code(lambda: limits.reservation(capped, cfg("B", max_bytes=40), others)) is None
    assert code(lambda: limits.reservation(capped, cfg("B", max_bytes=41), others)) == 10028
    assert code(lambda: limits.reservation(capped, cfg("A", max_bytes=100), others, update=True)) is None
    full = [cfg("A", max_bytes=100)]
    assert code(lambda: limits.reservation(capped, cfg("B"), full)) == 10028  # a new stream reserves a byte
    assert code(lambda: limits.reservation(capped, cfg("A"), full, update=True)) is None


@pytest.mark.parametrize(
    ("stream_cap", "account_cap", "counted", "refused"),
    [(-1, 2, 2, True), (-1, 2, 1, False), (5, 2, 2, True), (1, 5, 1, True), (3, -1, 2, False), (-1, -1, 9, False)],
)
def test_consumer_room_takes_the_smaller_cap(stream_cap: int, account_cap: int, counted: int, refused: bool) -> None:
    verdict = code(lambda: limits.consumer_room(JetStreamLimits(max_consumers=account_cap), stream_cap, counted))
    assert (verdict == 10026) == refused


def test_per_stream_byte_caps_and_required_max_bytes() -> None:
    caps = JetStreamLimits(memory_max_stream_bytes=10, storage_max_stream_bytes=20, max_bytes_required=True)
    assert code(lambda: limits.stream_bytes_rules(caps, cfg("S"))) == 10113
    assert code(lambda: limits.stream_bytes_rules(caps, cfg("S", max_bytes=11))) == 10122
    assert code(lambda: limits.stream_bytes_rules(caps, cfg("S", storage="file", max_bytes=20))) is None


def test_publish_limit_is_stored_plus_the_message() -> None:
    capped = JetStreamLimits(max_memory=1000, max_storage=-1)
    assert not limits.publish_exceeds(capped, True, 900, 100)
    assert limits.publish_exceeds(capped, True, 901, 100)
    assert not limits.publish_exceeds(capped, False, 1 << 40, 100)
