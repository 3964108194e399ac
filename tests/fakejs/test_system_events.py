"""The system account's periodic events follow the server's clock (fakejs only: virtual time)."""

from __future__ import annotations

import asyncio
import json

import nats
from nats.aio.msg import Msg

from fakejs import Server, ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.gocompat.gotime import NS
from fakejs.testkit.clock import ManualClock

CONFIG = """
accounts {
  SYS { users: [ {user: sys, password: sys} ] }
  A { users: [ {user: a, password: a} ] }
}
system_account: SYS
"""


def _options() -> ServerOptions:
    options = ServerOptions(port=0, jetstream=False)
    loaded = load_text(CONFIG, base=options)
    assert not loaded.problem_text(), loaded.problem_text()
    return options


async def _drain() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


async def test_statsz_and_account_counts_repeat_on_the_server_clock() -> None:
    clock = ManualClock(start_ns=1_700_000_000 * NS)
    async with Server(_options(), clock=clock) as server:
        sys = await nats.connect(server.url, user="sys", password="sys")
        seen: list[tuple[str, dict[str, object]]] = []

        async def on_msg(msg: Msg) -> None:
            seen.append((msg.subject, json.loads(msg.data)))

        await sys.subscribe("$SYS.>", cb=on_msg)
        await sys.flush()
        a = await nats.connect(server.url, user="a", password="a")
        await _drain()
        seen.clear()
        # STATSZ: after 0.25 s, then at doubling intervals (0.75, 1.75, 3.75, 7.75 ...), at most every 10 s.
        statsz = f"$SYS.SERVER.{server.broker.server_id}.STATSZ"
        clock.advance(16)
        await _drain()
        stamps = [doc["server"]["time"] for subject, doc in seen if subject == statsz]  # type: ignore[index]
        assert len(stamps) == 6
        assert stamps[0] == "2023-11-14T22:13:20.25Z" and stamps[-1] == "2023-11-14T22:13:35.75Z"
        doc = next(doc for subject, doc in seen if subject == statsz)
        assert list(doc) == ["server", "statsz"]
        assert doc["statsz"]["connections"] == 2  # type: ignore[index]
        # A's connection count repeats every 30 s while it has clients, and stops when it has none.
        seen.clear()
        clock.advance(30)
        await _drain()
        counts = [subject for subject, _ in seen if subject.endswith(".CONNS") and ".A." in subject]
        assert counts == ["$SYS.SERVER.ACCOUNT.A.CONNS", "$SYS.ACCOUNT.A.SERVER.CONNS"]
        await a.close()
        await _drain()
        seen.clear()
        clock.advance(60)
        await _drain()
        assert not [subject for subject, _ in seen if subject.endswith(".A.SERVER.CONNS")]
        await sys.close()


async def test_no_one_logs_in_to_the_default_system_account() -> None:
    async with Server(port=0, jetstream=False) as server:
        system = server.broker.events.account
        assert system is not None and system.name == "$SYS" and not system.users
        nc = await nats.connect(server.url)
        try:
            # A client of $G asking the system account's subjects asks its own account: nobody answers.
            try:
                await nc.request("$SYS.REQ.SERVER.PING", b"", timeout=0.5)
            except nats.errors.NoRespondersError:
                pass
            else:  # pragma: no cover - a failure
                raise AssertionError("$G answered a system request")
        finally:
            await nc.close()
