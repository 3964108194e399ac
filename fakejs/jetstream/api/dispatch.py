"""``$JS.API`` dispatch: subject patterns to handlers, and the preamble written once.

Handlers are registered with :func:`handler` under a subject pattern and a
response type.  The dispatcher finds the handler, checks
``Nats-Required-Api-Level``, runs it, and writes the reply: ``type`` first,
then either the handler's fields or ``error`` plus the fields that
nats-server always includes for that response type.  It also counts API
calls and errors for ``$JS.API.INFO`` and emits the audit advisory.

nats-server imports every ``$JS.API.>`` request into its system account,
where an unknown subject is dropped without a reply -- except
``DIRECT.GET`` and ``CONSUMER.MSG.NEXT``, which only the stream or consumer
itself answers, so a missing one yields "no responders".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import SubscriptionIndex
from fakejs.gocompat.gojson import GoJSONError, Struct, decode_request, dumps
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.errors import API_FAILURES, ApiError, api_error

if TYPE_CHECKING:
    from fakejs.jetstream.service import JetStream

PREFIX = "$JS.API."
RESPONSE_TYPE_PREFIX = "io.nats.jetstream.api.v1."
# Served by per-asset subscriptions, never by the API dispatcher.
ASSET_SERVED = ("$JS.API.DIRECT.GET", "$JS.API.CONSUMER.MSG.NEXT.")

# Fields nats-server marshals alongside "error" for each response type
# (the non-pointer, non-omitempty fields of the response struct).
ERROR_EXTRAS: dict[str, dict[str, Any]] = {
    "stream_info_response": {"total": 0, "offset": 0, "limit": 0},
    "stream_names_response": {"total": 0, "offset": 0, "limit": 0, "streams": None},
    "stream_list_response": {"total": 0, "offset": 0, "limit": 0, "streams": []},
    "stream_purge_response": {"purged": 0},
    "consumer_names_response": {"total": 0, "offset": 0, "limit": 0, "consumers": []},
    "consumer_list_response": {"total": 0, "offset": 0, "limit": 0, "consumers": []},
    "consumer_pause_response": {"paused": False, "pause_until": "0001-01-01T00:00:00Z"},
}


@dataclass
class Request:
    subject: str
    reply: str
    hdr: bytes | None
    payload: bytes
    reply_headers: bytes | None = None  # set by a handler that answers with headers

    @property
    def tokens(self) -> list[str]:
        return self.subject.split(".")

    def token(self, index: int) -> str:
        return self.tokens[index]

    def is_json_object_or_array(self) -> bool:
        body = self.payload.lstrip(b" \t\r\n")
        return body[:1] in (b"{", b"[")

    def decode(self, schema: Struct) -> dict[str, Any]:
        """Decode the body as nats-server does, or raise the 10025 error."""
        try:
            return decode_request(schema, self.payload)
        except GoJSONError as exc:
            raise api_error("JSInvalidJSONErr", err=str(exc)) from None

    def check_level(self) -> None:
        if required_level(self.hdr):
            raise api_error("JSRequiredApiLevelErr")

    def decode_if_json(self, schema: Struct) -> dict[str, Any]:
        """Bodies that are not a JSON object or array are ignored (``isJSONObjectOrArray``)."""
        return self.decode(schema) if self.is_json_object_or_array() else {}


Handler = Callable[["JetStream", Request], "dict[str, Any] | None"]


@dataclass(eq=False)
class Route:
    pattern: str
    response_type: str
    handler: Handler
    level_first: bool = True  # check Nats-Required-Api-Level before the handler runs
    queue = ""  # routes live in a subscription index, which reads these two

    @property
    def subject(self) -> str:
        return self.pattern


class ApiTable:
    """Subject patterns to handlers (a subscription index over routes)."""

    def __init__(self) -> None:
        self._index = SubscriptionIndex()
        self._routes: list[Route] = []

    def add(self, pattern: str, response_type: str, handler: Handler, level_first: bool = True) -> None:
        route = Route(pattern, response_type, handler, level_first)
        self._index.insert(route)
        self._routes.append(route)

    def find(self, subject: str) -> Route | None:
        result = self._index.match(subject)
        return result.psubs[0] if len(result.psubs) == 1 else None


TABLE = ApiTable()


def handler(pattern: str, response_type: str, level_first: bool = True) -> Callable[[Handler], Handler]:
    """Register an API handler for ``pattern`` answering with ``response_type``.

    ``level_first=False`` leaves the ``Nats-Required-Api-Level`` check to the
    handler (consumer creation decodes its body first, as nats-server does).
    """

    def register(func: Handler) -> Handler:
        TABLE.add(pattern, response_type, func, level_first)
        return func

    return register


def dispatch(js: JetStream, subject: str, reply: str, hdr: bytes | None, payload: bytes) -> bool:
    """Entry point for every ``$JS.API.>`` message; False means "not mine"."""
    if subject.startswith(ASSET_SERVED):
        return False
    route = TABLE.find(subject)
    if route is None:
        return True  # swallowed, like the system account's import does
    request = Request(subject, reply, hdr, payload)
    response_type = RESPONSE_TYPE_PREFIX + route.response_type
    faults = js.broker.faults
    try:
        if faults:
            hit = faults.fire("api.request", subject=subject)
            if hit is not None:
                if hit.change == "ignore":
                    return True
                raise api_error(API_FAILURES[hit.args.get("error", "unavailable")])
        if route.level_first:
            request.check_level()
        body = route.handler(js, request)
    except ApiError as error:
        doc = {"type": response_type, "error": error.to_dict()}
        doc.update(ERROR_EXTRAS.get(route.response_type, {}))
        _reply(js, request, doc, error=True)
        return True
    if body is None:
        return True  # the handler answered itself (or stays silent)
    doc = {"type": response_type}
    doc.update(body)
    _reply(js, request, doc, error=False)
    return True


def _reply(js: JetStream, request: Request, doc: dict[str, Any], error: bool) -> None:
    faults = js.broker.faults
    if faults:
        hit = faults.fire("api.reply", subject=request.subject)
        if hit is not None:  # "rewrite": set top-level fields of the reply
            doc = {**doc, **hit.args.get("set", {})}
    js.api_reply(request, doc, error)


def encode(doc: dict[str, Any]) -> bytes:
    return dumps(doc).encode()


def audit_advisory(js: JetStream, request: Request, response: bytes, now: str, event_id: str) -> bytes:
    """``io.nats.jetstream.advisory.v1.api_audit`` for one API call."""
    doc = {
        "type": "io.nats.jetstream.advisory.v1.api_audit",
        "id": event_id,
        "timestamp": now,
        "server": js.server_name,
        "client": {"acc": "$G", "server": js.server_name},
        "subject": request.subject,
        "request": request.payload.decode("utf-8", "replace"),
        "response": response.decode("utf-8", "replace"),
    }
    return json.dumps(doc, separators=(",", ":")).encode()
