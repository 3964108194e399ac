"""The monitoring port over HTTP: a document fetched with its status and content type, or read as JSON."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

from tests.harness.targets import Target


async def fetch(port: int, path: str) -> tuple[int, str, bytes]:
    def get() -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read()

    return await asyncio.to_thread(get)


async def monitor(target: Target, path: str) -> dict[str, object]:
    """A monitoring document of ``target`` as JSON."""

    def read() -> dict[str, object]:
        with urllib.request.urlopen(f"http://127.0.0.1:{target.http_port}{path}", timeout=5) as response:
            doc: dict[str, object] = json.loads(response.read())
            return doc

    return await asyncio.to_thread(read)
