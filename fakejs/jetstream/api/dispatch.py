"""The ``$JS.API`` front end of a JetStream: one subscription, the route table, the replies.

:class:`JetStreamApi` subscribes to ``$JS.API.>``, finds the route for each
request, checks ``Nats-Required-Api-Level``, runs the handler with the
subject's named tokens and writes the reply: ``type`` first, then either
the handler's fields or ``error`` plus the fields nats-server always
includes for that response type (the route's ``error_extras``).  It counts
API calls and errors for ``$JS.API.INFO`` and has the audit advisory sent
(:func:`~fakejs.jetstream.advisories.api_audit`).  A request its API queue
limit drops (:mod:`~fakejs.jetstream.api.queue_limits`) gets no answer.
Requests a consumer hands over (see :data:`~fakejs.jetstream.api.routes.ROUTES`)
are answered here too.  The route table, and with it every handler and the
domain they call, is imported by the first request: a server that starts
with JetStream but serves no ``$JS.API`` request never pays for it.

nats-server imports every ``$JS.API.>`` request into its system account,
where an unknown subject is dropped without a reply -- except Direct Get
and ``CONSUMER.MSG.NEXT``, which only the stream or consumer itself
answers (the prefixes their rows decline), so a missing one yields "no
responders".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.router import Subscription
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream import advisories
from fakejs.jetstream.api import queue_limits
from fakejs.jetstream.service import JetStream

if TYPE_CHECKING:
    from fakejs.jetstream.api.request import Request
    from fakejs.jetstream.api.table import Route, RouteTable
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.errors import ApiError


def encode(doc: dict[str, Any]) -> bytes:
    return dumps(doc).encode()


def error_doc(route: Route, error: ApiError) -> dict[str, Any]:
    """An error reply: ``type``, ``error``, then the fields the route's response type always has."""
    return {"type": route.response, "error": error.to_dict(), **route.error_extras}


