"""A leaf connection's life on the hub's leaf port, seen by a raw leaf, and logins by token, on both targets.

* The hub PINGs a leaf that has come up (``ping_interval``) and closes it
  with ``-ERR 'Stale Connection'`` once ``ping_max`` PINGs went unanswered;
  a leaf that answers stays.
* A leaf PINGs its hub on every interval and, unanswered, closes the
  connection as stale and dials again.
* A leaf that sends no CONNECT within the leaf port's authorization
  ``timeout`` gets ``-ERR 'Authentication Timeout'``.
* A leaf that tells the hub of the hub's own loop detection subject (a
  loop) gets nats-server's ``Loop detected`` error and is closed.
* A leaf logs in with the server's token (the clients' ``authorization {
  token }``: a leaf port's authorization has none) in its URL; a wrong token
  never connects.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import nats
import pytest

from fakejs.targets.cluster import free_port
from tests.harness.cluster import requests_answered
from tests.harness.configured import configured_servers
from tests.harness.leafs import hub_and_leaf
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster

CONNECT = {"server_id": "NRAWLEAF", "name": "raw-leaf", "headers": True, "remote_account": "$G", "protocol": 3}


class RawLeaf:
    """A leaf connection driven by hand: the lines the hub sends, read one at a time."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.lines: list[bytes] = []

    async def line(self) -> bytes:
        """The hub's next line (``b""`` once it closed the connection)."""
        line = await asyncio.wait_for(self.reader.readline(), WAIT)
        self.lines.append(line)
        return line

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def until_closed(self, answer_pings: bool = False, stop_after_pings: int = 0) -> list[bytes]:
        """The lines up to the hub's close (or up to ``stop_after_pings`` PINGs)."""
        pings = 0
        while line := await self.line():
            if line == b"PING\r\n":
                pings += 1
                if answer_pings:
                    await self.send(b"PONG\r\n")
                if pings == stop_after_pings:
                    break
        return self.lines


@asynccontextmanager
async def raw_leaf(target_kind: str, tmp_path: Path, config: str, connect: bool = True) -> AsyncIterator[RawLeaf]:
    """A hub of ``target_kind`` with ``config`` at the top and a leaf port, and a raw leaf connected to it."""
    port = free_port()
    async with configured_servers(target_kind, tmp_path) as start:
        await start(f"{config}\nleafnodes {{ port: {port} }}\n")
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        leaf = RawLeaf(reader, writer)
        info = await leaf.line()
        assert info.startswith(b"INFO ")
        if connect:
            await leaf.send(b"CONNECT " + json.dumps(CONNECT).encode() + b"\r\n")
        try:
            yield leaf
        finally:
            writer.close()


def _errors(lines: list[bytes]) -> list[bytes]:
    return [line for line in lines if line.startswith(b"-ERR")]


async def test_a_leaf_that_does_not_answer_pings_is_closed_as_stale(target_kind: str, tmp_path: Path) -> None:
    async with raw_leaf(target_kind, tmp_path, 'ping_interval: "200ms"\nping_max: 2') as leaf:
        lines = await leaf.until_closed()
        assert lines.count(b"PING\r\n") == 2
        assert _errors(lines) == [b"-ERR 'Stale Connection'\r\n"]
        assert lines[-2:] == [b"-ERR 'Stale Connection'\r\n", b""]


async def test_a_leaf_that_answers_pings_stays(target_kind: str, tmp_path: Path) -> None:
    async with raw_leaf(target_kind, tmp_path, 'ping_interval: "100ms"\nping_max: 1') as leaf:
        lines = await leaf.until_closed(answer_pings=True, stop_after_pings=4)
        assert lines[-1] == b"PING\r\n" and _errors(lines) == []


HUB_INFO = {
    "server_id": "NRAWHUB",
    "server_name": "raw-hub",
    "version": "2.15.1",
    "proto": 3,
    "headers": True,
    "auth_required": True,
    "max_payload": 1048576,
    "client_id": 7,
    "nonce": "abc",
    "info_on_connect": True,
    "leafnode_urls": [],
}


CONNECT_INFO = {"server_id": "NRAWHUB", "connect_info": True, "remote_account": "$G"}


