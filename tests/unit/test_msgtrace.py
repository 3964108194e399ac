"""Reading a message's trace headers (nats-server's genHeaderMapIfTraceHeadersPresent and initMsgTrace)."""

from __future__ import annotations

import random

import pytest

from fakejs.core.msgtrace import may_trace, read_trace_request, sample


def block(*lines: str) -> bytes:
    return ("NATS/1.0\r\n" + "".join(line + "\r\n" for line in lines) + "\r\n").encode()


def test_destination_and_every_header_kept_with_its_case() -> None:
    request = read_trace_request(block("Nats-Trace-Dest: t", "X-A: 1", "X-A:  2 ", "Empty:"))
    assert request is not None and not request.external
    assert request.dest == "t"
    assert request.headers == {"Nats-Trace-Dest": ["t"], "X-A": ["1", "2"]}


@pytest.mark.parametrize("value,only", [("true", True), ("TRUE", True), ("on", True), ("1", True), ("yes", False)])
def test_trace_only_spellings(value: str, only: bool) -> None:
    request = read_trace_request(block("Nats-Trace-Dest: t", f"Nats-Trace-Only: {value}"))
    assert request is not None and request.trace_only is only


def test_no_trace_headers() -> None:
    assert read_trace_request(block("X: y")) is None
    assert read_trace_request(block("nats-trace-dest: t")) is None  # the destination header's case counts
    assert read_trace_request(block("Nats-Trace-Dest: trace disabled")) is None
    assert not may_trace(block("X: y"))


@pytest.mark.parametrize(
    "value,traced",
    [
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", True),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03", True),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00", False),
        ("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1", False),
        ("00-0af7651916cd43dd8448eb211c80319c-01", False),
    ],
)
def test_traceparent_sampled_flag(value: str, traced: bool) -> None:
    request = read_trace_request(block(f"TraceParent: {value}"))
    assert (request is not None and request.external) is traced


def test_sampling_percentage() -> None:
    rng = random.Random(1)
    assert all(sample(100, rng) for _ in range(50))
    assert all(sample(0, rng) for _ in range(50))
    picked = sum(sample(10, rng) for _ in range(1000))
    assert 50 < picked < 160
