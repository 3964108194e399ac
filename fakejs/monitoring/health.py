"""``/healthz`` and ``$SYS.REQ.SERVER.<id>.HEALTHZ``: nats-server's health check on one server.

Options (query parameters over HTTP, JSON fields of a system request):
the booleans ``js-enabled``, ``js-enabled-only``, ``js-server-only``,
``js-meta-only`` and ``details``, and ``account``, ``stream``,
``consumer`` naming the assets to check.  As nats-server (``healthz``):

* a ``stream`` without an ``account``, or a ``consumer`` without a
  ``stream``, is a bad request (400, ``status`` ``error``);
* ``js-server-only``, a server without JetStream, or ``js-enabled-only``
  (``js-enabled``) answer ``ok`` at once;
* otherwise the named account, stream and consumer must have been
  recovered from the store directory: nats-server scans it, so only
  streams with file storage (and their accounts) are found; a missing one
  is 404, ``status`` ``unavailable``, ``JetStream account "A" not found``
  (``stream "S" not found on account "A"``, ``consumer "C" not found for
  stream "S" on account "A"``).

With ``details`` the errors come as a list of ``{"type", "account",
"stream", "consumer", "error"}`` and ``status`` is ``error``.  Over HTTP the
``status_code`` is the response's status rather than a field.  A server of
a cluster answers ``ok`` past the bad requests (fakejs has no meta layer to
check).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.monitoring.query import BadRequest, Query
from fakejs.protocol.writer import go_quote

if TYPE_CHECKING:
    from fakejs.jetstream import JetStreamWithApi
    from fakejs.monitoring.source import MonitoredServer

BOOLEANS = ("js-enabled", "js-enabled-only", "js-server-only", "js-meta-only", "details")
UNAVAILABLE = "unavailable"


def healthz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    """``/healthz``: 400 with nats-server's text for a bad boolean, else the health status."""
    params = Query(query)
    try:
        options: dict[str, Any] = {name: params.bool(name) for name in BOOLEANS}
    except BadRequest as error:
        return 400, str(error)
    options.update({name: params.text(name) for name in ("account", "stream", "consumer")})
    status = health(server, options)
    return status.pop("status_code"), status


def health(server: MonitoredServer, options: dict[str, Any]) -> dict[str, Any]:
    """nats-server's ``HealthStatus`` for ``options``, with its ``status_code``."""
    details = bool(options.get("details"))
    account, stream, consumer = (str(options.get(name) or "") for name in ("account", "stream", "consumer"))
    if stream and not account:
        return _failed(400, "error", details, "BAD_REQUEST", '"account" must not be empty when checking stream health')
    if consumer and not stream:
        return _failed(400, "error", details, "BAD_REQUEST", '"stream" must not be empty when checking consumer health')
    broker = server.broker
    quick = options.get("js-server-only") or options.get("js-enabled-only") or options.get("js-enabled")
    if quick or not broker.options.jetstream or broker.cluster is not None or not account:
        return {"status": "ok", "status_code": 200}
    return _assets(server, account, stream, consumer, details)


def _assets(server: MonitoredServer, account: str, stream: str, consumer: str, details: bool) -> dict[str, Any]:
    """The named assets, found as nats-server finds them in its store directory (file storage only)."""
    found = _stored(server.account_jetstreams, account)
    if found is None:
        return _failed(
            404, UNAVAILABLE, details, "ACCOUNT", f"JetStream account {go_quote(account)} not found", account
        )
    streams = {name: each for name, each in found.streams.items() if each.config["storage"] == "file"}
    if stream and stream not in streams:
        text = f"JetStream stream {go_quote(stream)} not found on account {go_quote(account)}"
        return _failed(404, UNAVAILABLE, details, "STREAM", text, account, stream)
    if consumer and consumer not in streams[stream].consumers:
        text = f"JetStream consumer {go_quote(consumer)} not found for stream {go_quote(stream)} on account {go_quote(account)}"
        return _failed(404, UNAVAILABLE, details, "CONSUMER", text, account, stream, consumer)
    return {"status": "ok", "status_code": 200}


def _stored(jetstreams: list[JetStreamWithApi], account: str) -> JetStreamWithApi | None:
    """The account's JetStream if it keeps a stream on disk."""
    for js in jetstreams:
        if js.account.name == account and any(s.config["storage"] == "file" for s in js.streams.values()):
            return js
    return None


def _failed(code: int, status: str, details: bool, kind: str, text: str, *names: str) -> dict[str, Any]:
    if not details:
        return {"status": status, "status_code": code, "error": text}
    error: dict[str, Any] = {"type": kind}
    error.update({key: name for key, name in zip(("account", "stream", "consumer"), names, strict=False)})
    error["error"] = text
    return {"status": "error", "status_code": code, "errors": [error]}
