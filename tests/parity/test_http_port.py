"""The monitoring port as an HTTP server, on both targets: what a client sees on the wire.

Status lines, header names and their order, keep-alive, HEAD, and what is
written for a request that cannot be parsed follow nats-server's Go HTTP
server.  ``Date`` values differ between any two servers; the real server's
``Access-Control-Allow-Origin: *`` on its documents is left out on purpose
by fakejs (its monitoring port also serves the control API) and is not
compared.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.harness.targets import Settings, Target
from tests.harness.wait import WAIT

CORS = "Access-Control-Allow-Origin"


async def exchange(target: Target, data: bytes, timeout: float = WAIT) -> bytes:
    """Send raw bytes to the HTTP port; everything read until the server closes (or ``timeout``)."""
    assert target.http_port is not None
    reader, writer = await asyncio.open_connection("127.0.0.1", target.http_port)
    writer.write(data)
    await writer.drain()
    out = b""
    try:
        while chunk := await asyncio.wait_for(reader.read(65536), timeout):
            out += chunk
    except TimeoutError:
        out += b"<still open>"
    finally:
        writer.close()
    return out


def split_replies(raw: bytes) -> list[tuple[str, list[tuple[str, str]], bytes]]:
    """Replies with a Content-Length, one after the other: (status line, headers, body)."""
    replies = []
    while raw.startswith(b"HTTP/"):
        head, _, rest = raw.partition(b"\r\n\r\n")
        status, *lines = head.decode("latin-1").split("\r\n")
        headers = [(name, value.strip()) for name, _, value in (line.partition(":") for line in lines)]
        length = int(dict(headers).get("Content-Length", "0"))
        replies.append((status, headers, rest[:length]))
        raw = rest[length:]
    return replies


def names(headers: list[tuple[str, str]]) -> list[str]:
    return [name for name, _ in headers if name != CORS]


GET = b"GET %s HTTP/1.1\r\nHost: test\r\n%s\r\n"


async def test_two_requests_on_one_connection(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    raw = await exchange(target, GET % (b"/healthz", b"") + GET % (b"/healthz", b"Connection: close\r\n"))
    assert not raw.endswith(b"<still open>")  # closed after the second, as asked
    first, second = split_replies(raw)
    assert first[0] == second[0] == "HTTP/1.1 200 OK"
    assert names(first[1]) == ["Content-Type", "Date", "Content-Length"]
    assert names(second[1]) == ["Content-Type", "Date", "Content-Length", "Connection"]
    assert first[2] == second[2] == b'{"status":"ok"}'


async def test_connection_stays_open_without_connection_close(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    raw = await exchange(target, GET % (b"/healthz", b""), timeout=0.5)
    assert raw.endswith(b"<still open>")


async def test_head_gets_the_length_and_no_body(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    raw = await exchange(target, b"HEAD /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
    [(status, headers, _)] = split_replies(raw)
    assert status == "HTTP/1.1 200 OK"
    assert dict(headers)["Content-Length"] == "15"
    assert raw.endswith(b"\r\n\r\n")


async def test_a_post_to_a_document_gets_the_document(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    request = b"POST /healthz HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    [(status, _, body)] = split_replies(await exchange(target, request))
    assert (status, body) == ("HTTP/1.1 200 OK", b'{"status":"ok"}')


async def test_unknown_path_headers(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    [(status, headers, body)] = split_replies(await exchange(target, GET % (b"/nope", b"Connection: close\r\n")))
    assert status == "HTTP/1.1 404 Not Found"
    assert names(headers) == ["Content-Type", "X-Content-Type-Options", "Date", "Content-Length", "Connection"]
    assert dict(headers)["X-Content-Type-Options"] == "nosniff"
    assert body == b"404 page not found\n"


async def test_rejected_option_writes_its_type_after_the_length(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    request = GET % (b"/connz?sort=bogus", b"Connection: close\r\n")
    [(status, headers, body)] = split_replies(await exchange(target, request))
    assert status == "HTTP/1.1 400 Bad Request"
    assert names(headers) == ["Date", "Content-Length", "Content-Type", "Connection"]
    assert body == b"invalid sorting option: bogus"


BARE_400 = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"


async def test_a_request_that_cannot_be_parsed_gets_400_and_the_connection_closes(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    assert await exchange(target, b"GARBAGE\r\n\r\n") == BARE_400 + b"400 Bad Request"
    bad_length = b"GET /healthz HTTP/1.1\r\nHost: test\r\nContent-Length: abc\r\n\r\n"
    assert await exchange(target, bad_length) == BARE_400 + b"400 Bad Request"


async def test_missing_host_header(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    text = b"400 Bad Request: missing required Host header"
    assert await exchange(target, b"GET /healthz HTTP/1.1\r\n\r\n") == (
        b"HTTP/1.1 " + text + b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + text
    )


async def test_a_head_over_a_megabyte_gets_431(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    raw = await exchange(target, b"GET /healthz HTTP/1.1\r\nHost: test\r\nX-Big: " + b"a" * (2 << 20) + b"\r\n\r\n")
    text = b"431 Request Header Fields Too Large"
    assert (
        raw == b"HTTP/1.1 " + text + b"\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + text
    )


async def test_unsupported_http_version_gets_505(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    raw = await exchange(target, b"GET /healthz HTTP/2.0\r\nHost: test\r\n\r\n")
    assert raw.startswith(b"HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version\r\n")


async def _closed_within(reader: asyncio.StreamReader, target: Target, seconds: float) -> bytes:
    """What the server sends (b"" for nothing) until it closes; fails if still open after ``seconds``."""

    async def read_all() -> bytes:
        out = b""
        while chunk := await reader.read(65536):
            out += chunk
        return out

    reading = asyncio.ensure_future(read_all())
    closed = await target.elapse_until(reading.done, seconds, interval=0.05)
    assert closed, "the HTTP connection is still open"
    return reading.result()


async def _open_http(target: Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    assert target.http_port is not None
    return await asyncio.open_connection("127.0.0.1", target.http_port)


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_a_connection_that_sends_no_request_is_closed_after_the_header_timeout(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    reader, writer = await _open_http(target)
    await target.elapse(3)
    assert not reader.at_eof()
    assert await _closed_within(reader, target, 4) == b""  # 5 s after it opened, with no reply
    writer.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_a_head_that_never_ends_is_dropped_after_the_header_timeout(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    reader, writer = await _open_http(target)
    writer.write(b"GET /varz HTTP/1.1\r\nHost: test\r\n")  # the head never ends
    await writer.drain()
    assert await _closed_within(reader, target, 7) == b""
    writer.close()


@pytest.mark.slow
@pytest.mark.manual_clock
async def test_a_kept_alive_connection_waits_idle_but_not_in_the_middle_of_a_head(make_target) -> None:
    target = await make_target(Settings(monitor=True))
    reader, writer = await _open_http(target)
    writer.write(GET % (b"/healthz", b""))
    assert (await reader.readuntil(b'{"status":"ok"}')).startswith(b"HTTP/1.1 200 OK")
    await target.elapse(6)  # idle between requests: no deadline
    writer.write(GET % (b"/healthz", b""))
    assert (await reader.readuntil(b'{"status":"ok"}')).startswith(b"HTTP/1.1 200 OK")
    writer.write(b"GET /healthz HTTP/1.1\r\n")
    await writer.drain()
    assert await _closed_within(reader, target, 7) == b""  # that head is due within 5 s
    writer.close()
