"""A scenario's ``[conformance]`` table: how a client under test consumes, and what it is judged on.

``fakejs conformance run`` starts a client program per scenario; the table
says what that client is told to do (through its environment: the mode,
acknowledgements, priority group, buffer, expiry, heartbeat and duration),
which messages the runner publishes while it runs, which rules the
scenario gives something to judge, and what the watch is told about the
consumer (consumed by a loop, acked with AckSync)::

    [conformance]
    mode = "consume"            # or "ordered" (an ordered consumer on the stream)
    ack = "ack"                 # "sync", "term", or "none" (ordered)
    group = ""                  # a priority group to pull in
    max_messages = 10
    expires_ms = 2000
    heartbeat_ms = 500
    duration_ms = 3000
    messages = 20
    publish = "spread"          # or "upfront": all before the client starts
    rules = ["pull-limits", "pull-expires"]
    consume = true              # declared to the watch (default: mode is "consume")
    ack_sync = false            # declared to the watch (default: ack is "sync")

Every key is optional; an unknown key or a value of the wrong kind is
refused with a :class:`ConformanceTableError` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fakejs.testkit.conformance import RULES

MODES = ("consume", "ordered")
ACKS = ("ack", "sync", "term", "none")
PUBLISH = ("upfront", "spread")


class ConformanceTableError(ValueError):
    """A ``[conformance]`` table that cannot be run (the message names the key)."""


@dataclass
class ConformancePlan:
    """What the runner tells the client and the watch, and publishes, for one scenario."""

    mode: str = "consume"
    ack: str = "ack"
    group: str = ""
    max_messages: int = 10
    expires_ms: int = 2000
    heartbeat_ms: int = 500
    duration_ms: int = 3000
    messages: int = 0
    publish: str = "upfront"
    subject: str = ""
    rules: list[str] = field(default_factory=list)
    consume: bool = True
    ack_sync: bool = False


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _one_of(choices: tuple[str, ...]) -> Callable[[Any], bool]:
    return lambda value: value in choices


def _rules(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(rule, str) for rule in value)


# Each key: whether a value is acceptable, and how an error says what it must be.
_KEYS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "mode": (_one_of(MODES), " or ".join(f'"{m}"' for m in MODES)),
    "ack": (_one_of(ACKS), ", ".join(f'"{a}"' for a in ACKS)),
    "group": (lambda v: isinstance(v, str), "a priority group's name (or empty)"),
    "max_messages": (_positive, "a number of messages > 0"),
    "expires_ms": (_positive, "milliseconds > 0"),
    "heartbeat_ms": (_positive, "milliseconds > 0"),
    "duration_ms": (_positive, "milliseconds > 0"),
    "messages": (_count, "a number of messages >= 0"),
    "publish": (_one_of(PUBLISH), " or ".join(f'"{p}"' for p in PUBLISH)),
    "subject": (lambda v: isinstance(v, str) and bool(v), "a subject to publish to"),
    "rules": (_rules, "a list of rule ids"),
    "consume": (lambda v: isinstance(v, bool), "true or false"),
    "ack_sync": (lambda v: isinstance(v, bool), "true or false"),
}
KEYS = frozenset(_KEYS)


def conformance_plan(table: object) -> ConformancePlan:
    """The checked plan of a ``[conformance]`` table."""
    if not isinstance(table, dict):
        raise ConformanceTableError("'conformance' must be a table")
    for key, value in table.items():
        if key not in _KEYS:
            raise ConformanceTableError(f"unknown conformance key {key!r} (allowed: {', '.join(sorted(KEYS))})")
        accepts, wanted = _KEYS[key]
        if not accepts(value):
            raise ConformanceTableError(f"conformance {key!r} must be {wanted}, not {value!r}")
    unknown = [rule for rule in table.get("rules", []) if rule not in RULES]
    if unknown:
        raise ConformanceTableError(
            f"conformance 'rules': unknown rule {unknown[0]!r} (rules: {', '.join(sorted(RULES))})"
        )
    mode = table.get("mode", "consume")
    ack = table.get("ack", "none" if mode == "ordered" else "ack")
    plan = ConformancePlan(**{**table, "mode": mode, "ack": ack})
    plan.consume = bool(table.get("consume", mode == "consume"))
    plan.ack_sync = bool(table.get("ack_sync", ack == "sync"))
    if mode == "ordered" and ack != "none":
        raise ConformanceTableError(f"conformance 'ack' must be \"none\" for an ordered consumer, not {ack!r}")
    return plan


def default_subject(streams: list[dict[str, Any]]) -> str:
    """A subject of the first setup stream (wildcards filled in) for a plan that names none."""
    subjects = streams[0].get("subjects", []) if streams else []
    if not subjects:
        return streams[0].get("name", "") if streams else ""
    tokens = str(subjects[0]).split(".")
    return ".".join("conformance" if token in ("*", ">") else token for token in tokens)
