"""The control API over NATS (``$FAKEJS.>``) and HTTP (``/fakejs/...``).

Tests written in any language steer a running fakejs with plain requests.
Both transports map onto the same operations, named by the path: the
routes of :mod:`fakejs.testkit.control_routes`, one per request, each with
the declaration of its body (``$FAKEJS.CLOCK.ADVANCE`` and ``POST
/fakejs/clock/advance`` take ``{"seconds": 30}``).

Replies are JSON: the operation's result, or ``{"error": "..."}`` (HTTP 400;
HTTP 500 when the operation itself failed, which is also recorded on the
server so the test fails).  Every request gets a reply.  A malformed one
(not JSON, not an object, a field its declaration does not list, a missing
required field, a value of the wrong type) is a 400 naming what is wrong,
and leaves no trace in the log.

The ``$FAKEJS.>`` subscription is :mod:`fakejs.testkit.control_subjects`.
Who may call it is decided by :mod:`fakejs.testkit.access`.  A scenario is
started by name only (``{"name": ...}``, see
:func:`fakejs.testkit.scenarios.find_named`) or from TOML text: a request
never names a path on the server.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.testkit.control import ACTIONS, ControlError, Controller
from fakejs.testkit.control_routes import ROUTES, Route, find_route
from fakejs.testkit.faults import FaultError
from fakejs.testkit.scenarios import ScenarioError
from fakejs.testkit.schema import SchemaError, check

DENIED = "the control API needs credentials: the control token, or the server's user and password or token"
# Operations that only read: the ones HTTP serves to a GET (everything else needs a POST).
READS = frozenset(route.path for route in ROUTES if route.read)
# What bad input raises on its way through an operation: the caller's mistake, a 400.
_BAD_INPUT = (ControlError, FaultError, ScenarioError, SchemaError, ValueError)


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
        raise ControlError(f"the request body must be a JSON object, not {_json_type(args)}")
    return args


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return "a number"


def handle(controller: Controller, path: list[str], body: bytes) -> tuple[int, Any]:
    """Run one control operation; ``path`` is lower-case tokens after the prefix."""
    try:
        route = _route(path)
        return 200, route.run(controller, check(route.request, parse_body(body)))
    except _BAD_INPUT as exc:
        return 400, {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 - recorded on the server; the caller still gets an answer
        controller.server.broker.record_error(f"control operation {'/'.join(path) or '(none)'}", exc)
        return 500, {"error": f"internal error: {exc!r}"}


def _route(path: list[str]) -> Route:
    route = find_route(path)
    if route is not None:
        return route
    if len(path) == 2 and path[0] == "action":
        raise ControlError(f"unknown action {path[1]!r} (known: {', '.join(sorted(ACTIONS))})")
    raise ControlError(f"unknown control operation {'/'.join(path) or '(none)'}")
