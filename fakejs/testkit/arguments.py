"""What each action, each event change and each match key takes: one declaration apiece.

A fault (``faults/add``, a scenario step) names in ``do`` an event change
its hook point allows or an action of the controller, with ``args``; it
matches events on ``match`` keys.  These tables declare them, as
:class:`~fakejs.testkit.schema.Request` and
:class:`~fakejs.testkit.schema.Field` values, and the control API reads
requests against them: ``action/<name>`` and ``$FAKEJS.ACTION.<NAME>``
against :data:`ACTION_ARGUMENTS`, a fault's ``args`` against
:func:`fault_arguments`, its ``match`` against :func:`match_keys`.  The
controller (:data:`fakejs.testkit.control.ACTIONS`) implements exactly the
actions declared here, with these names and defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fakejs.core.hooks import HOOK_POINTS, MATCH_KEYS
from fakejs.testkit.schema import BOOLEAN, INTEGER, NUMBER, OBJECT, STRING, STRING_OR_INTEGER, Field, Request

__all__ = [
    "ACTION_ARGUMENTS",
    "ACTION_NAMES",
    "CHANGE_ARGUMENTS",
    "MATCH_FIELDS",
    "fault_arguments",
    "fault_match",
    "match_keys",
]

# -- fields several actions share ----------------------------------------------------------------

STREAM = Field("stream", STRING, "The stream's name", required=True)
CONSUMER = Field("consumer", STRING, "The consumer's name", required=True)
ANY_STREAM = Field("stream", STRING, "The stream's name, or a shell-style pattern", default="*")
ANY_CONSUMER = Field("consumer", STRING, "The consumer's name, or a shell-style pattern", default="*")
GROUP = Field("group", STRING, 'The priority group ("": the consumer\'s first)', default="")
CLIENTS = Field("client", STRING_OR_INTEGER, '"all", a client\'s name or a client id', default="all")
UNTIL_REMOVED = Field("count", INTEGER, "How many times (null: until the fault is removed)", nullable=True, minimum=1)
# The names of ``fakejs.jetstream.errors.API_FAILURES`` (not imported: a plain start loads no JetStream).
API_ERROR = Field(
    "error",
    STRING,
    "The JetStream API error to answer with",
    default="unavailable",
    choices=("unavailable", "insufficient_resources"),
)


def _action(name: str, description: str, *fields: Field) -> Request:
    return Request(f"action/{name}", description, fields)


# The actions a fault, a scenario step or a control request may run (``$FAKEJS.ACTION.<NAME>``).
ACTION_ARGUMENTS: dict[str, Request] = {
    "disconnect": _action(
        "disconnect",
        "Close clients' connections",
        CLIENTS,
        Field("abrupt", BOOLEAN, "Reset the socket instead of closing it cleanly", default=False),
    ),
    "restart": _action(
        "restart",
        "Stop, then start again on the same ports, keeping file-backed streams",
        Field("down_for", NUMBER, "Seconds of server time to stay down", default=0.0, minimum=0),
    ),
    "lame_duck": _action(
        "lame_duck",
        "Lame duck mode: INFO with ldm, stop accepting, close the clients over the duration, shut down",
        Field("duration", NUMBER, "Seconds it lasts (null: the server's lame_duck_duration)", nullable=True, minimum=0),
        Field(
            "grace",
            NUMBER,
            "Seconds before clients are closed (null: lame_duck_grace_period)",
            nullable=True,
            minimum=0,
        ),
    ),
    "delete_consumer": _action(
        "delete_consumer", "Delete a consumer (its waiting pulls get 409 Consumer Deleted)", STREAM, CONSUMER
    ),
    "delete_stream": _action("delete_stream", "Delete a stream and its consumers", STREAM),
    "unpin": _action("unpin", "Drop a priority group's pin (the admin unpinned advisory)", STREAM, CONSUMER, GROUP),
    "expire_pin": _action(
        "expire_pin", "Drop a priority group's pin as if it timed out (the timeout advisory)", STREAM, CONSUMER, GROUP
    ),
    "answer_pulls": _action(
        "answer_pulls",
        "Answer a consumer's next pull requests with a status",
        STREAM,
        CONSUMER,
        Field("code", INTEGER, "The status code (409, 503...)", required=True),
        Field("text", STRING, "The status description", default=""),
        Field("count", INTEGER, "How many pull requests", default=1, minimum=1),
    ),
    "fail_api": _action(
        "fail_api",
        "Fail JetStream API requests",
        API_ERROR,
        Field("subject", STRING, "The API subjects to fail (a pattern)", default="$JS.API.>"),
        UNTIL_REMOVED,
    ),
    "stop_heartbeats": _action("stop_heartbeats", "Stop idle heartbeats", ANY_STREAM, ANY_CONSUMER),
    "drop_deliveries": _action(
        "drop_deliveries", "Drop deliveries (counted as sent, never sent)", ANY_STREAM, ANY_CONSUMER, UNTIL_REMOVED
    ),
    "delay_deliveries": _action(
        "delay_deliveries",
        "Hold deliveries back",
        Field("seconds", NUMBER, "Seconds of server time each delivery waits", required=True, minimum=0),
        ANY_STREAM,
        ANY_CONSUMER,
        UNTIL_REMOVED,
    ),
    "stall": _action("stall", "Stop answering clients' PINGs", CLIENTS),
    "drop_leafs": _action(
        "drop_leafs",
        "Close leaf connections (a leaf dials its hub again after its reconnect delay)",
        Field("remote", STRING, "The remote server's name, or a shell-style pattern", default="*"),
        Field("until_restored", BOOLEAN, "Drop them again as they come up, until restore_leafs", default=False),
    ),
    "restore_leafs": _action("restore_leafs", "Let the leaf connections drop_leafs keeps down come up again"),
    "advance_clock": _action(
        "advance_clock",
        "Move a manual clock forward",
        Field("seconds", NUMBER, "Seconds to move", required=True, minimum=0),
    ),
    "clear_faults": _action("clear_faults", "Remove every installed fault"),
}

# The actions a fault (or a scenario step, or a control request) may run; the controller
# (fakejs.testkit.control.ACTIONS) implements them.
ACTION_NAMES = frozenset(ACTION_ARGUMENTS)

# The event changes a fault may make where its hook point allows them (``core.hooks.HOOK_POINTS``).
CHANGE_ARGUMENTS: dict[str, Request] = {
    "disconnect": Request("disconnect", "Close the new client's connection cleanly"),
    "drop": Request("drop", "Drop the event: close the new client abruptly, skip the delivery or the heartbeat"),
    "ignore": Request("ignore", "Act as if the PING, the pull request or the API request never arrived"),
    "reply_status": Request(
        "reply_status",
        "Answer the pull request with a status",
        (
            Field("code", INTEGER, "The status code", default=503),
            Field("text", STRING, "The status description", default=""),
        ),
    ),
    "delay": Request(
        "delay", "Hold the delivery back", (Field("seconds", NUMBER, "Seconds of server time", default=1.0, minimum=0),)
    ),
    "fail_api": Request("fail_api", "Answer the API request with an error", (API_ERROR,)),
    "rewrite": Request(
        "rewrite",
        "Change the API reply",
        (Field("set", OBJECT, "Top-level fields to set in the reply", default={}),),
    ),
}

# The keys a fault may match events on; which a hook point offers is ``core.hooks.MATCH_KEYS``.
MATCH_FIELDS: dict[str, Field] = {
    "cid": Field("cid", STRING_OR_INTEGER, "The client's id"),
    "name": Field("name", STRING, "The client's name (a shell-style pattern)"),
    "stream": Field("stream", STRING, "The stream's name (a shell-style pattern)"),
    "consumer": Field("consumer", STRING, "The consumer's name (a shell-style pattern)"),
    "subject": Field("subject", STRING, "The message's or the API request's subject (a shell-style pattern)"),
    "remote": Field("remote", STRING, "The leaf connection's remote server name (a shell-style pattern)"),
    "side": Field("side", STRING, '"hub" (this server accepted the leaf connection) or "leaf" (it dialled)'),
}


def match_keys(point: str) -> Request | None:
    """The ``match`` a fault at ``point`` takes (None for a point that is not one)."""
    if point not in HOOK_POINTS:
        return None
    keys = tuple(MATCH_FIELDS[key] for key in sorted(MATCH_KEYS[point]))
    return Request(point, HOOK_POINTS[point][0], keys)


def fault_arguments(fault: Mapping[str, Any]) -> Request | None:
    """The ``args`` a fault takes: its event change's where its point allows ``do`` as one, else its action's."""
    point, do = fault.get("on"), fault.get("do")
    if point in HOOK_POINTS and do in HOOK_POINTS[point][1]:
        return CHANGE_ARGUMENTS[do]
    return ACTION_ARGUMENTS.get(str(do))


def fault_match(fault: Mapping[str, Any]) -> Request | None:
    """The ``match`` a fault takes (None without a hook point: nothing to match)."""
    point = fault.get("on")
    return match_keys(point) if isinstance(point, str) else None
