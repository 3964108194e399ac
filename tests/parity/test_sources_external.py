"""Mirrors and sources of another JetStream domain or another account (``external``), on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* ``external: {api: "$JS.<domain>.API"}`` on a server whose own domain is
  ``<domain>`` is accepted but reaches nobody: the consumer request is sent
  without the account's subject mappings, so no answer, no error, nothing copied.
* Across accounts, the importing account reaches the exporter's API through
  a service import (``$JS.A.API.>`` -> ``$JS.API.>``) and gets the
  deliveries through a stream import of the deliver prefix; the consumer is
  created in the exporting account.
* The info blocks echo ``external`` as ``{api, deliver}``, both always written; the ``Nats-Stream-Source``
  header of a sourced message names the origin as ``<name>:<hash of the api prefix>``.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator

import nats
import pytest

from fakejs.gocompat.ids import get_hash as api_hash
from tests.harness.configured import Start, configured_servers
from tests.harness.feeds import create, get, info, shape, source_header, until
from tests.harness.js import api
from tests.harness.targets import Settings
from tests.harness.wait import WAIT

ACCOUNTS = """
accounts {
  A {
    jetstream: enabled
    users: [{user: a, password: a}]
    exports: [
      {service: "$JS.API.>"}
      {stream: "deliver.A.>"}
    ]
  }
  B {
    jetstream: enabled
    users: [{user: b, password: b}]
    imports: [
      {service: {account: A, subject: "$JS.API.>"}, to: "$JS.A.API.>"}
      {stream: {account: A, subject: "deliver.A.>"}}
    ]
  }
}
"""


@pytest.fixture
async def server(target_kind: str, tmp_path) -> AsyncIterator[Start]:
    async with configured_servers(target_kind, tmp_path) as start:
        yield start


async def test_the_servers_own_domain_prefix_reaches_nobody(make_target) -> None:
    """The request goes out without the account's mappings: no answer, no error shown, nothing copied."""
    target = await make_target(Settings(jetstream_domain="hub"))
    nc = await nats.connect(target.url)
    try:
        await create(nc, "O", subjects=["o.>"])
        await nc.request("o.1", b"x", timeout=WAIT)
        external = {"api": "$JS.hub.API", "deliver": ""}
        mirror = await create(nc, "M", mirror={"name": "O", "external": {"api": "$JS.hub.API"}})
        source = await create(nc, "S", sources=[{"name": "O", "external": {"api": "$JS.hub.API"}}])
        assert mirror["mirror"] == {"name": "O", "external": external, "lag": 0, "active": -1}
        assert source["sources"] == [{"name": "O", "external": external, "lag": 0, "active": -1}]
        assert source["config"]["sources"] == [{"name": "O", "external": external}]
        await asyncio.sleep(1.0)
        for name, block in (("M", "mirror"), ("S", "sources")):
            got = await info(nc, name)
            assert got["state"]["messages"] == 0
            assert got[block] == mirror["mirror"] if name == "M" else source["sources"]
    finally:
        await nc.close()


async def test_mirror_and_source_of_another_account(server: Start) -> None:
    target = await server(ACCOUNTS)
    a = await nats.connect(f"nats://a:a@{target.host}:{target.port}")
    b = await nats.connect(f"nats://b:b@{target.host}:{target.port}")
    try:
        await create(a, "O", subjects=["o.>"])
        for i in range(3):
            await a.request(f"o.{i}", b"x%d" % i, timeout=WAIT)
        external = {"api": "$JS.A.API", "deliver": "deliver.A"}
        mirror = await create(b, "M", mirror={"name": "O", "external": external})
        source = await create(b, "S", sources=[{"name": "O", "external": external}])
        assert mirror["mirror"] == {"name": "O", "external": external, "lag": 0, "active": -1}
        assert source["sources"] == [{"name": "O", "external": external, "lag": 0, "active": -1}]
        m = await until(b, "M", lambda i: i["state"]["messages"] == 3)
        s = await until(b, "S", lambda i: i["state"]["messages"] == 3)
        assert (m["state"]["last_seq"], s["state"]["last_seq"]) == (3, 3)
        assert shape(m["mirror"]) == {"name": "O", "external": external, "lag": 0, "active": 1}
        assert [shape(x) for x in s["sources"]] == [
            {"name": "O", "external": external, "lag": 0, "seq": 3, "active": 1}
        ]
        header = source_header(await get(b, "S", 2)).split(" ")
        assert header[:5] == ["O:" + api_hash("$JS.A.API"), "2", ">", ">", "o.1"]
        assert (await get(b, "M", 3))["data"] == base64.b64encode(b"x2").decode()
        origin = await api(a, "$JS.API.STREAM.INFO.O")
        assert origin["state"]["consumer_count"] == 0  # the sourcing consumers are direct ones
    finally:
        await a.close()
        await b.close()
