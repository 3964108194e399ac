"""The HTTP port: a minimal HTTP/1.1 server for monitoring (GET) and the control API (``/fakejs/``).

:func:`serve_http` reads requests off one connection and writes what
``answer(method, target, body)`` returns.  An ``answer`` that raises is
recorded on the server and the request gets a ``500``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fakejs.core.clock import ErrorSink

# (status, content type, body) for a method, a target (path and query) and a request body.
Answer = Callable[[str, str, bytes], tuple[int, str, bytes]]

REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}
TEXT = "text/plain; charset=utf-8"


async def serve_http(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: Answer, on_error: ErrorSink
) -> None:
    """Serve one HTTP connection until the client closes it."""
    try:
        while True:
            request = await reader.readline()
            if not request:
                break
            length = await _content_length(reader)
            body = await reader.readexactly(length) if length else b""
            parts = request.decode("latin-1").split()
            if len(parts) < 2:
                break
            method, target = parts[0], parts[1]
            try:
                status, ctype, payload = answer(method, target, body)
            except Exception as exc:  # noqa: BLE001 - recorded on the server; the client gets a 500, not a hang
                on_error(f"HTTP {method} {target}", exc)
                status, ctype, payload = 500, TEXT, b"Internal Server Error\n"
            head = (
                f"HTTP/1.1 {status} {REASONS.get(status, 'OK')}\r\nAccess-Control-Allow-Origin: *\r\n"
                f"Content-Type: {ctype}\r\nContent-Length: {len(payload)}\r\n\r\n"
            )
            writer.write(head.encode() + (b"" if method == "HEAD" else payload))
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        writer.close()


async def _content_length(reader: asyncio.StreamReader) -> int:
    """Read the header lines; the ``Content-Length`` they give (0 if none)."""
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return length
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip() or 0)
