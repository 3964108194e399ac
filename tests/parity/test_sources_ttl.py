"""Per-message TTLs (``Nats-TTL``) through sources and mirrors, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* A sourced message keeps its ``Nats-TTL`` header; a target with
  ``allow_msg_ttl`` expires it after the TTL (from its own store time), a
  target without keeps it for good.
* A mirror with ``allow_msg_ttl`` expires a mirrored message with the origin
  (the origin's timestamp is kept); a mirror without keeps it.
"""

from __future__ import annotations

import base64

from tests.harness.feeds import create, get, until
from tests.harness.wait import WAIT


async def test_ttls_through_sources_and_mirrors(nc) -> None:
    await create(nc, "O", subjects=["o.>"], allow_msg_ttl=True)
    await create(nc, "T", subjects=["t"], sources=[{"name": "O"}])
    await create(nc, "TT", subjects=["tt"], allow_msg_ttl=True, sources=[{"name": "O"}])
    await create(nc, "M", mirror={"name": "O"})
    await create(nc, "MT", allow_msg_ttl=True, mirror={"name": "O"})
    await nc.request("o.1", b"x", headers={"Nats-TTL": "1s"}, timeout=WAIT)
    await nc.request("o.2", b"y", timeout=WAIT)
    for name in ("T", "TT", "M", "MT"):
        got = await until(nc, name, lambda i: i["state"]["messages"] == 2)
        assert got["state"]["messages"] == 2, name
    header = base64.b64decode((await get(nc, "T", 1))["hdrs"]).decode()
    assert header.startswith("NATS/1.0\r\nNats-TTL: 1s\r\nNats-Stream-Source: O 1 > > o.1 ")
    for name in ("O", "TT", "MT"):
        got = await until(nc, name, lambda i: i["state"]["messages"] == 1)
        assert (got["state"]["messages"], got["state"]["first_seq"]) == (1, 2), name
    for name in ("T", "M"):
        got = await until(nc, name, lambda i: i["state"]["messages"] != 2, deadline=0.3)
        assert got["state"]["messages"] == 2, name
