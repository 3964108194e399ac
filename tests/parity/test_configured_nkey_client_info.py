"""A configured nkey user's client: nats-server shows its account's name as ``issuer_key``.

In ``/connz?auth=true``, in the closed connections ``/connz`` keeps (with or
without ``auth``) and in ``$SYS.ACCOUNT.<account>.CONNECT`` events, an nkey
user of an account, or of the global account ``$G``, has ``issuer_key``;
a user with a password has none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nats
import nkeys

from tests.harness.configured import configured_servers
from tests.harness.monitoring import monitor
from tests.harness.targets import Settings
from tests.harness.wait import eventually

APP_SEED = nkeys.encode_seed(bytes(range(32)), nkeys.PREFIX_BYTE_USER).decode()
APP_NKEY = nkeys.from_seed(APP_SEED.encode()).public_key.decode()
GLOBAL_SEED = nkeys.encode_seed(bytes(range(1, 33)), nkeys.PREFIX_BYTE_USER).decode()
GLOBAL_NKEY = nkeys.from_seed(GLOBAL_SEED.encode()).public_key.decode()

CONFIG = f"""
accounts {{
  APP {{ users [ {{ nkey: {APP_NKEY} }}, {{ user: u, password: p }} ] }}
  SYS {{ users [ {{ user: sys, password: p }} ] }}
}}
authorization {{ users [ {{ nkey: {GLOBAL_NKEY} }} ] }}
system_account: SYS
"""


def shown(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: entry[key] for key in ("authorized_user", "user", "issuer_key", "name_tag") if key in entry}


async def test_nkey_users_show_their_account_as_issuer_key(target_kind: str, tmp_path: Path) -> None:
    async with configured_servers(target_kind, tmp_path, Settings(monitor=True)) as start:
        target = await start(CONFIG)
        events: list[dict[str, Any]] = []
        watcher = await nats.connect(f"nats://sys:p@{target.host}:{target.port}")

        async def heard(msg: Any) -> None:
            events.append(json.loads(msg.data)["client"])

        await watcher.subscribe("$SYS.ACCOUNT.APP.CONNECT", cb=heard)
        await watcher.flush()
        app = await nats.connect(target.url, nkeys_seed_str=APP_SEED)
        password = await nats.connect(f"nats://u:p@{target.host}:{target.port}")
        global_user = await nats.connect(target.url, nkeys_seed_str=GLOBAL_SEED)
        try:
            connz = await monitor(target, "/connz?auth=true&sort=cid")
        finally:
            for nc in (app, password, global_user):
                await nc.close()

        async def heard_both() -> int:
            return len(events)

        await eventually(heard_both, lambda count: count == 2, what="both CONNECT events")
        await watcher.close()
        entries = [shown(entry) for entry in connz["connections"]]  # type: ignore[attr-defined]
        assert entries[1:] == [
            {"authorized_user": APP_NKEY, "issuer_key": "APP", "name_tag": "APP"},
            {"authorized_user": "u", "name_tag": "APP"},
            {"authorized_user": GLOBAL_NKEY, "issuer_key": "$G", "name_tag": "$G"},
        ]
        assert sorted((shown(event) for event in events), key=len) == [
            {"user": "u", "name_tag": "APP"},
            {"user": APP_NKEY, "issuer_key": "APP", "name_tag": "APP"},
        ]

        async def closed() -> list[dict[str, Any]]:
            doc = await monitor(target, "/connz?state=closed&sort=cid")
            return [shown(entry) for entry in doc["connections"]]  # type: ignore[attr-defined]

        closed_entries = await eventually(closed, lambda found: len(found) == 4, what="the closed connections")
        assert closed_entries == [{}, {"issuer_key": "APP"}, {}, {"issuer_key": "$G"}]  # the watcher's first
