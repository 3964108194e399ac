"""A server with a system account: its configuration, a login, and the keys of the server info in its events."""

from __future__ import annotations

from typing import Any

import nats

from tests.harness.targets import Target

SYSTEM = """
accounts {
  SYS { users: [ {user: sys, password: sys} ] }
  A { users: [ {user: a, password: a} ], jetstream: enabled }
}
system_account: SYS
"""


async def login(target: Target, user: str, **kwargs: Any) -> nats.NATS:
    return await nats.connect(target.url, user=user, password=user, **kwargs)


SERVER_INFO_KEYS = ["name", "host", "id", "ver", "feature_flags", "jetstream", "flags", "seq", "time"]
