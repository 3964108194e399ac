"""Helpers for JetStream parity tests: raw API requests and reply normalisation.

JetStream replies contain values that differ between any two servers or
runs: timestamps, server ids and names, and the server's own metadata
version keys.  :func:`normalize` replaces exactly those with placeholders
so a test can compare a whole reply from fakejs with the same reply from
nats-server -- or with a literal expectation that holds for both.
"""

from __future__ import annotations

import json
import re
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

# Keys whose values are timestamps (RFC 3339) in JetStream replies.
TIME_KEYS = frozenset(
    {"created", "ts", "first_ts", "last_ts", "time", "last_active", "pinned_ts", "pause_until", "opt_start_time", "leader_since", "active"}
)
# Keys whose values name the server (leader, peer ids).
SERVER_KEYS = frozenset({"leader", "server", "server_id", "server_name", "peer"})
ZERO_TIME = "0001-01-01T00:00:00Z"
_RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def normalize(value: Any) -> Any:
    """Replace timestamps with ``"<ts>"`` (zero time kept as is) and server names with ``"<server>"``."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in TIME_KEYS and isinstance(item, str) and _RFC3339.match(item):
                out[key] = item if item == ZERO_TIME else "<ts>"
            elif key in SERVER_KEYS and isinstance(item, str):
                out[key] = "<server>"
            else:
                out[key] = normalize(item)
        return out
    if isinstance(value, list):
        return [normalize(item) for item in value]
    return value


async def connect(target: Any, **kwargs: Any) -> Client:
    return await nats.connect(target.url, **kwargs)


async def api(nc: Client, subject: str, body: Any = None, *, timeout: float = 2.0, headers: dict[str, str] | None = None) -> dict:
    """Send a ``$JS.API`` request and return the decoded JSON reply.

    ``body`` may be ``None`` (empty payload), ``bytes`` (sent as is) or a
    JSON-serialisable value.
    """
    if body is None:
        payload = b""
    elif isinstance(body, bytes):
        payload = body
    else:
        payload = json.dumps(body).encode()
    msg = await nc.request(subject, payload, timeout=timeout, headers=headers)
    return json.loads(msg.data)


async def request(nc: Client, subject: str, payload: bytes = b"", *, timeout: float = 2.0, headers: dict[str, str] | None = None) -> Msg:
    """A raw request; returns the reply message (status headers included)."""
    return await nc.request(subject, payload, timeout=timeout, headers=headers)


async def create_stream(nc: Client, config: dict[str, Any]) -> dict:
    """Create a stream; fails the test if the server refuses."""
    reply = await api(nc, f"$JS.API.STREAM.CREATE.{config['name']}", config)
    assert "error" not in reply, reply
    return reply


async def publish(nc: Client, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None, timeout: float = 2.0) -> bytes:
    """Publish with a reply subject and return the raw PubAck payload bytes."""
    msg = await nc.request(subject, payload, timeout=timeout, headers=headers)
    return msg.data
