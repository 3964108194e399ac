"""The control API over HTTP (``/fakejs/...`` on the monitoring port).

The operations are :mod:`fakejs.testkit.control_api`'s; this module adds
what HTTP needs so that only the intended callers reach them:

* credentials (:class:`~fakejs.testkit.access.ControlAccess`): a guarded
  server answers ``401`` with ``WWW-Authenticate`` to a request without them;
* reads (``state``, ``clock``, ``faults``, ``timeline``, the page
  ``timeline.html``) by ``GET`` (their filters, if any, as query parameters;
  a page is ``text/html``, its refusals JSON), everything else by
  ``POST`` only, with ``Content-Type: application/json`` (``415`` otherwise).
  A web page can make a browser send a cross-origin ``text/plain`` or form
  POST without asking first; it cannot send ``application/json`` without a
  CORS preflight, which is not honoured (``OPTIONS`` gets ``405``), and no
  reply carries ``Access-Control-Allow-Origin``;
* on a server without credentials, a ``Host`` with a dotted name (not
  ``localhost``, not an IP address) gets ``403``: that is how a page
  reaches a local server through DNS rebinding (see
  :meth:`~fakejs.testkit.access.ControlAccess.host_allowed`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from fakejs.server.http import Reply, Request
from fakejs.testkit import control_api
from fakejs.testkit.access import ControlAccess
from fakejs.testkit.control import Controller
from fakejs.testkit.control_routes import JSON, Route, find_route
from fakejs.testkit.schema import BOOLEAN, INTEGER, Kind

HOST_REFUSED = (
    "the control API of a server without credentials answers requests addressed to localhost, an IP "
    "address or a host name without dots (a web page could reach it through DNS rebinding under any "
    "other name); start the server with --control_token to use it through other names"
)
PREFIX = "/fakejs"


def is_control_path(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def answer(controller: Controller, access: ControlAccess, request: Request, path: str) -> Reply:
    """Check and run one control request; ``path`` is the target without its query."""
    tokens = [t.lower() for t in path.split("/")[2:] if t]
    route = find_route(tokens)
    if not access.allows_http(request.header("authorization")):
        return _json(401, {"error": control_api.DENIED}, *access.challenges())
    if not access.host_allowed(request.header("host")):
        return _json(403, {"error": HOST_REFUSED})
    read = tuple(tokens) in control_api.READS
    allowed = "GET, HEAD, POST" if read else "POST"
    if request.method not in allowed.split(", "):
        return _json(
            405, {"error": f"use {allowed.replace(', ', ' or ')} for /fakejs/{'/'.join(tokens)}"}, ("Allow", allowed)
        )
    if request.method == "POST" and not _is_json(request.header("content-type")):
        return _json(415, {"error": "control requests must be sent with Content-Type: application/json"})
    body = request.body if request.method == "POST" else _query_body(route, request.target)
    if body is None:
        return _json(400, {"error": "a query parameter is given twice"})
    status, doc = control_api.handle(controller, tokens, body)
    if status == 200 and route is not None and route.content_type != JSON:
        return Reply(status, doc.encode(), [("Cache-Control", "no-store"), ("Content-Type", route.content_type)])
    return _json(status, doc)


def _query_body(route: Route | None, target: str) -> bytes | None:
    """A read's query parameters as the JSON body its declaration checks; None: a name given twice.

    A value of a field declared an integer is read as one when it is digits, of a boolean when it is ``true``
    or ``false`` (else the check refuses it).
    """
    kinds = {field.name: field.kind for field in route.request.fields} if route else {}
    pairs = parse_qsl(target.partition("?")[2], keep_blank_values=True)
    args = {name: _query_value(kinds.get(name), value) for name, value in pairs}
    if len(args) != len(pairs):
        return None
    return json.dumps(args).encode() if args else b""


def _query_value(kind: Kind | None, value: str) -> Any:
    if kind is INTEGER and value.removeprefix("-").isdigit():
        return int(value)
    if kind is BOOLEAN and value in ("true", "false"):
        return value == "true"
    return value


def _is_json(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == JSON


def _json(status: int, doc: Any, *headers: tuple[str, str]) -> Reply:
    body = (json.dumps(doc, indent=2) + "\n").encode()
    # Replies hold server state and secrets' effects: no cache keeps a copy.
    return Reply(status, body, [("Cache-Control", "no-store"), ("Content-Type", JSON), *headers])
