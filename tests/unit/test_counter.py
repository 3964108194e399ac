"""Counter arithmetic: Go's ``big.Int`` text forms, at any length.

Python refuses int <-> str conversions beyond 4300 digits by default;
:mod:`fakejs.jetstream.stream.counter` converts in chunks, and must agree
with an unlimited conversion everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakejs.jetstream.stream.counter import big_int_text, parse_big_int


@pytest.fixture(autouse=True)
def unlimited_digits() -> Iterator[None]:
    """The reference conversions below need no limit (restored afterwards)."""
    before = sys.get_int_max_str_digits()
    yield
    sys.set_int_max_str_digits(before)


def reference(value: int) -> str:
    sys.set_int_max_str_digits(0)
    return str(value)


# Long numbers as mantissa * 10**exponent + low digits: hypothesis cannot take such bounds directly.
LONG = st.builds(
    lambda mantissa, exponent, low: mantissa * 10**exponent + low,
    st.integers(-(10**30), 10**30),
    st.integers(3990, 12010),
    st.integers(0, 10**40),
)


@given(st.integers() | LONG)
def test_text_matches_str(value: int) -> None:
    assert big_int_text(value) == reference(value)
    assert parse_big_int(reference(value).encode()) == value


@pytest.mark.parametrize(
    "text,value",
    [
        (b"0", 0),
        (b"-0", 0),
        (b"+7", 7),
        (b"-0010", -10),
        (b"0" * 9000 + b"1", 1),
        (b"1" + b"0" * 8000, 10**8000),
    ],
    ids=["zero", "minus-zero", "plus", "leading-zeros", "long-zeros", "long"],
)
def test_accepted(text: bytes, value: int) -> None:
    assert parse_big_int(text) == value


@pytest.mark.parametrize(
    "text", [b"", b"+", b"-", b"1_0", b"0x10", b"1 ", b" 1", b"1.0", b"1e3", "\u0661".encode(), b"--1", b"+-1"]
)
def test_refused(text: bytes) -> None:
    assert parse_big_int(text) is None
