"""The controller: clock, faults, actions, scenarios and reset behind one API.

Every way of steering a running fakejs goes through :class:`Controller`:
the Python API (``server.control``), scenario files, the ``$FAKEJS.>``
request subjects and the HTTP endpoints under ``/fakejs/`` on the monitoring
port.  Actions are named so that a scenario line, a control request and a
method call mean the same thing; each is declared with its arguments in
:data:`fakejs.testkit.arguments.ACTION_ARGUMENTS`, and :meth:`Controller.run`
reads the arguments against that declaration before the method
(:data:`ACTIONS`) runs.

The controller acts on the server through :class:`~fakejs.testkit.host.ServerActions`.
An action that fails in the background (a restart, lame duck mode) is
recorded on the server, like every other handler failure.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import Callable, Coroutine
from typing import Any

from fakejs.core.clientio import KICKED
from fakejs.core.clock import Clock
from fakejs.core.session import ClientSession
from fakejs.gocompat import ids
from fakejs.jetstream import JetStreamWithApi
from fakejs.jetstream.errors import API_FAILURES
from fakejs.testkit.arguments import ACTION_ARGUMENTS
from fakejs.testkit.clock import ManualClock
from fakejs.testkit.conformance import ConformanceReport
from fakejs.testkit.faults import Fault, FaultError, Faults
from fakejs.testkit.host import ServerActions
from fakejs.testkit.introspection import clock_state, consumer_state, server_state
from fakejs.testkit.scenarios import Scenario, find_named, load_scenario, load_scenario_text
from fakejs.testkit.schema import check


class ControlError(ValueError):
    """A control request that cannot be carried out (unknown stream, bad argument...)."""


class Controller:
    """Steers one server (:class:`~fakejs.testkit.host.ServerActions`); every method runs on the server's loop."""

    def __init__(self, server: ServerActions) -> None:
        self.server = server
        self.faults: Faults = server.faults
        self.faults.run_action = self.run
        self.faults.soon = lambda callback, *args: self.server.loop.call_soon(callback, *args)
        self.faults.record_error = server.broker.record_error
        self.scenario: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._inboxes = itertools.count(1)  # reply subjects of api(), numbered per server
        self._leaf_cuts: list[Fault] = []  # drop_leafs(until_restored=True) faults, removed by restore_leafs

    # -- generic entry -----------------------------------------------------------------

    def run(self, action: str, args: dict[str, Any] | None = None, context: dict[str, Any] | None = None) -> Any:
        """Run a named action (from a fault, a scenario, the control subjects or HTTP)."""
        method = ACTIONS.get(action)
        if method is None:
            raise ControlError(f"unknown action {action!r} (known: {', '.join(sorted(ACTIONS))})")
        return method(self, **check(ACTION_ARGUMENTS[action], args or {}, defaults=False))

    def _spawn(self, action: str, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` in the background; if it fails, the failure is recorded on the server."""
        task = self.server.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(action, done))

    def _finished(self, action: str, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            error = task.exception()
            assert error is not None
            self.server.broker.record_error(f"control action {action!r}", error)

    # -- clock ---------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        return self.server.clock

    def _manual(self) -> ManualClock:
        clock = self.clock
        if not isinstance(clock, ManualClock):
            raise ControlError("the server runs on real time; start it with a manual clock to move time")
        return clock

    def advance_clock(self, seconds: float) -> dict[str, Any]:
        seconds = float(seconds)
        if not math.isfinite(seconds):
            # Infinity would fire self-renewing timers (PINGs) forever.
            raise ControlError(f"cannot advance the clock by {seconds} seconds")
        fired = self._manual().advance(seconds)
        return {"now": self.clock.monotonic(), "fired": fired}

    def advance_clock_to_next(self) -> dict[str, Any]:
        """Move a manual clock to its next timer that does work; ``seconds`` is ``None`` when none is pending."""
        seconds = self._manual().advance_to_next()
        return {"now": self.clock.monotonic(), "seconds": seconds}

    def clock_state(self) -> dict[str, Any]:
        return clock_state(self.clock)

    # -- faults --------------------------------------------------------------------------

    def add_fault(self, **spec: Any) -> Fault:
        try:
            return self.faults.add(Fault(**spec))
        except TypeError as exc:
            raise ControlError(f"bad fault: {exc}") from None

    def clear_faults(self) -> dict[str, Any]:
        self.faults.clear()
        return {"cleared": True}

    def answer_pulls(self, stream: str, consumer: str, code: int, text: str = "", count: int = 1) -> Fault:
        return self.add_fault(
            on="pull.request",
            do="reply_status",
            match={"stream": stream, "consumer": consumer},
            args={"code": int(code), "text": text},
            times=count,
        )

    def fail_api(self, error: str = "unavailable", subject: str = "$JS.API.>", count: int | None = None) -> Fault:
        if error not in API_FAILURES:
            raise ControlError(f"unknown API failure {error!r} (known: {', '.join(API_FAILURES)})")
        pattern = subject.replace(">", "*")
        return self.add_fault(
            on="api.request", do="fail_api", match={"subject": pattern}, args={"error": error}, times=count
        )

    def stop_heartbeats(self, stream: str = "*", consumer: str = "*") -> Fault:
        return self.add_fault(
            on="consumer.heartbeat", do="drop", match={"stream": stream, "consumer": consumer}, times=None
        )

    def drop_deliveries(self, stream: str = "*", consumer: str = "*", count: int | None = None) -> Fault:
        return self.add_fault(
            on="consumer.deliver", do="drop", match={"stream": stream, "consumer": consumer}, times=count
        )

    def delay_deliveries(
        self, seconds: float, stream: str = "*", consumer: str = "*", count: int | None = None
    ) -> Fault:
        return self.add_fault(
            on="consumer.deliver",
            do="delay",
            match={"stream": stream, "consumer": consumer},
            args={"seconds": float(seconds)},
            times=count,
        )

    def stall(self, client: str | int = "all") -> Fault:
        match = {} if client == "all" else ({"cid": int(client)} if str(client).isdigit() else {"name": str(client)})
        return self.add_fault(on="client.ping", do="ignore", match=match, times=None)

    # -- clients ---------------------------------------------------------------------------

    def clients(self, client: str | int = "all") -> list[ClientSession]:
        everyone = [c for c in self.server.broker.clients.values() if not c.closed]
        if client in ("all", "*", ""):
            return everyone
        if isinstance(client, int) or str(client).isdigit():
            return [c for c in everyone if c.cid == int(client)]
        return [c for c in everyone if c.name == client]

    def disconnect(self, client: str | int = "all", abrupt: bool = False) -> dict[str, Any]:
        chosen = self.clients(client)
        for session in chosen:
            session.close(KICKED, abort=bool(abrupt))
        return {"disconnected": [c.cid for c in chosen]}

    # -- leaf connections ---------------------------------------------------------------

    def drop_leafs(self, remote: str = "*", until_restored: bool = False) -> dict[str, Any]:
        """Close the leaf connections to servers named like ``remote``; with ``until_restored``, refuse them again."""
        leafs = self.server.broker.leafs
        if leafs is None:
            raise ControlError("this server has no leaf connections (leafnodes { } is not configured)")
        if until_restored:
            fault = self.add_fault(on="leaf.connect", do="drop", match={"remote": remote}, times=None)
            self._leaf_cuts.append(fault)
        return {"dropped": leafs.drop(remote), "until_restored": bool(until_restored)}

    def restore_leafs(self) -> dict[str, Any]:
        """Let the leaf connections that :meth:`drop_leafs` keeps down come up again (a leaf redials on its own)."""
        restored = [fault.id for fault in self._leaf_cuts if self.faults.remove(fault)]
        self._leaf_cuts.clear()
        return {"restored": restored}

    # -- server lifecycle ---------------------------------------------------------------

    def restart(self, down_for: float = 0.0) -> dict[str, Any]:
        """Stop now; start again on the same port after ``down_for`` seconds of server time."""
        self._spawn("restart", self.server.restart(float(down_for)))
        return {"restarting": True, "port": self.server.port}

    def lame_duck(self, duration: float | None = None, grace: float | None = None) -> dict[str, Any]:
        self._spawn("lame_duck", self.server.lame_duck(duration, grace))
        return {"lame_duck": True}

    # -- JetStream -----------------------------------------------------------------------

    def _js(self) -> JetStreamWithApi:
        js = self.server.jetstream
        if js is None:
            raise ControlError("JetStream is not enabled")
        return js

    def find_consumer(self, stream: str, consumer: str) -> Any:
        """A consumer by stream and name (:class:`ControlError` if there is none)."""
        found = self._js().streams.get(stream)
        if found is None:
            raise ControlError(f"no stream {stream!r}")
        target = found.consumers.get(consumer)
        if target is None:
            raise ControlError(f"no consumer {consumer!r} on stream {stream!r}")
        return target

    def delete_consumer(self, stream: str, consumer: str) -> dict[str, Any]:
        target = self.find_consumer(stream, consumer)
        target.stream.remove_consumer(target, "control")
        return {"deleted": f"{stream} > {consumer}"}

    def delete_stream(self, stream: str) -> dict[str, Any]:
        js = self._js()
        found = js.streams.get(stream)
        if found is None:
            raise ControlError(f"no stream {stream!r}")
        js.delete_stream(found, "control")
        return {"deleted": stream}

    def _groups(self, stream: str, consumer: str, group: str) -> tuple[Any, str]:
        target = self.find_consumer(stream, consumer)
        if target.priority is None:
            raise ControlError(f"consumer {consumer!r} has no priority groups")
        groups = target.config["priority_groups"]
        name = group or (groups[0] if groups else "")
        return target, name

    def unpin(self, stream: str, consumer: str, group: str = "") -> dict[str, Any]:
        target, name = self._groups(stream, consumer, group)
        target.unpin(name)
        return {"unpinned": name}

    def expire_pin(self, stream: str, consumer: str, group: str = "") -> dict[str, Any]:
        target, name = self._groups(stream, consumer, group)
        return {"expired": target.expire_pin(name)}

    # -- reset and scenarios ---------------------------------------------------------------

    def reset(self, clients: bool = False) -> dict[str, Any]:
        """Back to an empty server: no streams, no faults, no scenario, an empty timeline (clients optional)."""
        self.faults.clear()
        self.scenario = None
        js = self.server.jetstream
        removed = 0
        if js is not None:
            for stream in list(js.streams.values()):
                js.delete_stream(stream, "control")
                removed += 1
        if clients:
            self.disconnect("all")
        self.server.transcripts.clear()
        self.server.recorded.clear()
        if self.server.conformance_watch is not None:
            self.server.conformance_watch.clear()
        return {"streams_deleted": removed}

    # -- client conformance ---------------------------------------------------------------------

    def conformance(self) -> dict[str, Any]:
        """The conformance report as JSON-ready data (``watched: false`` when the server keeps no watch)."""
        watch = self.server.conformance_watch
        if watch is None:
            return ConformanceReport(watched=False).describe()
        return watch.report().describe()

    def expect_conformance(
        self, stream: str, consumer: str, consume: bool = False, ack_sync: bool = False
    ) -> dict[str, Any]:
        """Tell the watch how a consumer is used (by a consume loop; acked with AckSync)."""
        watch = self.server.conformance_watch
        if watch is None:
            raise ControlError("the server keeps no conformance watch: start it with conformance=True (--conformance)")
        watch.expect(stream, consumer, consume=consume, ack_sync=ack_sync)
        return {"stream": stream, "consumer": consumer, "consume": consume, "ack_sync": ack_sync}

    # -- a view inside ------------------------------------------------------------------------

    def state(self, messages: int = 100) -> dict[str, Any]:
        """Clients, streams with their messages, consumers, faults (see :mod:`fakejs.testkit.introspection`)."""
        return server_state(self.server, messages)

    def consumer_state(self, stream: str, consumer: str) -> dict[str, Any]:
        """Where a consumer stands: delivery position, pending acks, waiting pulls, pin."""
        return consumer_state(self.find_consumer(stream, consumer))

    def start_scenario(self, path: str | None = None, text: str | None = None) -> dict[str, Any]:
        """Load (by path or shipped name, or from TOML text) and start a scenario."""
        scenario = load_scenario(path) if path is not None else load_scenario_text(text or "", "<request>")
        return self._start(scenario)

    def start_named_scenario(self, name: object) -> dict[str, Any]:
        """Start a scenario a control request names: shipped, or a file in a configured scenario directory."""
        return self._start(find_named(name, self.server.broker.options.scenario_dirs))

    def _start(self, scenario: Scenario) -> dict[str, Any]:
        faults = scenario.start(self)
        self.scenario = scenario
        return {"scenario": scenario.name, "faults": [f.id for f in faults]}

    def api(self, subject: str, body: Any = None) -> dict[str, Any]:
        """A JetStream API request made from inside the server; returns the decoded reply."""
        router = self.server.broker.accounts.default.router
        inbox = f"$FAKEJS.INBOX.{next(self._inboxes)}"
        replies: list[bytes] = []
        sub = router.subscribe_internal(inbox, lambda s, r, h, payload, o: replies.append(payload))
        try:
            payload = b"" if body is None else json.dumps(body).encode()
            router.publish(subject, inbox, None, payload, None)
        finally:
            router.unsubscribe(sub)
        if not replies:
            raise ControlError(f"no reply to {subject} (is JetStream enabled?)")
        return dict(json.loads(replies[0]))

    async def api_answered(self, subject: str, body: Any = None, timeout: float = 10.0) -> dict[str, Any]:
        """:meth:`api`, waiting for the reply: a JetStream replicated across a cluster's servers answers once a
        group carried the request out, after the request returns, from the server that leads it.  The reply
        subject is a client's kind (the control API's own prefix is answered on every server), ``timeout`` in real
        seconds."""
        router = self.server.broker.accounts.default.router
        inbox = f"_INBOX.{ids.get_hash(self.server.broker.name)}.{next(self._inboxes)}"
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        def heard(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
            if not answer.done():
                answer.set_result(payload)

        sub = router.subscribe_internal(inbox, heard)
        try:
            router.publish(subject, inbox, None, b"" if body is None else json.dumps(body).encode(), None)
            payload = await asyncio.wait_for(answer, timeout)
        except TimeoutError:
            raise ControlError(f"no reply to {subject} (is JetStream enabled?)") from None
        finally:
            router.unsubscribe(sub)
        return dict(json.loads(payload))


ACTIONS: dict[str, Callable[..., Any]] = {
    "disconnect": Controller.disconnect,
    "restart": Controller.restart,
    "lame_duck": Controller.lame_duck,
    "delete_consumer": Controller.delete_consumer,
    "delete_stream": Controller.delete_stream,
    "unpin": Controller.unpin,
    "expire_pin": Controller.expire_pin,
    "answer_pulls": Controller.answer_pulls,
    "fail_api": Controller.fail_api,
    "stop_heartbeats": Controller.stop_heartbeats,
    "drop_deliveries": Controller.drop_deliveries,
    "delay_deliveries": Controller.delay_deliveries,
    "stall": Controller.stall,
    "drop_leafs": Controller.drop_leafs,
    "restore_leafs": Controller.restore_leafs,
    "advance_clock": Controller.advance_clock,
    "clear_faults": Controller.clear_faults,
}

__all__ = ["ACTIONS", "ControlError", "Controller", "FaultError"]
