"""Making events comparable: JetStream advisories and message trace events.

Beyond what :func:`~fakejs.parity.normalize.normalize` replaces (timestamps,
server names), an event carries values each server makes up:

* an advisory's ``id`` (a unique token per event) and ``timestamp``;
* the client a request came from (the API audit's ``client``, a trace
  event's ingress and egress): its connection id (``id``/``cid``), its
  ``start``, ``rtt``, ``port`` and ``host``, and the ``server`` it is on;
* the API audit's ``request`` and ``response``, JSON inside a string: they
  are decoded and normalised like any reply;
* a trace event's ``server`` block (name, id, host, version, its own clock
  ``time`` and counters): replaced whole, and the ``ts`` of every step;
  ``Nats-Trace-Hop`` headers are dropped (a single server sends none).

Advisories are compared subject by subject, each subject's events sorted:
nats-server publishes the events of different subjects from different
places (the API audit after the reply, a stream's created advisory from
the meta layer), and even one subject's events interleave at their own pace
(a sourcing stream's consumer requests, made by the server itself, come
between the client's).  The API audits of the campaign's own polling
clients (named ``parity-poll``) are left out: what those polls saw depends
on when they looked.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.parity.normalize import normalize

POLLER = "parity-poll"  # the name of the clients that poll both servers in lockstep
CLIENT_VALUES = frozenset({"id", "cid", "start", "rtt", "port", "host", "server", "server_id", "nonce"})


def _decoded(value: Any) -> Any:
    """A JSON string decoded and normalised; anything else as it is."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return event(json.loads(value))
        except ValueError:
            return value
    return value


def _client(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {key: (f"<{key}>" if key in CLIENT_VALUES else item) for key, item in value.items()}


def event(value: Any) -> Any:
    """An advisory or trace event with what each server makes up replaced (see the module)."""
    if isinstance(value, list):
        return [event(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in ("id", "timestamp", "ts", "cid") and isinstance(item, (str, int)):
            out[key] = f"<{key}>"
        elif key == "client":
            out[key] = _client(item)
        elif key in ("request", "response"):
            out[key] = _decoded(item) if isinstance(item, str) else event(item)
        elif key == "server" and isinstance(item, dict):
            out[key] = "<server>"
        else:
            out[key] = event(item)
    return normalize(out)


def advisories_by_subject(events: list[tuple[str, bytes]]) -> dict[str, list[Any]]:
    """Advisories as ``{subject: [event, ...]}``, each subject's sorted; the pollers' API audits left out."""
    grouped: dict[str, list[Any]] = {}
    for subject, data in events:
        try:
            decoded: Any = json.loads(data)
        except ValueError:
            decoded = data.decode("utf-8", "backslashreplace")
        if isinstance(decoded, dict) and (decoded.get("client") or {}).get("name") == POLLER:
            continue
        grouped.setdefault(subject, []).append(event(decoded))
    return {subject: sorted(found, key=_canonical) for subject, found in sorted(grouped.items())}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def trace_event(data: bytes, headers: dict[str, str] | None) -> Any:
    """A trace event's JSON, normalised, with the headers it came with (``Nats-Trace-Hop`` left out)."""
    try:
        decoded: Any = event(json.loads(data))
    except ValueError:
        decoded = data.decode("utf-8", "backslashreplace")
    kept = {k: v for k, v in (headers or {}).items() if k != "Nats-Trace-Hop"}
    return {"headers": kept or None, "event": decoded}
