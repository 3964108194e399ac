"""A cache resolver's ``ttl`` on a manual clock: a JWT file is removed once its time has come (fakejs only).

nats-server removes an expired JWT from its directory on its own timer
(every ``ttl / 2``, at most every minute); the accounts made from it stay.
"""

from __future__ import annotations

import time
from pathlib import Path

from fakejs import ManualClock, Server, options_from_config
from fakejs.testkit.jwt import Operator


async def test_a_cache_forgets_a_jwt_ttl_seconds_after_storing_it(tmp_path: Path) -> None:
    moment = time.time()
    operator = Operator("O", now=lambda: moment)  # one issue time: the kit mints a JWT at each read
    system, app = operator.account("SYS"), operator.account("APP")
    config = "port: -1\n" + operator.server_config(
        system_account=system, accounts=[system, app], resolver="cache", resolver_dir=tmp_path / "jwt"
    )
    config = config.replace("type: cache,", 'type: cache, ttl: "10s",')
    clock = ManualClock()
    async with Server(options_from_config(text=config), clock=clock):
        stored = tmp_path / "jwt" / f"{app.public_key}.jwt"
        assert stored.read_text() == app.jwt
        clock.advance(5)
        assert stored.exists()
        clock.advance(5)
        assert not stored.exists()
