"""A full JetStream API queue (``request_queue_limit`` / ``info_queue_limit``), on both targets.

Facts pinned (nats-server 2.15.1): with a queue limit of 1 every request of
that queue is dropped -- no reply, no audit -- and the system account gets
``$JS.EVENT.ADVISORY.API.LIMIT_REACHED`` (``api_limit_reached``: type, id,
timestamp, ``server`` (the server's name), ``dropped``), the account of
the request nothing.  Info requests (``$JS.API.INFO``, stream and consumer
info, names and lists) have their own queue, whose limit is the request
queue's unless ``info_queue_limit`` is set.  (nats-server checks the queue
after the push: now and then a worker has taken the request already, which
is then answered, and the advisory says ``dropped: 0``; fakejs, which
answers one request at a time, always drops it.)
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import nats
from nats.aio.msg import Msg

from tests.harness.configured import configured_servers
from tests.harness.system_account import SYSTEM, login
from tests.harness.targets import Settings
from tests.harness.wait import WAIT, eventually

LIMIT_REACHED = "$JS.EVENT.ADVISORY.API.LIMIT_REACHED"
UNANSWERED = 1.0  # seconds without an answer that show a request was dropped
ATTEMPTS = 5  # requests nats-server may answer before it drops one (see the module docstring)
_ID = re.compile(r"[0-9A-Za-z]{22}")


class Heard:
    def __init__(self) -> None:
        self.msgs: list[Msg] = []

    async def add(self, msg: Msg) -> None:
        self.msgs.append(msg)

    def on(self, subject: str) -> list[dict[str, Any]]:
        return [json.loads(m.data) for m in self.msgs if m.subject == subject]


async def answer(nc: nats.NATS, subject: str, body: bytes = b"") -> dict[str, Any] | None:
    try:
        return dict(json.loads((await nc.request(subject, body, timeout=UNANSWERED)).data))
    except nats.errors.TimeoutError:
        return None


async def dropped(nc: nats.NATS, subject: str, body: bytes, fake: bool) -> None:
    """Send the request until it goes unanswered: at once on fakejs, within a few tries on nats-server."""
    for _ in range(1 if fake else ATTEMPTS):
        if await answer(nc, subject, body) is None:
            return
    raise AssertionError(f"{subject} was answered every time")


def drops(heard: Heard) -> list[dict[str, Any]]:
    """The advisories of requests that were dropped (nats-server's ``dropped: 0`` ones left out)."""
    return [doc for doc in heard.on(LIMIT_REACHED) if doc["dropped"]]


async def test_a_full_request_queue_drops_the_request(target_kind: str, tmp_path: Path) -> None:
    settings = Settings(jetstream=True, jetstream_block="request_queue_limit: 1, info_queue_limit: 100")
    async with configured_servers(target_kind, tmp_path, settings) as start_server:
        target = await start_server(SYSTEM)
        sys, a = await login(target, "sys"), await login(target, "a")
        system, account = Heard(), Heard()
        try:
            await sys.subscribe("$JS.EVENT.ADVISORY.>", cb=system.add)
            await a.subscribe("$JS.EVENT.ADVISORY.>", cb=account.add)
            await sys.flush()
            await a.flush()
            info = await answer(a, "$JS.API.INFO")
            assert info is not None and info["type"] == "io.nats.jetstream.api.v1.account_info_response"
            create = json.dumps({"name": "ORDERS", "subjects": ["orders.>"]}).encode()
            await dropped(a, "$JS.API.STREAM.CREATE.ORDERS", create, target.is_fake)
            found = await eventually(lambda: asyncio.sleep(0, drops(system)), what=LIMIT_REACHED)
            doc = found[0]
            assert list(doc) == ["type", "id", "timestamp", "server", "dropped"], doc
            assert doc["type"] == "io.nats.jetstream.advisory.v1.api_limit_reached" and _ID.fullmatch(doc["id"])
            assert (doc["server"], doc["dropped"]) == (sys._server_info["server_name"], 1)
            # The account hears of the answered requests only, not of the drop.
            audits = [json.loads(m.data)["subject"] for m in account.msgs if m.subject.endswith(".API")]
            assert audits[0] == "$JS.API.INFO"
            assert len(audits) == len(system.on(LIMIT_REACHED)) - len(drops(system)) + 1
            assert not account.on(LIMIT_REACHED)
            if target.is_fake:
                assert len(system.on(LIMIT_REACHED)) == 1
        finally:
            await a.close()
            await sys.close()


async def test_the_info_queue_takes_the_request_limit(target_kind: str, tmp_path: Path) -> None:
    settings = Settings(jetstream=True, jetstream_block="request_queue_limit: 1")
    async with configured_servers(target_kind, tmp_path, settings) as start_server:
        target = await start_server(SYSTEM)
        sys, a = await login(target, "sys"), await login(target, "a")
        system = Heard()
        try:
            await sys.subscribe(LIMIT_REACHED, cb=system.add)
            await sys.flush()
            await dropped(a, "$JS.API.INFO", b"", target.is_fake)
            await dropped(a, "$JS.API.STREAM.NAMES", b"", target.is_fake)
            found = await eventually(
                lambda: asyncio.sleep(0, drops(system)), lambda docs: len(docs) == 2, what="two drops", timeout=WAIT
            )
            assert [doc["dropped"] for doc in found] == [1, 1]
        finally:
            await a.close()
            await sys.close()
