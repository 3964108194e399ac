"""Reading a message's trace headers (nats-server's genHeaderMapIfTraceHeadersPresent and initMsgTrace)."""

from __future__ import annotations

import gzip
import logging
import random

import cramjam
import pytest

from fakejs.core.msgtrace import TraceSource, begin_trace, may_trace, read_trace_request, replace_header, sample
from fakejs.core.msgtrace_encoding import content_encoding, encode_event


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


@pytest.mark.parametrize(
    "accept,encoding",
    [
        ("", ""),
        ("gzip", "gzip"),
        ("GZip, deflate", "gzip"),
        ("snappy", "snappy"),
        ("x-s2", "snappy"),
        ("br", "identity"),
    ],
)
def test_content_encoding_of_the_event(accept: str, encoding: str) -> None:
    assert content_encoding(accept) == encoding


def test_encoded_events_decode_back() -> None:
    document = b'{"server":{},"events":[]}' * 20
    assert encode_event(document, "") == (None, document)
    headers, payload = encode_event(document, "gzip")
    assert headers == b"NATS/1.0\r\nContent-Encoding: gzip\r\n\r\n" and gzip.decompress(payload) == document
    headers, payload = encode_event(document, "snappy")
    assert headers == b"NATS/1.0\r\nContent-Encoding: snappy\r\n\r\n"
    assert payload.startswith(b"\xff\x06\x00\x00sNaPpY") and bytes(cramjam.snappy.decompress(payload)) == document
    assert encode_event(document, "br") == (b"NATS/1.0\r\nContent-Encoding: identity\r\n\r\n", document)


def test_set_header_moves_the_line_to_the_end() -> None:
    original = block("Nats-Trace-Dest: t", "X: 1")
    assert replace_header(original, "Nats-Trace-Dest", "trace disabled") == block(
        "X: 1", "Nats-Trace-Dest: trace disabled"
    )
    assert replace_header(b"", "Nats-Trace-Hop", "1") == block("Nats-Trace-Hop: 1")


class _Account:
    name = "A"
    trace_dest = "sampled"
    trace_sampling = 1


class _Broker:
    clock = None
    log = logging.getLogger("test")


def test_a_traceparent_left_out_by_sampling_goes_on_with_the_trace_disabled() -> None:
    assert random.Random(0).randrange(100) > 1  # this generator's first draw leaves a 1% sample out
    source = TraceSource(0, 1, "", _Account(), "cid:1", _Broker(), random.Random(0))  # type: ignore[arg-type]
    parent = "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    skip, trace, headers = begin_trace(source, "s", block(parent), 10)
    assert (skip, trace) == (False, None)
    assert headers == block(parent, "Nats-Trace-Dest: trace disabled")


def test_the_origin_account_header_disables_the_trace(caplog: pytest.LogCaptureFixture) -> None:
    source = TraceSource(0, 1, "", _Account(), "cid:1", _Broker(), None)  # type: ignore[arg-type]
    original = block("Nats-Trace-Dest: t", "Nats-Trace-Origin-Account: A", "X: 1")
    skip, trace, headers = begin_trace(source, "s", original, 10)
    assert (skip, trace) == (False, None)
    assert headers == block("Nats-Trace-Origin-Account: A", "X: 1", "Nats-Trace-Dest: trace disabled")
    only = block("Nats-Trace-Dest: t", "Nats-Trace-Origin-Account: A", "Nats-Trace-Only: true")
    assert begin_trace(source, "s", only, 10) == (True, None, only)
    assert 'Message tracing disabled because of header "Nats-Trace-Origin-Account" with value="A"' in caplog.text
