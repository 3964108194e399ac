"""The control API over NATS (``$FAKEJS.>``) and HTTP (``/fakejs/...``).

Tests written in any language steer a running fakejs with plain requests.
Both transports map onto the same operations, named by the path:

======================  ================================  =====================================
NATS subject            HTTP                              body / effect
======================  ================================  =====================================
``$FAKEJS.STATE``       ``GET /fakejs/state``             streams, consumers, clients, faults
``$FAKEJS.CLOCK``       ``GET /fakejs/clock``             clock kind, now, next deadline
``$FAKEJS.CLOCK.ADVANCE`` ``POST /fakejs/clock/advance``  ``{"seconds": 30}``
``$FAKEJS.FAULTS``      ``GET /fakejs/faults``            installed faults and what fired
``$FAKEJS.FAULTS.ADD``  ``POST /fakejs/faults/add``       a fault: ``{"on": ..., "do": ...}``
``$FAKEJS.FAULTS.REMOVE`` ``POST /fakejs/faults/remove``  ``{"id": 3}``
``$FAKEJS.FAULTS.CLEAR`` ``POST /fakejs/faults/clear``
``$FAKEJS.ACTION.<NAME>`` ``POST /fakejs/action/<name>``  the action's arguments
``$FAKEJS.SCENARIO.START`` ``POST /fakejs/scenario/start`` ``{"name": "pin-timeout"}`` or ``{"toml": "..."}``
``$FAKEJS.RESET``       ``POST /fakejs/reset``            ``{"clients": false}``
``$FAKEJS.CONFORMANCE`` ``GET /fakejs/conformance``       the client conformance report
``$FAKEJS.CONFORMANCE.EXPECT`` ``POST /fakejs/conformance/expect`` ``{"stream": ..., "consumer": ..., "consume": true, "ack_sync": false}``
======================  ================================  =====================================

Replies are JSON: the operation's result, or ``{"error": "..."}`` (HTTP 400;
HTTP 500 when the operation itself failed, which is also recorded on the
server so the test fails).  Every request gets a reply; a malformed one
(not JSON, not an object, wrong types) is a 400 and leaves no trace in the log.

The ``$FAKEJS.>`` subscription is :mod:`fakejs.testkit.control_subjects`.
Who may call it is decided by :mod:`fakejs.testkit.access`.  A scenario is
started by name only (``{"name": ...}``, see
:func:`fakejs.testkit.scenarios.find_named`) or from TOML text: a request
never names a path on the server.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.testkit.control import ControlError, Controller
from fakejs.testkit.faults import Fault, FaultError
from fakejs.testkit.scenarios import ScenarioError

DENIED = "the control API needs credentials: the control token, or the server's user and password or token"
# Operations that only read: the ones HTTP serves to a GET (everything else needs a POST).
READS = frozenset({("state",), ("clock",), ("faults",), ("conformance",)})
# What bad input can raise on its way through an operation: the caller's mistake, a 400.
_BAD_INPUT = (ControlError, FaultError, ScenarioError, ValueError, TypeError, LookupError, OverflowError)


def _reject_constant(name: str) -> Any:
    raise ControlError(f"{name} is not a JSON number")


def parse_body(body: bytes) -> dict[str, Any]:
    """A request body as a JSON object (empty: ``{}``); :class:`ControlError` otherwise."""
    if not body.strip():
        return {}
    try:
        args = json.loads(body, parse_constant=_reject_constant)
    except RecursionError:
        raise ControlError("the request body is nested too deeply") from None
    except ValueError as exc:  # not UTF-8, not JSON
        raise ControlError(f"the request body is not JSON: {exc}") from None
    if not isinstance(args, dict):
        raise ControlError("the request body must be a JSON object")
    return args


def handle(controller: Controller, path: list[str], body: bytes) -> tuple[int, Any]:
    """Run one control operation; ``path`` is lower-case tokens after the prefix."""
    try:
        return 200, _dispatch(controller, path, parse_body(body))
    except _BAD_INPUT as exc:
        return 400, {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - recorded on the server; the caller still gets an answer
        controller.server.broker.record_error(f"control operation {'/'.join(path) or '(none)'}", exc)
        return 500, {"error": f"internal error: {exc!r}"}


def _dispatch(controller: Controller, path: list[str], args: dict[str, Any]) -> Any:
    match path:
        case ["state"]:
            return controller.state()
        case ["clock"]:
            return controller.clock_state()
        case ["clock", "advance"]:
            return controller.advance_clock(float(args.get("seconds", 0)))
        case ["faults"]:
            return {
                "faults": [f.describe() for f in controller.faults.installed()],
                "fired": controller.faults.fired_log,
            }
        case ["faults", "add"]:
            fault = controller.add_fault(**args)
            return fault.describe()
        case ["faults", "remove"]:
            return {"removed": controller.faults.remove(int(args.get("id", 0)))}
        case ["faults", "clear"]:
            return controller.clear_faults()
        case ["action", name]:
            return _result(controller.run(name, args))
        case ["scenario", "start"]:
            if "toml" in args:
                return controller.start_scenario(text=str(args["toml"]))
            # "path" is the old spelling; over the network it is a name like any other.
            return controller.start_named_scenario(args.get("name", args.get("path", "")))
        case ["conformance"]:
            return controller.conformance()
        case ["conformance", "expect"]:
            return controller.expect_conformance(
                str(args["stream"]),
                str(args["consumer"]),
                consume=bool(args.get("consume", False)),
                ack_sync=bool(args.get("ack_sync", False)),
            )
        case ["reset"]:
            return controller.reset(clients=bool(args.get("clients", False)))
    raise ControlError(f"unknown control operation {'/'.join(path) or '(none)'}")


def _result(value: Any) -> Any:
    if isinstance(value, Fault):
        return value.describe()
    return value
