"""Faults at named hook points: what no real server lets a test arrange.

Domain code calls :meth:`Faults.fire` at a few named **hook points** (a
client connected, a PING arrived, a pull request reached a consumer, a
message is about to be delivered, an idle heartbeat is due, a JetStream API
request arrived or is about to be answered).  A :class:`Fault` waits at one
point for events that match it, skips the first ``after`` of them, and then
either **changes the event** (answer a pull with a status, drop a delivery,
swallow a heartbeat, fail an API request...) or **runs an action** (delete a
consumer, disconnect clients, restart the server...) through the server's
:class:`~fakejs.testkit.control.Controller`.  Faults can also be due at a time on
the server clock.  Nothing is monkeypatched: without faults every hook is a
dictionary lookup that finds nothing.  An action that raises is recorded on
the server (see :mod:`fakejs.core.failures`), so the test learns of it.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.clock import Clock, ErrorSink, TimerHandle
from fakejs.core.hooks import HOOK_POINTS, MATCH_KEYS
from fakejs.core.recorder import NO_RECORDER, Recorder

__all__ = [
    "CLUSTER_ACTION_NAMES",
    "HOOK_POINTS",
    "MATCH_KEYS",
    "Fault",
    "FaultError",
    "Faults",
    "Hit",
    "validate",
]

# The actions only a cluster of servers can run (a scenario started on a cluster; see
# fakejs.server.cluster_scenarios).  ``restart`` is both: on a cluster it restarts a named node.
CLUSTER_ACTION_NAMES = frozenset({"kill", "shutdown", "restart", "partition", "heal", "step_down", "move_leader"})


class FaultError(ValueError):
    """A fault or scenario that cannot work (unknown point, action or key)."""


@dataclass
class Fault:
    """One fault: where it waits, what it matches, when it fires, what it does.

    ``on`` is a hook point, or ``None`` for a fault due ``at`` a clock time
    (seconds after it was added).  ``do`` is an event change allowed at the
    point (see :data:`HOOK_POINTS`) or a controller action
    (:data:`fakejs.testkit.control.ACTIONS`).  ``after`` matching events pass
    untouched first; then the fault fires ``times`` times (``None``: for
    as long as it is installed).  An action runs just after the event that
    triggered it has been handled (so a consumer deleted "on a pull" is
    deleted under that waiting pull), or ``delay`` seconds of server time
    later.  A scenario's step is installed as a fault that names its
    ``scenario`` and its ``step`` (index in the file): the timeline records
    the step when it fires.
    """

    do: str
    on: str | None = None
    at: float | None = None
    match: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    after: int = 0
    times: int | None = 1
    delay: float = 0.0
    name: str = ""
    seen: int = 0
    fired: int = 0
    id: int = 0
    scenario: str = ""
    step: int = -1

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def matches(self, context: dict[str, Any]) -> bool:
        for key, wanted in self.match.items():
            value = context.get(key)
            if value is None:
                return False
            if isinstance(wanted, str) and isinstance(value, str):
                if not fnmatch.fnmatchcase(value, wanted):
                    return False
            elif value != wanted and str(value) != str(wanted):
                return False
        return True

    def describe(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"id": self.id, "do": self.do}
        for key in ("name", "on", "at", "match", "args", "after", "times", "delay"):
            value = getattr(self, key)
            if value not in (None, "", {}):
                doc[key] = value
        doc["fired"] = self.fired
        return doc


class Hit:
    """A fault firing at a hook point: the event change the caller must make (a plain class: a dataclass
    costs its import, and every start imports this module)."""

    __slots__ = ("args", "change", "fault")

    def __init__(self, fault: Fault, change: str, args: dict[str, Any]) -> None:
        self.fault = fault
        self.change = change
        self.args = args


def validate(fault: Fault, actions: frozenset[str] | None = None) -> None:
    """Refuse faults that could never work, naming what is wrong (``actions``: the controller's, unless given)."""
    if actions is None:
        # The actions' declarations come with the first fault: a server nobody gives one never loads them
        from fakejs.testkit.arguments import ACTION_NAMES

        actions = ACTION_NAMES
    if (fault.on is None) == (fault.at is None):
        raise FaultError("a fault needs exactly one trigger: 'on' (a hook point) or 'at' (seconds)")
    if fault.on is not None:
        if fault.on not in HOOK_POINTS:
            raise FaultError(f"unknown hook point {fault.on!r} (known: {', '.join(sorted(HOOK_POINTS))})")
        unknown = set(fault.match) - MATCH_KEYS[fault.on]
        if unknown:
            raise FaultError(f"hook point {fault.on!r} cannot match on {', '.join(sorted(unknown))}")
        changes = HOOK_POINTS[fault.on][1]
        if fault.do not in changes and fault.do not in actions:
            raise FaultError(
                f"unknown action {fault.do!r} for {fault.on!r} (event changes: {', '.join(sorted(changes))}; "
                f"actions: {', '.join(sorted(actions))})"
            )
    else:
        if fault.do not in actions:
            raise FaultError(f"unknown action {fault.do!r} (actions: {', '.join(sorted(actions))})")
        if fault.at is None or fault.at < 0:
            raise FaultError("'at' must be a number of seconds >= 0")
    if fault.after < 0:
        raise FaultError("'after' must be >= 0")
    if fault.delay < 0:
        raise FaultError("'delay' must be >= 0")
    if fault.times is not None and fault.times < 1:
        raise FaultError("'times' must be >= 1")


class Faults:
    """The installed faults of one server."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._by_point: dict[str, list[Fault]] = {}
        self._timed: dict[int, tuple[Fault, TimerHandle]] = {}
        self._ids = itertools.count(1)
        self.fired_log: list[dict[str, Any]] = []
        # Set by the controller: runs an action (name, args, context), schedules a
        # callback right after the current event (the loop's call_soon), and
        # records an action that failed on the server.
        self.run_action: Callable[[str, dict[str, Any], dict[str, Any]], None] | None = None
        self.soon: Callable[..., Any] | None = None
        self.record_error: ErrorSink | None = None
        self._pending: list[tuple[Fault, dict[str, Any]]] = []
        self.recorder: Recorder = NO_RECORDER  # the server's timeline (see fakejs.core.recorder)
        self._settle_scheduled = False
        # The actions a fault may run (None: the controller's, fakejs.testkit.arguments.ACTION_NAMES).
        self.actions: frozenset[str] | None = None

    def __bool__(self) -> bool:
        return bool(self._by_point or self._timed or self._pending)  # one builtin call: asked on every read

    def add(self, fault: Fault) -> Fault:
        validate(fault, self.actions)
        fault.id = next(self._ids)
        if fault.on is not None:
            self._by_point.setdefault(fault.on, []).append(fault)
        else:
            assert fault.at is not None
            self._timed[fault.id] = (fault, self.clock.call_later(fault.at, self._due, fault))
        return fault

    def remove(self, fault: Fault | int) -> bool:
        fault_id = fault if isinstance(fault, int) else fault.id
        timed = self._timed.pop(fault_id, None)
        if timed is not None:
            timed[1].cancel()
            return True
        for point, faults in list(self._by_point.items()):
            for item in faults:
                if item.id == fault_id:
                    faults.remove(item)
                    if not faults:
                        del self._by_point[point]
                    return True
        return False

    def clear(self) -> None:
        for _, timer in self._timed.values():
            timer.cancel()
        self._timed.clear()
        self._by_point.clear()
        self.fired_log.clear()

    def installed(self) -> list[Fault]:
        faults = [f for faults in self._by_point.values() for f in faults]
        faults += [fault for fault, _ in self._timed.values()]
        return sorted(faults, key=lambda f: f.id)

    # -- firing ----------------------------------------------------------------------

    def fire(self, point: str, **context: Any) -> Hit | None:
        """Called at a hook point; returns the event change to make, if any.

        Actions of matching faults run before this returns; the first
        matching event change is handed back to the caller.
        """
        faults = self._by_point.get(point)
        if not faults:
            return None
        hit: Hit | None = None
        for fault in list(faults):
            if not fault.matches(context):
                continue
            fault.seen += 1
            if fault.seen <= fault.after:
                continue
            if hit is not None and fault.do in HOOK_POINTS[point][1]:
                continue  # one change per event; the next fault waits for the next event
            fault.fired += 1
            self._log(fault, point, context)
            if fault.exhausted:
                self.remove(fault)
            if fault.do in HOOK_POINTS[point][1]:
                hit = Hit(fault, fault.do, fault.args)
            elif fault.delay > 0:
                self.clock.call_later(fault.delay, self._run, fault, context)
            else:
                self._pending.append((fault, context))
                if self.soon is not None and not self._settle_scheduled:
                    self._settle_scheduled = True
                    self.soon(self.settle)
        return hit

    def settle(self) -> None:
        """Run the actions triggered by the event just handled.

        Hook sites that can be interrupted mid-way (a batch of deliveries)
        call this right after the event; otherwise it runs on the next
        loop turn.
        """
        self._settle_scheduled = False
        while self._pending:
            fault, context = self._pending.pop(0)
            self._run(fault, context)

    def _due(self, fault: Fault) -> None:
        self._timed.pop(fault.id, None)
        fault.fired += 1
        self._log(fault, "at", {})
        self._run(fault, {})

    def _run(self, fault: Fault, context: dict[str, Any]) -> None:
        if self.run_action is None:
            raise FaultError(f"no controller to run {fault.do!r}")
        try:
            self.run_action(fault.do, fault.args, context)
        except Exception as exc:  # noqa: BLE001 - recorded on the server; the event that fired the fault goes on
            self.fired_log.append({"id": fault.id, "do": fault.do, "error": str(exc)})
            self._failed(f"fault {fault.id} ({fault.do!r})", exc)

    def _failed(self, where: str, exc: Exception) -> None:
        """Record a failed action on the server (raise it when there is nobody to record it)."""
        if self.record_error is None:
            raise exc
        self.record_error(where, exc)

    def _log(self, fault: Fault, point: str, context: dict[str, Any]) -> None:
        shown = {k: v for k, v in context.items() if isinstance(v, (str, int, float, bool))}
        self.fired_log.append(
            {
                "id": fault.id,
                "name": fault.name,
                "do": fault.do,
                "point": point,
                "context": shown,
                "time": self.clock.monotonic(),
            }
        )
        if self.recorder:
            self.recorder.record("fault", fault=fault.id, name=fault.name, point=point, do=fault.do)
            if fault.scenario:
                self.recorder.record(
                    "scenario.step",
                    scenario=fault.scenario,
                    step=fault.step,
                    name=fault.name,
                    do=fault.do,
                    fault=fault.id,
                )
