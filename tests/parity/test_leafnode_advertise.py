"""The leaf port's ``advertise`` and ``no_advertise``: the ``leafnode_urls`` of the INFO a leaf is greeted with.

By default the hub names its own leaf port; ``advertise`` names the
address given instead, and ``no_advertise`` leaves the list out (a leaf
still links).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.targets.cluster import free_port
from tests.harness.cluster import requests_answered
from tests.harness.configured import configured_servers
from tests.harness.leafs import LeafSetup, hub_and_leaf
from tests.harness.wait import WAIT

pytestmark = pytest.mark.cluster


async def _greeting(target_kind: str, tmp_path: Path, extra: str) -> tuple[int, dict[str, Any]]:
    port = free_port()
    async with configured_servers(target_kind, tmp_path) as start:
        await start(f'leafnodes {{ listen: "127.0.0.1:{port}"\n{extra} }}\n')
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            line = await asyncio.wait_for(reader.readline(), WAIT)
        finally:
            writer.close()
    assert line.startswith(b"INFO ")
    info: dict[str, Any] = json.loads(line[5:])
    return port, info


async def test_the_hub_names_its_leaf_port(target_kind: str, tmp_path: Path) -> None:
    port, info = await _greeting(target_kind, tmp_path, "")
    assert info["leafnode_urls"] == [f"127.0.0.1:{port}"]


async def test_advertise_names_the_address_given(target_kind: str, tmp_path: Path) -> None:
    _, info = await _greeting(target_kind, tmp_path, 'advertise: "edge.example.com:7500"')
    assert info["leafnode_urls"] == ["edge.example.com:7500"]


async def test_no_advertise_leaves_the_urls_out(target_kind: str, tmp_path: Path) -> None:
    _, info = await _greeting(target_kind, tmp_path, "no_advertise: true")
    assert "leafnode_urls" not in info
    assert info["info_on_connect"] is True  # the field before them is there


async def test_a_leaf_links_to_a_hub_that_does_not_advertise(target_kind: str, tmp_path: Path) -> None:
    setup = LeafSetup(hub_extra="no_advertise: true", jetstream=False)
    async with hub_and_leaf(target_kind, target_kind, tmp_path, setup=setup) as (hub, leaf):
        hub_client, leaf_client = await nats.connect(hub.url), await nats.connect(leaf.url)
        await requests_answered(hub_client, leaf_client, f"svc.{secrets.token_hex(4)}")
        await hub_client.close()
        await leaf_client.close()
