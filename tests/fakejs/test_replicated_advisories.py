"""Advisories of a JetStream replicated across in-process servers: what a restarted server does not say again.

A server reading its meta log back at start (nats-server's recovery) applies
the assignments and removals it had applied before; the advisories of those
actions went out the first time, and it sends none of them again (the
parity of each advisory with nats-server is in
``tests/parity/js_processes/test_js_processes_advisories.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import nats
import pytest

from tests.harness.heard import AUDIT, Heard
from tests.harness.replicated import (
    all_joined,
    meta_leader,
    replicated_cluster,
    request,
    stream_config,
    wait,
    wait_for_leader,
)

pytestmark = pytest.mark.cluster

ADVISORY = "$JS.EVENT.ADVISORY."


async def test_a_server_reading_its_meta_log_back_announces_nothing_again(tmp_path: Path) -> None:
    async with replicated_cluster(3, store=tmp_path, tags=[[], [], ["here"]]) as cluster:
        await wait(lambda: meta_leader(cluster) is not None and all_joined(cluster))
        nc = await nats.connect(cluster.url("n1"))
        try:
            heard = Heard(nc)
            await nc.subscribe(ADVISORY + ">", cb=heard.add)
            config = {**stream_config("BACK", 1), "placement": {"tags": ["here"]}}
            assert (await request(nc, "$JS.API.STREAM.CREATE.BACK", config))["cluster"]["leader"] == "n3"
            durable = {"stream_name": "BACK", "config": {"durable_name": "C"}}
            assert (await request(nc, "$JS.API.CONSUMER.CREATE.BACK.C", durable))["name"] == "C"
            assert (await request(nc, "$JS.API.CONSUMER.DELETE.BACK.C"))["success"] is True
            await heard.first(ADVISORY + "CONSUMER.DELETED.BACK.C")
            announced = [m.subject for m in heard.msgs if m.subject != AUDIT]
            assert sorted(announced) == [
                ADVISORY + "CONSUMER.CREATED.BACK.C",
                ADVISORY + "CONSUMER.DELETED.BACK.C",
                ADVISORY + "STREAM.CREATED.BACK",
            ]

            heard.msgs.clear()
            await cluster.kill("n3")
            await cluster.restart("n3")  # reads the meta log back: the stream, its consumer, the consumer's removal
            await wait_for_leader(nc, "BACK", lambda leader: leader == "n3")
            info = await request(nc, "$JS.API.STREAM.INFO.BACK")
            assert info["state"]["consumer_count"] == 0
            await heard.audit_of("$JS.API.STREAM.INFO.BACK")  # n3's answer, after what it read back
            assert [m.subject for m in heard.msgs if m.subject != AUDIT] == []
            assert {json.loads(m.data)["subject"] for m in heard.msgs} == {"$JS.API.STREAM.INFO.BACK"}
        finally:
            await nc.close()
        assert cluster.errors == []
