"""How a server dials a pooling peer: the pool, and the route dedicated to the system account, byte by byte.

The test plays the peer on a raw socket, and the server (fakejs or
nats-server 2.15.1) has it in ``routes``.  Facts pinned:

* the server opens ``route_pool_size`` (3) pool connections and one more
  for the system account; each starts with ``CONNECT``;
* a pool connection's ``INFO`` names the slot it took (``route_pool_idx``,
  left out for slot 0); the dedicated one's names the account
  (``route_account`` ``$SYS``) and no slot;
* with ``cluster { accounts: [A] }`` there is one more, for ``A``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.harness.configured import configured_servers
from tests.harness.targets import Settings
from tests.harness.wait import eventually

pytestmark = pytest.mark.cluster

PEER_INFO = (
    b'INFO {"server_id":"NPEER","server_name":"peer","version":"2.15.1","proto":3,"host":"127.0.0.1",'
    b'"port":1,"headers":true,"max_payload":1048576,"cluster":"C","lnoc":true,"lnocu":true,"route_pool_size":3}\r\n'
)


class Peer:
    """The raw route port: every connection greeted with a pooling INFO; what each dialled connection says."""

    def __init__(self) -> None:
        self.connects: list[dict[str, Any]] = []
        self.infos: list[dict[str, Any]] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        writer.write(PEER_INFO)
        while line := await reader.readline():
            if line.startswith(b"CONNECT "):
                self.connects.append(json.loads(line[8:]))
            elif line.startswith(b"INFO "):
                self.infos.append(json.loads(line[5:]))
            elif line.startswith(b"PING"):
                writer.write(b"PONG\r\n")

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


async def dialled_infos(target_kind: str, tmp_path: Path, extra: str, count: int) -> list[dict[str, Any]]:
    """The INFO of each connection the server dialled to the peer, once ``count`` of them came."""
    peer = Peer()
    listener = await asyncio.start_server(peer.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    config = f'cluster {{ name: C, listen: "127.0.0.1:-1", routes: ["nats-route://127.0.0.1:{port}"]{extra} }}\n'
    try:
        async with configured_servers(target_kind, tmp_path, Settings(jetstream=False)) as start:
            await start(config + "accounts { A {} }\n")

            async def infos() -> list[dict[str, Any]]:
                return list(peer.infos)

            await eventually(infos, lambda got: len(got) >= count, what=f"{count} dialled connections")
            assert len(peer.connects) >= count
            return peer.infos
    finally:
        peer.close()
        listener.close()


def shape(info: dict[str, Any]) -> tuple[int | None, str | None, int]:
    return info.get("route_pool_idx"), info.get("route_account"), info["route_pool_size"]


async def test_the_dialling_server_opens_the_pool_and_the_system_accounts_route(
    target_kind: str, tmp_path: Path
) -> None:
    infos = await dialled_infos(target_kind, tmp_path, "", 4)
    assert sorted(map(shape, infos), key=str) == sorted(
        [(None, None, 3), (1, None, 3), (2, None, 3), (None, "$SYS", 3)], key=str
    )
    assert all(info["cluster"] == "C" for info in infos)


async def test_a_pinned_account_gets_a_route_of_its_own(target_kind: str, tmp_path: Path) -> None:
    infos = await dialled_infos(target_kind, tmp_path, ", accounts: [A]", 5)
    assert sorted(info.get("route_account", "") for info in infos) == ["", "", "", "$SYS", "A"]