async def test_a_leaf_closes_a_silent_hub_as_stale_and_dials_again(target_kind: str, tmp_path: Path) -> None:
    connections: asyncio.Queue[RawLeaf] = asyncio.Queue()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hub = RawLeaf(reader, writer)
        await hub.send(b"INFO " + json.dumps(HUB_INFO).encode() + b"\r\n")
        if (await hub.line()).startswith(b"CONNECT "):
            await hub.send(b"INFO " + json.dumps(CONNECT_INFO).encode() + b"\r\n")
        connections.put_nowait(hub)

    listener = await asyncio.start_server(accepted, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    config = f'ping_interval: "200ms"\nping_max: 2\nleafnodes {{ reconnect: "100ms", remotes [ {{ url: "nats://127.0.0.1:{port}" }} ] }}'
    try:
        async with configured_servers(target_kind, tmp_path) as start:
            await start(config)
            first = await asyncio.wait_for(connections.get(), WAIT)
            lines = await first.until_closed()
            assert lines[0].startswith(b"CONNECT ")
            assert lines.count(b"PING\r\n") >= 2
            assert _errors(lines) == [b"-ERR 'Stale Connection'\r\n"]
            second = await asyncio.wait_for(connections.get(), WAIT)
            assert second.lines[0].startswith(b"CONNECT ")
            for connection in (first, second):
                connection.writer.close()
    finally:
        listener.close()


async def test_a_leaf_whose_connect_is_not_answered_closes_it(target_kind: str, tmp_path: Path) -> None:
    """A hub that says ``info_on_connect`` and never sends the INFO answering the CONNECT: stale after two seconds."""
    connections: asyncio.Queue[RawLeaf] = asyncio.Queue()

    async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hub = RawLeaf(reader, writer)
        await hub.send(b"INFO " + json.dumps(HUB_INFO).encode() + b"\r\n")
        connections.put_nowait(hub)

    listener = await asyncio.start_server(accepted, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with configured_servers(target_kind, tmp_path) as start:
            await start(f'leafnodes {{ remotes [ {{ url: "nats://127.0.0.1:{port}" }} ] }}')
            hub = await asyncio.wait_for(connections.get(), WAIT)
            lines = await hub.until_closed()
            assert lines[0].startswith(b"CONNECT ")
            assert lines[1:] == [b"-ERR 'Stale Leaf Node Connection - Closing'\r\n", b""]
            hub.writer.close()
    finally:
        listener.close()


async def test_no_connect_in_time_is_an_authentication_timeout(target_kind: str, tmp_path: Path) -> None:
    async with raw_leaf(target_kind, tmp_path, "", connect=False) as leaf:
        await leaf.line()  # waits out the default two seconds
        assert leaf.lines[-1] == b"-ERR 'Authentication Timeout'\r\n"
        assert await leaf.line() == b""


async def test_a_leaf_sending_back_the_loop_subject_is_told_of_the_loop(target_kind: str, tmp_path: Path) -> None:
    async with raw_leaf(target_kind, tmp_path, "") as leaf:
        loop_subject = b""
        while not loop_subject:
            line = await leaf.line()
            assert line, leaf.lines
            if line.startswith(b"LS+ $LDS."):
                loop_subject = line.split()[1]
        await leaf.send(b"LS+ " + loop_subject + b"\r\n")
        lines = await leaf.until_closed()
        text = b'Loop detected for leafnode account="$G". Delaying attempt to reconnect for 30s'
        assert _errors(lines) == [b"-ERR '" + text + b"'\r\n"]


@pytest.mark.parametrize("token", ["s3cr3t", "wrong"])
async def test_token_login(target_kind: str, tmp_path: Path, token: str) -> None:
    """Without a leaf user the hub checks a leaf's CONNECT as a client's: the server's token."""
    top = "authorization { token: s3cr3t }"
    async with hub_and_leaf(target_kind, target_kind, tmp_path, hub_top=top, url_auth=f"{token}@") as (hub, leaf):
        hub_client = await nats.connect(hub.url.replace("nats://", "nats://s3cr3t@"))
        leaf_client = await nats.connect(leaf.url)
        subject = f"svc.{secrets.token_hex(4)}"
        if token == "s3cr3t":
            await requests_answered(hub_client, leaf_client, subject)
        else:
            await leaf_client.subscribe(subject)
            await leaf_client.flush()
            with pytest.raises(nats.errors.NoRespondersError):
                await hub_client.request(subject, b"", timeout=WAIT)
        await hub_client.close()
        await leaf_client.close()
