"""Mirrors and sources of file streams across a restart, on both targets.

Every expectation was read off nats-server 2.15.1.  Facts pinned here:

* After a restart a source resumes after the last origin sequence named in
  the target's stored ``Nats-Stream-Source`` headers (nats-server scans them
  back from the end), so nothing is copied twice and nothing is lost, even
  with the target's own messages stored after the sourced ones.
* A mirror resumes at its last sequence plus one.
"""

from __future__ import annotations

import nats

from tests.harness.feeds import create, get, source_header, until
from tests.harness.js import api
from tests.harness.targets import Target
from tests.harness.wait import WAIT


async def test_sources_and_mirrors_resume_after_a_restart(target: Target) -> None:
    nc = await nats.connect(target.url)
    await create(nc, "O", subjects=["o.>"], storage="file")
    await create(nc, "P", subjects=["p.>"], storage="file")
    for i in range(3):
        await nc.request(f"o.{i}", b"x%d" % i, timeout=WAIT)
        await nc.request(f"p.{i}", b"y%d" % i, timeout=WAIT)
    await create(
        nc, "T", subjects=["t"], storage="file", sources=[{"name": "O"}, {"name": "P", "filter_subject": "p.1"}]
    )
    await create(nc, "M", storage="file", mirror={"name": "O"})
    await until(nc, "T", lambda i: i["state"]["messages"] == 4)
    await until(nc, "M", lambda i: i["state"]["last_seq"] == 3)
    await nc.request("t", b"own", timeout=WAIT)  # the target's own message, last
    await nc.close()

    await target.restart()

    nc = await nats.connect(target.url)
    try:
        for i in range(3, 5):
            await nc.request(f"o.{i}", b"x%d" % i, timeout=WAIT)
        await nc.request("p.1", b"y1 again", timeout=WAIT)
        t = await until(nc, "T", lambda i: i["state"]["messages"] == 8)
        m = await until(nc, "M", lambda i: i["state"]["last_seq"] == 5)
        assert (t["state"]["messages"], m["state"]["messages"]) == (8, 5)
        got = [source_header(await get(nc, "T", seq)).split(" ")[:2] for seq in range(1, 9)]
        assert got[4] == [""]  # the own message
        by_origin = {name: [int(h[1]) for h in got if h[0] == name] for name in ("O", "P")}
        assert by_origin == {"O": [1, 2, 3, 4, 5], "P": [2, 4]}
        t = await until(nc, "T", lambda i: i["state"]["messages"] != 8, deadline=0.5)
        assert t["state"]["messages"] == 8
        reply = await api(nc, "$JS.API.STREAM.INFO.T")
        assert sorted((s["name"], s.get("seq")) for s in reply["sources"]) == [("O", 5), ("P", 4)]
    finally:
        await nc.close()
