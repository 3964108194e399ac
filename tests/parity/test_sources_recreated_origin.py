"""An origin deleted and created again under a mirror and a source, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* Neither info block shows an error: the consumers went with the origin,
  and the 10 s health check (no word from the origin for that long) sets
  new ones up.
* The source's new consumer is refused for the origin's changed identity;
  the source forgets its place (no ``seq`` shown) and takes the new origin
  from its first message.
* The mirror's new consumer starts after the mirror's last sequence and
  waits there: the new origin's messages below it are never copied.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.harness.feeds import create, get, until
from tests.harness.js import api
from tests.harness.wait import WAIT

pytestmark = pytest.mark.slow


async def test_recreated_origin(nc) -> None:
    await create(nc, "O", subjects=["o.>"])
    for i in range(3):
        await nc.request(f"o.{i}", b"x", timeout=WAIT)
    await create(nc, "M", mirror={"name": "O"})
    await create(nc, "T", sources=[{"name": "O"}])
    await until(nc, "T", lambda i: i["state"]["messages"] == 3)
    await until(nc, "M", lambda i: i["state"]["messages"] == 3)
    await api(nc, "$JS.API.STREAM.DELETE.O")
    await create(nc, "O", subjects=["o.>"])
    for i in range(2):
        await nc.request(f"o.n{i}", b"y", timeout=WAIT)
    t = await until(nc, "T", lambda i: i["state"]["messages"] == 5, deadline=25)
    assert (t["state"]["messages"], t["sources"][0]["seq"]) == (5, 2)
    assert "error" not in t["sources"][0]
    await asyncio.sleep(0.5)  # the mirror's new consumer is set up by now too
    m = await until(nc, "M", lambda i: (i["state"]["last_seq"], "error" in i["mirror"]) == (3, False))
    assert (m["state"]["last_seq"], "error" in m["mirror"]) == (3, False)
    for i in range(3):
        await nc.request(f"o.m{i}", b"z", timeout=WAIT)
    # Under load nats-server may report the stored message before the source's sequence: poll both.
    # The mirror's new consumer comes with a health check, every 10 s, once the origin was silent for
    # 10 s: up to two checks after the delete on a busy machine.
    m = await until(nc, "M", lambda i: (i["state"]["last_seq"], i["state"]["messages"]) == (5, 5), deadline=25)
    t = await until(nc, "T", lambda i: (i["state"]["messages"], i["sources"][0].get("seq")) == (8, 5))
    assert (m["state"]["messages"], t["state"]["messages"], t["sources"][0]["seq"]) == (5, 8, 5)
    assert (await get(nc, "M", 4))["subject"] == "o.m1"
