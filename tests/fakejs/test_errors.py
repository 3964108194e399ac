"""Exceptions inside the server are never swallowed: each is logged with its traceback and kept on the server.

Every place the server runs its own code for an event reports there: an
internal subscription's handler, a timer callback (on either clock), a fault
action, a control action or request, a connection's input, an HTTP answer.
The client that triggered it still gets an answer where one exists (a
``500``, a dropped connection), never a silent time-out.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.error
import urllib.request
from typing import Any

import nats
import pytest

from fakejs import ManualClock, Server, ThreadedServer
from fakejs.core.hooks import HookHit
from fakejs.jetstream.api.table import Route, RouteTable
from fakejs.monitoring import endpoints
from tests.harness.raw import RawClient


async def _connected(server: Server) -> RawClient:
    client = await RawClient.connect(server.host, server.port)
    await client.read_until(b"\r\n")
    await client.send(b'CONNECT {"verbose":false}\r\nPING\r\n')
    await client.read_until(b"PONG\r\n")
    return client


def _boom(*args: Any) -> None:
    raise RuntimeError("boom")


async def test_internal_subscription_failure_is_recorded_and_fan_out_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    async with Server() as server:
        router = server.broker.accounts.default.router
        router.subscribe_internal("work", _boom)
        client = await _connected(server)
        client.received.clear()
        await client.send(b"SUB work 1\r\nPUB work 2\r\nhi\r\nPING\r\n")
        data = await client.read_until(b"PONG\r\n")
        assert data == b"MSG work 1 2\r\nhi\r\nPONG\r\n"  # the client subscriber still got it
        [error] = server.errors
        assert error.where == "internal subscription on 'work' (a message on 'work')"
        assert isinstance(error.exception, RuntimeError)
        assert "_boom" in error.traceback and "RuntimeError: boom" in error.traceback
        assert "internal subscription on 'work'" in caplog.text and "Traceback" in caplog.text
        await client.close()


async def test_manual_clock_timer_failure_is_recorded_and_raised_by_advance() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        fired: list[str] = []
        clock.call_later(1, _boom)
        clock.call_later(2, fired.append, "after")
        with pytest.raises(RuntimeError, match="boom"):
            clock.advance(5)
        assert fired == ["after"]
        assert [e.where for e in server.errors] == ["timer callback _boom"]


async def test_system_clock_timer_failure_is_recorded() -> None:
    async with Server() as server:
        server.clock.call_later(0, _boom)
        errors = await server.wait_for(lambda: server.errors)
        assert isinstance(errors[0].exception, RuntimeError)


async def test_failing_fault_action_is_recorded() -> None:
    async with Server() as server:
        server.control.add_fault(on="client.connect", do="delete_stream", args={"stream": "NOPE"})
        nc = await nats.connect(server.url)
        errors = await server.wait_for(lambda: server.errors)
        assert errors[0].where == "fault 1 ('delete_stream')"
        assert "no stream 'NOPE'" in str(errors[0].exception)
        assert server.faults.fired_log[-1]["error"] == "no stream 'NOPE'"
        await nc.close()


class _FailingServer(Server):
    async def restart(self, down_for: float = 0.0) -> None:
        raise OSError("cannot restart")


async def test_failing_background_control_action_is_recorded() -> None:
    async with _FailingServer() as server:
        assert server.control.restart() == {"restarting": True, "port": server.port}
        errors = await server.wait_for(lambda: server.errors)
        assert errors[0].where == "control action 'restart'"
        assert isinstance(errors[0].exception, OSError)


async def test_failing_control_request_answers_and_is_recorded() -> None:
    clock = ManualClock()
    async with Server(clock=clock) as server:
        clock.call_later(1, _boom)
        nc = await nats.connect(server.url)
        reply = await nc.request("$FAKEJS.CLOCK.ADVANCE", b'{"seconds": 2}', timeout=2)
        assert json.loads(reply.data) == {"error": "internal error: RuntimeError('boom')"}
        assert [e.where for e in server.errors] == ["timer callback _boom"]  # recorded once
        await nc.close()


class _ExplodingHooks:
    """Hooks whose PING point is broken: the session's input handling raises."""

    def __bool__(self) -> bool:
        return True

    def fire(self, point: str, **context: Any) -> HookHit | None:
        if point == "client.ping":
            raise LookupError("broken hook")
        return None

    def settle(self) -> None:
        return None


async def test_connection_input_failure_is_recorded_and_the_connection_dropped() -> None:
    async with Server() as server:
        client = await _connected(server)
        server.broker.faults = _ExplodingHooks()
        await client.send(b"PING\r\n")
        assert await client.wait_closed(timeout=2)  # not a silent time-out
        [error] = server.errors
        assert error.where.startswith("client 127.0.0.1:") and error.where.endswith(" input")
        assert isinstance(error.exception, LookupError)
        await client.close()


async def test_failing_monitoring_endpoint_answers_500_and_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(endpoints.ENDPOINTS, "/boomz", _boom)
    async with Server(http_port=0) as server:
        url = f"{server.http_url}/boomz"
        with pytest.raises(urllib.error.HTTPError) as failed:
            await asyncio.to_thread(urllib.request.urlopen, url, None, 5)
        assert failed.value.code == 500
        assert [e.where for e in server.errors] == ["HTTP GET /boomz"]


async def test_failing_jetstream_api_handler_answers_500_and_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    async with Server() as server:
        assert server.jetstream is not None
        broken = RouteTable([Route("$JS.API.INFO", "account_info_response", _boom)])
        monkeypatch.setattr(server.jetstream.api, "table", broken)
        nc = await nats.connect(server.url)
        try:
            reply = json.loads((await nc.request("$JS.API.INFO", b"", timeout=2)).data)
        finally:
            await nc.close()
        assert reply == {
            "type": "io.nats.jetstream.api.v1.account_info_response",
            "error": {"code": 500, "description": "fakejs internal error: RuntimeError('boom')"},
        }
        [error] = server.take_errors()
        assert isinstance(error.exception, RuntimeError) and "$JS.API.INFO" in error.where


async def test_take_errors_forgets_them() -> None:
    async with Server() as server:
        server.broker.record_error("somewhere", ValueError("x"))
        server.broker.record_error("again", server.errors[0].exception)  # one failure, two reports
        assert [e.where for e in server.take_errors()] == ["somewhere"]
        assert server.errors == []


def test_threaded_server_exposes_errors(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.CRITICAL, logger="fakejs"), ThreadedServer() as threaded:
        assert threaded.errors == []
        assert threaded.server is not None
        server = threaded.server
        threaded.call(lambda: server.clock.call_later(0, _boom))
        for _ in range(200):
            if threaded.errors:
                break
            threaded.call(lambda: None)
        assert [e.where for e in threaded.errors] == ["timer callback _boom"]
        assert len(threaded.take_errors()) == 1
        assert threaded.errors == []