class JetStreamApi:
    """Answers an account's ``$JS.API`` requests from a route table."""

    def __init__(self, js: JetStream, table: RouteTable | None = None) -> None:
        self.js = js
        self._table = table
        self._subscription: Subscription | None = None
        self._assets_served = False
        self._late_types: tuple[type[Request], type[ApiError]] | None = None
        js.serve_assets_later(lambda: self.table)

    @property
    def table(self) -> RouteTable:
        """The route table (:data:`~fakejs.jetstream.api.routes.ROUTES` unless given), its asset answers registered."""
        table = self._table
        if table is None:
            # Imported here, by the first request: a server that never serves one never loads the
            # handlers and the domain they call (start-up time).
            from fakejs.jetstream.api.routes import ROUTES

            table = self._table = ROUTES
        if not self._assets_served:
            self._assets_served = True
            self._types()
            for route in table.routes:
                if route.asset_request:
                    self.js.serve_asset(route.asset_request, asset_answer(self.js, route))
        return table

    @table.setter
    def table(self, table: RouteTable) -> None:
        """Answer from another table; requests handed over keep the answers of the first one."""
        _ = self.table
        self._table = table

    def start(self) -> None:
        self._subscription = self.js.router.subscribe_internal("$JS.API.>", self.dispatch)

    def stop(self) -> None:
        if self._subscription is not None:
            self.js.router.unsubscribe(self._subscription)
            self._subscription = None

    def dispatch(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool:
        """Every ``$JS.API.>`` message; False means "not mine" (no-responders may follow)."""
        table = self._table
        if table is None or not self._assets_served:
            table = self.table
        if subject.startswith(table.declined_prefixes):  # table.declines(subject), without the call
            return False
        route = table.find(subject)
        if route is None or route.served_by != "api":
            return True  # swallowed, like the system account's import does
        js = self.js
        options = js.broker.options
        # Only a queue limit of one request drops any (see queue_limits): no look at the queues otherwise.
        if options.jetstream_request_queue_limit == 1 or options.jetstream_info_queue_limit == 1:
            dropped = queue_limits.dropped(js.broker, route.info_queue)
            if dropped:
                advisories.api_limit_reached(js, dropped, origin)
                return True
        types = self._late_types or self._types()
        request = types[0](subject, reply, hdr, payload, on_invalid=self._invalid_request, origin=origin)
        js.begin_answer()  # js.answering(), without the context manager's calls
        try:
            self._answer(route, request)
        finally:
            js.end_answer()
        return True

    def _types(self) -> tuple[type[Request], type[ApiError]]:
        """The request decoder and the API error, imported by the first request (a server that serves
        none never loads them), then kept: an import statement costs microseconds on every request."""
        types = self._late_types
        if types is None:
            # The request decoder and the error table come with the first request
            from fakejs.jetstream.api.request import Request
            from fakejs.jetstream.errors import ApiError

            types = self._late_types = (Request, ApiError)
        return types

    def _invalid_request(self, subject: str, error: str) -> None:
        """nats-server's warning for a request body its strict decoding refuses."""
        self.js.broker.rate_limited_warning(f"Invalid JetStream request '{self.js.account_name} > {subject}': {error}")

    def _answer(self, route: Route, request: Request) -> None:
        """Call the route's handler and reply with what it returns or the error it raises."""
        api_error_type = (self._late_types or self._types())[1]
        js = self.js
        try:
            if js.broker.faults and self._fault_ignores(request.subject):
                return
            if route.level_first and request.hdr:  # a request without headers asks for no level
                request.check_level()
            body = route.call(js, request)
        except api_error_type as error:
            self._reply(route, request, error_doc(route, error), error=True)
            return
        except Exception as exc:
            # A fakejs bug: answer, so the client sees it at once instead of timing out, then
            # let it through to the router, which records it on the server (failing the test).
            if request.reply:
                failure = {"code": 500, "description": f"fakejs internal error: {exc!r}"}
                self.js.reply(request.reply, encode({"type": route.response, "error": failure}))
            raise
        if isinstance(body, dict):
            self._reply(route, request, {"type": route.response, **body}, error=False)
        elif request.reply:  # Uncounted
            self.js.reply(request.reply, encode({"type": route.response, **body.fields}))

    def _fault_ignores(self, subject: str) -> bool:
        """An injected fault may drop the request or fail it (raising the error it names)."""
        faults = self.js.broker.faults
        if not faults:
            return False
        hit = faults.fire("api.request", subject=subject)
        if hit is None:
            return False
        if hit.change == "ignore":
            return True
        # The error table comes with the first fault that fails a request
        from fakejs.jetstream.errors import API_FAILURES, api_error

        raise api_error(API_FAILURES[hit.args.get("error", "unavailable")])

    def _reply(self, route: Route, request: Request, doc: dict[str, Any], error: bool) -> None:
        faults = self.js.broker.faults
        if faults:
            hit = faults.fire("api.reply", subject=request.subject)
            if hit is not None:  # "rewrite": set top-level fields of the reply
                doc = {**doc, **hit.args.get("set", {})}
        payload = encode(doc)
        self.js.record_api_call(error)
        if request.reply:
            self.js.reply(request.reply, payload, request.reply_headers)
        if self.js.router.has_interest(advisories.AUDIT_SUBJECT):
            client = advisories.requester_info(self.js, request.origin)
            advisories.api_audit(self.js, request.subject, request.payload, payload, client, "")


def asset_answer(js: JetStream, route: Route) -> Callable[[Consumer, str, bytes | None, bytes], None]:
    """The answer to a request a consumer hands over (``route``'s): not counted, sent with an empty reply-to."""
    # The request decoder and the error table come with the first request a consumer hands over
    from fakejs.jetstream.api.request import Request
    from fakejs.jetstream.errors import ApiError

    def answer(consumer: Consumer, reply: str, hdr: bytes | None, payload: bytes) -> None:
        if not reply:
            return
        subject = route.pattern.format(stream=consumer.stream.name, consumer=consumer.name)
        request = Request(subject, reply, hdr, payload)
        try:
            request.check_level()
            body = route.call_for(js, request, consumer)
            doc = {"type": route.response, **body}
        except ApiError as error:
            doc = error_doc(route, error)
        js.reply(reply, encode(doc), request.reply_headers, empty_reply=True)

    return answer


def attach_api(js: JetStream) -> JetStreamApi:
    """Give a JetStream its ``$JS.API``: answered from the route table while the JetStream runs."""
    api = JetStreamApi(js)
    js.attach(api)
    return api
