"""A test's environment: a target, a nats-py connection for the API, raw wires and more clients.

Parity tests of pull requests, push consumers and Direct Get each set up
the same things -- stream ``S`` on ``s.>``, a consumer, a raw
:class:`~tests.harness.wire.Wire` or two -- and close them all afterwards.
:class:`Env` is that set-up, once; :mod:`tests.harness.pull`,
:mod:`tests.harness.push` and :mod:`tests.harness.direct` add what each kind
of test needs, and :func:`env_fixture` makes the ``env`` fixture of a test
module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar

import nats
import pytest
from nats.aio.client import Client

from tests.harness.js import api, create_stream, rfc3339_ns, stored
from tests.harness.targets import Target
from tests.harness.wire import Wire


class Env:
    """Stream ``S`` (subjects ``s.>``), consumers on it, raw wires and clients, all closed by :meth:`close`."""

    wire_class: ClassVar[type[Wire]] = Wire
    stream_defaults: ClassVar[dict[str, Any]] = {"name": "S", "subjects": ["s.>"], "storage": "memory"}
    consumer_defaults: ClassVar[dict[str, Any]] = {"ack_policy": "explicit"}

    def __init__(self, target: Target) -> None:
        self.target = target
        self.nc: Client | None = None
        self.wires: list[Any] = []
        self.clients: list[Client] = []

    @property
    def api_client(self) -> Client:
        assert self.nc is not None, "connect first"
        return self.nc

    async def connect(self) -> Client:
        """The connection API requests go through (:attr:`nc`)."""
        self.nc = await nats.connect(self.target.url)
        return self.nc

    async def add_stream(self, **config: Any) -> dict:
        """Create stream ``S`` (:attr:`stream_defaults` with ``config`` applied)."""
        return await create_stream(self.api_client, {**self.stream_defaults, **config})

    async def client(self, **kwargs: Any) -> Client:
        """Another nats-py connection, closed with the environment."""
        nc = await nats.connect(self.target.url, **kwargs)
        self.clients.append(nc)
        return nc

    async def open_wire(self, **kwargs: Any) -> Any:
        """A raw connection of :attr:`wire_class`, closed with the environment."""
        wire = await self.wire_class.open(self.target, **kwargs)
        self.wires.append(wire)
        return wire

    async def add_consumer(self, name: str = "C", **config: Any) -> dict:
        """A durable consumer on ``S`` (:attr:`consumer_defaults` with ``config`` applied); must be created."""
        cfg = {"durable_name": name, **self.consumer_defaults, **config}
        reply = await api(self.api_client, f"$JS.API.CONSUMER.CREATE.S.{name}", {"stream_name": "S", "config": cfg})
        assert "error" not in reply, reply
        return reply

    async def publish(self, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None) -> int:
        """Store a message; returns its stream sequence."""
        return await stored(self.api_client, subject, payload, headers)

    async def info(self, consumer: str = "C") -> dict:
        """CONSUMER.INFO as the server answers it (possibly an error)."""
        return await api(self.api_client, f"$JS.API.CONSUMER.INFO.S.{consumer}")

    async def stored_time(self, seq: int) -> str:
        """The time stamp stream ``S`` keeps for message ``seq`` (RFC 3339)."""
        reply = await api(self.api_client, "$JS.API.STREAM.MSG.GET.S", {"seq": seq})
        assert "message" in reply, reply
        return str(reply["message"]["time"])

    async def stored_ns(self, seq: int) -> int:
        """:meth:`stored_time` in nanoseconds since the epoch (as in ack subjects)."""
        return rfc3339_ns(await self.stored_time(seq))

    async def elapse(self, seconds: float) -> None:
        """Let ``seconds`` pass for the server's timers (see :meth:`Target.elapse`)."""
        await self.target.elapse(seconds)

    async def close(self) -> None:
        for wire in self.wires:
            await wire.close()
        for nc in [*self.clients, self.nc]:
            if nc is not None and not nc.is_closed:
                await nc.close()


def env_fixture(kind: type[Env], start: Callable[[Any], Any] | None = None) -> Any:
    """The ``env`` fixture of a test module: a ``kind`` for the test's target, closed afterwards.

    ``start(env)``, if given, is awaited before the test gets it.
    """

    @pytest.fixture
    async def env(target: Target) -> AsyncIterator[Env]:
        environment = kind(target)
        if start is not None:
            await start(environment)
        yield environment
        await environment.close()

    return env
