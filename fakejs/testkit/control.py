"""The controller: clock, faults, actions, scenarios and reset behind one API.

Every way of steering a running fakejs goes through :class:`Controller`:
the Python API (``server.control``), scenario files, the ``$FAKEJS.>``
request subjects and the HTTP endpoints under ``/fakejs/`` on the monitoring
port.  Actions are named so that a scenario line, a control request and a
method call mean the same thing:

=====================  ==========================================================
``disconnect``         close clients (``client``: ``"all"``, a name or a client id;
                       ``abrupt``: reset the socket instead of a clean close)
``restart``            stop and start again on the same port, keeping the store
                       (``down_for``: seconds of server time to stay down)
``lame_duck``          INFO with ``ldm``, stop accepting, close clients, shut down
``delete_consumer``    delete a consumer (waiting pulls get ``409 Consumer Deleted``)
``delete_stream``      delete a stream and its consumers
``unpin`` /            drop a priority group's pin, with the ``admin`` or
``expire_pin``         ``timeout`` advisory
``answer_pulls``       answer the next ``count`` pulls of a consumer with a status
``fail_api``           fail JetStream API requests (``unavailable`` or
                       ``insufficient_resources``), ``count`` times or until removed
``stop_heartbeats``    stop idle heartbeats (of one consumer or all)
``drop_deliveries`` /  drop or delay deliveries to a consumer
``delay_deliveries``
``stall``              stop answering PINGs (of one client or all)
``advance_clock``      move a manual clock forward
``clear_faults``       remove every installed fault
=====================  ==========================================================
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.clock import ManualClock
from fakejs.jetstream.errors import API_FAILURES
from fakejs.testkit.faults import Fault, FaultError, Faults

if TYPE_CHECKING:
    from fakejs.core.session import ClientSession
    from fakejs.server.server import Server


_inboxes = itertools.count(1)


class ControlError(ValueError):
    """A control request that cannot be carried out (unknown stream, bad argument...)."""


class Controller:
    """Steers one :class:`~fakejs.server.server.Server`; every method runs on the server's loop."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.faults: Faults = server.faults
        self.faults.actions = frozenset(ACTIONS)
        self.faults.run_action = self.run
        self.faults.soon = lambda callback, *args: self.server.loop.call_soon(callback, *args)
        self.scenario: Any = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- generic entry -----------------------------------------------------------------

    def run(self, action: str, args: dict[str, Any] | None = None, context: dict[str, Any] | None = None) -> Any:
        """Run a named action (from a fault, a scenario, the control subjects or HTTP)."""
        method = ACTIONS.get(action)
        if method is None:
            raise ControlError(f"unknown action {action!r} (known: {', '.join(sorted(ACTIONS))})")
        args = dict(args or {})
        try:
            return method(self, **args)
        except TypeError as exc:
            raise ControlError(f"bad arguments for {action!r}: {exc}") from None

    def _spawn(self, coro: Any) -> None:
        task = self.server.loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- clock ---------------------------------------------------------------------------

    @property
    def clock(self) -> Any:
        return self.server.clock

    def _manual(self) -> ManualClock:
        if not isinstance(self.clock, ManualClock):
            raise ControlError("the server runs on real time; start it with a manual clock to move time")
        return self.clock

    def advance_clock(self, seconds: float) -> dict[str, Any]:
        fired = self._manual().advance(float(seconds))
        return {"now": self.clock.monotonic(), "fired": fired}

    def clock_state(self) -> dict[str, Any]:
        manual = isinstance(self.clock, ManualClock)
        doc: dict[str, Any] = {"manual": manual, "now": self.clock.monotonic(), "time_ns": self.clock.time_ns()}
        if manual:
            doc["next_deadline"] = self.clock.next_deadline()
            doc["autojump"] = self.clock.autojump_threshold
        return doc

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
        from fakejs.core.session import KICKED

        chosen = self.clients(client)
        for session in chosen:
            session.close(KICKED, abort=bool(abrupt))
        return {"disconnected": [c.cid for c in chosen]}

    # -- server lifecycle ---------------------------------------------------------------

    def restart(self, down_for: float = 0.0) -> dict[str, Any]:
        """Stop now; start again on the same port after ``down_for`` seconds of server time."""
        self._spawn(self.server.restart(float(down_for)))
        return {"restarting": True, "port": self.server.port}

    def lame_duck(self, duration: float | None = None, grace: float | None = None) -> dict[str, Any]:
        self._spawn(self.server.lame_duck(duration, grace))
        return {"lame_duck": True}

    # -- JetStream -----------------------------------------------------------------------

    def _js(self) -> Any:
        js = self.server.jetstream
        if js is None:
            raise ControlError("JetStream is not enabled")
        return js

    def _consumer(self, stream: str, consumer: str) -> Any:
        found = self._js().streams.get(stream)
        if found is None:
            raise ControlError(f"no stream {stream!r}")
        target = found.consumers.get(consumer)
        if target is None:
            raise ControlError(f"no consumer {consumer!r} on stream {stream!r}")
        return target

    def delete_consumer(self, stream: str, consumer: str) -> dict[str, Any]:
        target = self._consumer(stream, consumer)
        target.stream.remove_consumer(target)
        return {"deleted": f"{stream} > {consumer}"}

    def delete_stream(self, stream: str) -> dict[str, Any]:
        js = self._js()
        found = js.streams.get(stream)
        if found is None:
            raise ControlError(f"no stream {stream!r}")
        js.delete_stream(found)
        return {"deleted": stream}

    def _groups(self, stream: str, consumer: str, group: str) -> tuple[Any, str]:
        target = self._consumer(stream, consumer)
        if target.priority is None:
            raise ControlError(f"consumer {consumer!r} has no priority groups")
        groups = target.config["priority_groups"]
        name = group or (groups[0] if groups else "")
        return target.priority, name

    def unpin(self, stream: str, consumer: str, group: str = "") -> dict[str, Any]:
        priority, name = self._groups(stream, consumer, group)
        priority.unpin(name)
        return {"unpinned": name}

    def expire_pin(self, stream: str, consumer: str, group: str = "") -> dict[str, Any]:
        priority, name = self._groups(stream, consumer, group)
        had = priority.pin_id
        priority.expire(name)
        return {"expired": had}

    # -- reset and scenarios ---------------------------------------------------------------

    def reset(self, clients: bool = False) -> dict[str, Any]:
        """Back to an empty server: no streams, no faults, no scenario (clients optional)."""
        self.faults.clear()
        self.scenario = None
        js = self.server.jetstream
        removed = 0
        if js is not None:
            for stream in list(js.streams.values()):
                js.delete_stream(stream)
                removed += 1
        if clients:
            self.disconnect("all")
        self.server.transcripts.clear()
        return {"streams_deleted": removed}

    def start_scenario(self, path: str | None = None, text: str | None = None) -> dict[str, Any]:
        """Load (by path or shipped name, or from TOML text) and start a scenario."""
        from fakejs.testkit.scenarios import load_scenario, load_scenario_text

        scenario = load_scenario(path) if path is not None else load_scenario_text(text or "", "<request>")
        faults = scenario.start(self)
        self.scenario = scenario
        return {"scenario": scenario.name, "faults": [f.id for f in faults]}

    def api(self, subject: str, body: Any = None) -> dict[str, Any]:
        """A JetStream API request made from inside the server; returns the decoded reply."""
        router = self.server.broker.router
        inbox = f"$FAKEJS.INBOX.{next(_inboxes)}"
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
    "advance_clock": Controller.advance_clock,
    "clear_faults": Controller.clear_faults,
}

__all__ = ["ACTIONS", "ControlError", "Controller", "FaultError"]
