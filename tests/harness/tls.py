"""TLS clients of a target, connected or refused; /connz of open and closed connections; a certificate map."""

from __future__ import annotations

import asyncio
import json
import ssl
import urllib.request
from typing import Any

import nats
from nats.errors import Error as NatsError

from fakejs.testkit.certs import TestCertificates
from tests.harness.targets import Target

# What a failed TLS client may see raised, depending on where the handshake broke.
FAILED = (ssl.SSLError, ConnectionError, OSError, NatsError, asyncio.TimeoutError, EOFError)


async def connz(target: Target, query: str = "") -> dict[str, Any]:
    def fetch() -> dict[str, Any]:
        url = f"http://127.0.0.1:{target.http_port}/connz{query}"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.loads(response.read())

    return await asyncio.to_thread(fetch)


async def closed(target: Target, count: int = 1) -> list[dict[str, Any]]:
    """The closed connections, once ``count`` are there (the real server records them asynchronously)."""
    for _ in range(250):
        found = (await connz(target, "?state=closed&auth=true"))["connections"]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.02)
    return found


async def connect(target: Target, context: ssl.SSLContext | None, **options: Any) -> nats.NATS:
    return await nats.connect(
        target.url,
        tls=context,
        tls_hostname="localhost" if context is not None else None,
        allow_reconnect=False,
        max_reconnect_attempts=0,
        connect_timeout=3,
        **options,
    )


async def refused(target: Target, context: ssl.SSLContext | None, **options: Any) -> bool:
    try:
        nc = await connect(target, context, **options)
    except FAILED:
        return True
    try:
        await nc.flush(timeout=3)
    except FAILED:
        return True
    finally:
        await nc.close()
    return False


def mapped_config(certs: TestCertificates, users: str) -> str:
    block = certs.config_block(extra="verify_and_map: true")
    return block + f"authorization {{\n  users = [\n{users}\n  ]\n}}\n"
