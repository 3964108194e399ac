"""The control API's requests: one route each, with the declaration of its body and what it runs.

A route's request is named by its path (``clock/advance``): the HTTP path
after ``/fakejs/``, and, upper-cased with dots, the subject after
``$FAKEJS.`` (``$FAKEJS.CLOCK.ADVANCE``).  Its body is read against its
:class:`~fakejs.testkit.schema.Request` before anything runs, so a field
the declaration does not list, a missing required field or a value of the
wrong type is refused naming the field.  ``action/<name>`` has one route
per action, its body declared in :data:`fakejs.testkit.arguments.ACTION_ARGUMENTS`.
Reads (``read=True``) are served to an HTTP ``GET``; everything else needs a
``POST``.  A route whose reply is not JSON (``content_type``: the timeline's
page, ``timeline.html``) is served over HTTP only: the wire carries JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fakejs.testkit.arguments import ACTION_ARGUMENTS, fault_arguments, fault_match
from fakejs.testkit.control import ControlError, Controller
from fakejs.testkit.faults import Fault
from fakejs.testkit.schema import BOOLEAN, INTEGER, NUMBER, OBJECT, STRING, Field, Request
from fakejs.testkit.timeline import TimelineFilter
from fakejs.testkit.timeline_page import render

__all__ = ["FAULT", "HTML", "JSON", "ROUTES", "Route", "find_route"]

JSON = "application/json"
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, eq=False)
class Route:
    """One control request: the declaration of its body, what it runs, whether it only reads, what it answers.

    ``run`` returns a JSON-able reply, or the text of a reply of another
    ``content_type`` (served over HTTP only).
    """

    request: Request
    run: Callable[[Controller, dict[str, Any]], Any]
    read: bool = False
    content_type: str = JSON

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.request.name.split("/"))

    @property
    def subject(self) -> str | None:
        """Its ``$FAKEJS.`` subject; None for a reply that is not JSON (HTTP only)."""
        return "$FAKEJS." + ".".join(self.path).upper() if self.content_type == JSON else None

    @property
    def http(self) -> str:
        return ("GET" if self.read else "POST") + " /fakejs/" + self.request.name


# The body of ``faults/add``: a :class:`~fakejs.testkit.faults.Fault`'s settings.
FAULT = Request(
    "faults/add",
    "Install a fault; the reply describes it, with its id",
    (
        Field("do", STRING, "An event change the hook point allows, or an action", required=True),
        Field("on", STRING, "The hook point it waits at (give on or at)", nullable=True),
        Field("at", NUMBER, "Or: seconds of server time from now until it runs its action", nullable=True, minimum=0),
        Field("match", OBJECT, "Keys the events must match (the hook point's, below)", default={}, inner=fault_match),
        Field(
            "args", OBJECT, "The event change's or the action's arguments (below)", default={}, inner=fault_arguments
        ),
        Field("after", INTEGER, "Matching events to let pass first", default=0, minimum=0),
        Field("times", INTEGER, "How many times it fires (null: until removed)", default=1, nullable=True, minimum=1),
        Field("delay", NUMBER, "Seconds of server time between the event and the action", default=0.0, minimum=0),
        Field("name", STRING, "A name to recognise it by in faults and logs", default=""),
    ),
)

SCENARIO_START = Request(
    "scenario/start",
    "Start a scenario: its setup streams and consumers, then its steps as faults",
    (
        Field("name", STRING, "A shipped scenario, or a .toml file in a --scenario_dir, by file name"),
        Field("toml", STRING, "Or: the scenario itself, as TOML text"),
        Field("path", STRING, "The old spelling of name (a name too: never a path)"),
    ),
    one_of=("name", "toml", "path"),
)


def _start_scenario(controller: Controller, args: dict[str, Any]) -> Any:
    if args["toml"] is not None:
        return controller.start_scenario(text=args["toml"])
    return controller.start_named_scenario(args["name"] if args["name"] is not None else args["path"])


def _faults(controller: Controller, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "faults": [fault.describe() for fault in controller.faults.installed()],
        "fired": controller.faults.fired_log,
    }


TIMELINE = Request(
    "timeline",
    "What the server did, oldest first: the kept events (each with its index, kind, server time in ns and fields),"
    " the ring's size and how many events it let go; over HTTP the filters are query parameters",
    (
        Field("stream", STRING, "Only events of this stream", nullable=True),
        Field("consumer", STRING, "Only events of this consumer", nullable=True),
        Field("client", INTEGER, "Only events of this client id", nullable=True),
        Field("kind", STRING, "Only this kind of event, or family (pull: every pull.* kind)", nullable=True),
        Field("since", INTEGER, "Only events at or after this server time (ns)", nullable=True),
        Field(
            "cluster",
            BOOLEAN,
            "Every node's events, merged (a node of an in-process cluster), each with its node",
            default=False,
        ),
    ),
)


TIMELINE_PAGE = Request(
    "timeline.html",
    "The timeline as one self-contained HTML page (lanes per client, stream and consumer, on the server clock);"
    " HTTP only, the filters as query parameters",
    TIMELINE.fields,
)


def _timeline(controller: Controller, args: dict[str, Any]) -> dict[str, Any]:
    where = TimelineFilter(**{name: value for name, value in args.items() if name != "cluster"})
    if not args["cluster"]:
        return controller.server.recorded.document(where)
    merged = controller.server.cluster_timeline
    if merged is None:
        raise ControlError("cluster: this server is not a node of an in-process cluster")
    return merged(where)


def _timeline_page(controller: Controller, args: dict[str, Any]) -> str:
    return render(_timeline(controller, args), "fakejs timeline")


def _action_route(name: str) -> Route:
    def run(controller: Controller, args: dict[str, Any]) -> Any:
        result = controller.run(name, args)
        return result.describe() if isinstance(result, Fault) else result  # the actions that install a fault

    return Route(ACTION_ARGUMENTS[name], run)


ROUTES: tuple[Route, ...] = (
    Route(
        Request("state", "Clients, streams with their last messages, consumers, faults"),
        lambda controller, args: controller.state(),
        read=True,
    ),
    Route(
        Request("clock", "The clock: manual or real, the time, the next deadline"),
        lambda controller, args: controller.clock_state(),
        read=True,
    ),
    Route(
        Request(
            "clock/advance",
            "Move a manual clock forward, firing the timers that fall due; the reply has the time and how many fired",
            (Field("seconds", NUMBER, "Seconds to move forward", required=True, minimum=0),),
        ),
        lambda controller, args: controller.advance_clock(**args),
    ),
    Route(
        Request(
            "clock/advance_to_next",
            "Move a manual clock to its next timer that does work (a redelivery, a pull's expiry, a message's max age),"
            " firing everything due by then; the reply has the time and the seconds moved (null: nothing pending)",
        ),
        lambda controller, args: controller.advance_clock_to_next(),
    ),
    Route(Request("faults", "The installed faults and what fired"), _faults, read=True),
    Route(TIMELINE, _timeline, read=True),
    Route(TIMELINE_PAGE, _timeline_page, read=True, content_type=HTML),
    Route(FAULT, lambda controller, args: controller.add_fault(**args).describe()),
    Route(
        Request(
            "faults/remove",
            "Remove one fault; the reply says whether it was installed",
            (Field("id", INTEGER, "The fault's id (in faults/add's reply)", required=True),),
        ),
        lambda controller, args: {"removed": controller.faults.remove(args["id"])},
    ),
    Route(Request("faults/clear", "Remove every fault"), lambda controller, args: controller.clear_faults()),
    *(_action_route(name) for name in ACTION_ARGUMENTS),
    Route(SCENARIO_START, _start_scenario),
    Route(
        Request(
            "reset",
            "Back to an empty server: no streams, no faults, no scenario, no transcripts, an empty timeline",
            (Field("clients", BOOLEAN, "Disconnect every client too", default=False),),
        ),
        lambda controller, args: controller.reset(**args),
    ),
    Route(
        Request("conformance", "The client conformance report"),
        lambda controller, args: controller.conformance(),
        read=True,
    ),
    Route(
        Request(
            "conformance/expect",
            "Tell the conformance watch how a consumer is used",
            (
                Field("stream", STRING, "The stream's name", required=True),
                Field("consumer", STRING, "The consumer's name", required=True),
                Field("consume", BOOLEAN, "Read by a Consume() loop", default=False),
                Field("ack_sync", BOOLEAN, "Acknowledged with AckSync", default=False),
            ),
        ),
        lambda controller, args: controller.expect_conformance(**args),
    ),
)

_BY_PATH = {route.path: route for route in ROUTES}


def find_route(path: list[str]) -> Route | None:
    """The route of a request's path (lower-case tokens), if there is one."""
    return _BY_PATH.get(tuple(path))
