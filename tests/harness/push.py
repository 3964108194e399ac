"""Push consumers over a raw connection: :class:`PushWire` and :class:`PushEnv`.

A push consumer delivers to its ``deliver_subject`` whoever listens there;
the tests subscribe with raw ``SUB``s so they see every delivery, heartbeat
and flow-control request exactly as sent, per subscription id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from tests.harness.env import Env
from tests.harness.js import api
from tests.harness.raw import RawClient
from tests.harness.wait import WAIT, eventually
from tests.harness.wire import Frame, Wire

# --------------------------------------------------------------------------- raw wire


class PushWire(Wire):
    """A raw connection with plain SUB/UNSUB/PUB helpers; frames are read per sid."""

    def __init__(self, client: RawClient) -> None:
        super().__init__(client)
        self.next_sid = 0

    async def sub(self, subject: str, queue: str | None = None) -> int:
        self.next_sid += 1
        q = b" " + queue.encode() if queue else b""
        await self.send(b"SUB %s%s %d\r\n" % (subject.encode(), q, self.next_sid))
        await self.ping()
        return self.next_sid

    async def unsub(self, sid: int) -> None:
        await self.send(b"UNSUB %d\r\n" % sid)
        await self.ping()

    async def pub(self, subject: str, payload: bytes = b"", reply: str = "") -> None:
        target = subject.encode() + (b" " + reply.encode() if reply else b"")
        await self.send(b"PUB %s %d\r\n%s\r\n" % (target, len(payload), payload))

    def on(self, sid: int) -> list[Frame]:
        return [f for f in self.frames if f.sid == sid]

    async def wait(
        self, sid: int, count: int, timeout: float = WAIT, what: Callable[[Frame], bool] | None = None
    ) -> list[Frame]:
        match = what or (lambda f: True)
        await self.until(
            lambda: len([f for f in self.on(sid) if match(f)]) >= count, f"{count} frame(s) on sid {sid}", timeout
        )
        return self.on(sid)

    async def wait_msgs(self, sid: int, count: int, timeout: float = WAIT) -> list[Frame]:
        await self.wait(sid, count, timeout, lambda f: f.status is None)
        return [f for f in self.on(sid) if f.status is None]


# --------------------------------------------------------------------------- environment


class PushEnv(Env):
    """Stream ``S`` (subjects ``s.>``, memory), a nats-py connection for the API and raw wires."""

    wire_class = PushWire
    consumer_defaults: ClassVar[dict[str, Any]] = {"deliver_subject": "dlv", "ack_policy": "none"}

    async def start(self, **stream: Any) -> PushEnv:
        await self.connect()
        await self.add_stream(**stream)
        return self

    async def wire(self) -> PushWire:
        wire: PushWire = await self.open_wire()
        return wire

    async def ephemeral(self, name: str, **config: Any) -> dict:
        cfg: dict[str, Any] = {"name": name, "ack_policy": "none"}
        cfg.update(config)
        reply = await api(self.nc, f"$JS.API.CONSUMER.CREATE.S.{name}", {"stream_name": "S", "config": cfg})
        assert "error" not in reply, reply
        return reply

    async def publish_many(self, count: int, payload: bytes | None = None, start: int = 0) -> None:
        for i in range(start, start + count):
            await self.publish(f"s.{i}", b"m%d" % i if payload is None else payload)

    async def exists(self, name: str) -> bool:
        reply = await self.info(name)
        if "error" in reply:
            assert reply["error"] == {"code": 404, "err_code": 10014, "description": "consumer not found"}
            return False
        return True

    async def push_bound(self, name: str = "C") -> bool | None:
        return (await self.info(name)).get("push_bound")

    def push_bound_is(self, name: str, value: bool | None) -> Callable[[], Any]:
        async def check() -> bool:
            return await self.push_bound(name) is value

        return check

    async def eventually(self, check: Callable[[], Any], what: str, timeout: float = WAIT) -> None:
        await eventually(check, what=what, timeout=timeout, interval=0.01)
