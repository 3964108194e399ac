"""Exports and imports between accounts: stream imports, service imports and their responses.

Installed once, when the accounts exist, by :func:`wire_imports`; everything
is an internal subscription, so a message costs one index match per router
it passes through, whatever the number of imports configured:

* a **stream import** subscribes in the exporting account on the imported
  subject; each message there is handed, reply and headers untouched, to
  the importing account's subscribers under the import's ``prefix`` or
  ``to`` subject.  It is not carried on further: a message that came in
  through a stream import never leaves again through another import, as in
  nats-server (whose stream imports deliver straight to the subscribers).
* a **service import** subscribes in the importing account on its local
  subject; a request there is published in the exporting account on the
  exported subject with a ``Nats-Request-Info: {"acc":..,"rtt":..}``
  header, and its reply subject replaced by a fresh ``_R_.xxxxxx.yyyyyy``
  subject of the exporting account (:class:`Responses`) that routes the
  response(s) back to the requester's reply subject.  When nobody in the
  exporting account takes the request, the import declines it, so the
  requester gets its no-responders status for the subject it published on.
  A request never goes through the same import twice (chained imports that
  lead back are dropped).
* **responses**: ``Singleton`` exports take one response, then the ``_R_``
  subject is forgotten; ``Stream`` and ``Chunked`` take any number until
  one is empty (no headers, no payload) or the response threshold (default
  2 minutes, per export) passes without any.  A response that reaches
  nobody ends the mapping as well; one to a forgotten ``_R_`` subject is
  taken and dropped (a pull consumer counts it delivered, as nats-server's
  does).  A pull request through an import waits on the requester's own
  reply subject (:meth:`Imports.reply_interest`).  A response's own reply subject comes
  back as nats-server's do: ``$JS.ACK.`` subjects unchanged (acks of pull
  consumers across accounts), others through a ``_R_`` subject of the
  requester's account.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from fakejs.core import subjects
from fakejs.core.account_config import SINGLETON, AccountConfig, Export, Import
from fakejs.core.accounts import Account, Accounts
from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.msgtrace import TRACE_DEST, TRACE_DISABLED, replace_header
from fakejs.core.router import Router, Subscription
from fakejs.core.subject_transform import service_import_rename, stream_import_renames, transform_untokenize
from fakejs.core.subjects import is_subset
from fakejs.protocol import headers as hdrs

__all__ = ["DEFAULT_RESPONSE_THRESHOLD", "Imports", "Responses", "activation_current", "wire_imports"]

# nats-server's DEFAULT_SERVICE_EXPORT_RESPONSE_THRESHOLD.
DEFAULT_RESPONSE_THRESHOLD = 120.0
REQUEST_INFO = "Nats-Request-Info"
REPLY_PREFIX = "_R_."
JS_ACK_PREFIX = "$JS.ACK."
# nats-server's base-62 digits for reply tokens.
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _token(rng: random.Random) -> str:
    number = rng.getrandbits(64)
    out = []
    for _ in range(6):
        out.append(_DIGITS[number % 62])
        number //= 62
    return "".join(out)


# -- responses ----------------------------------------------------------------------


@dataclass
class _Route:
    target: Account
    reply: str
    response_type: str
    threshold: float
    last: float
    timer: TimerHandle | None = None


@dataclass
class _Carried:
    """The origin of a message a stream import carried: it goes no further through imports."""

    origin: object


class Responses:
    """The ``_R_.<account>.<request>`` reply subjects of one account and where they lead."""

    def __init__(self, account: Account, imports: Imports) -> None:
        self.account = account
        self._imports = imports
        self.prefix = REPLY_PREFIX + _token(imports.rng) + "."
        self.routes: dict[str, _Route] = {}
        self._sub: Subscription | None = None

    def handover(self, imports: Imports) -> None:
        """Answer to a new wiring of the imports (a reload), keeping the reply subjects open."""
        self._imports = imports

    def drop(self) -> None:
        """Forget every reply subject (the imports are wired again by a configuration reload)."""
        for subject in list(self.routes):
            self.close(subject)
        if self._sub is not None:
            self.account.router.unsubscribe(self._sub)
            self._sub = None

    def open(self, target: Account, reply: str, response_type: str, threshold: float) -> str:
        """A new reply subject here whose responses go to ``reply`` in ``target``."""
        if self._sub is None:
            self._sub = self.account.router.subscribe_internal(self.prefix + ">", self._respond)
        rng = self._imports.rng
        subject = self.prefix + _token(rng)
        while subject in self.routes:
            subject = self.prefix + _token(rng)
        clock = self._imports.clock
        route = _Route(target, reply, response_type, threshold, clock.monotonic())
        route.timer = clock.call_later(threshold, self._expire, subject)
        self.routes[subject] = route
        return subject

    def close(self, subject: str) -> None:
        route = self.routes.pop(subject, None)
        if route is not None and route.timer is not None:
            route.timer.cancel()

    def _expire(self, subject: str) -> None:
        route = self.routes.get(subject)
        if route is None:
            return
        idle = self._imports.clock.monotonic() - route.last
        if idle >= route.threshold:
            del self.routes[subject]
        else:
            route.timer = self._imports.clock.call_later(route.threshold - idle, self._expire, subject)

    def _respond(self, shown: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        # A JetStream delivery is routed on the reply subject but shows the stored message's subject.
        subject = self.account.router.routed_subject or shown
        route = self.routes.get(subject)
        if route is None:
            # Taken all the same, as by nats-server's wildcard subscription on the account's reply
            # prefix: a pull consumer's deliveries past a singleton's one response are spent, not
            # handed back for redelivery to the same request.
            return True
        imports = self._imports
        imports.counts["responses"] += 1
        if reply and not reply.startswith(JS_ACK_PREFIX):
            reply = imports.responses(route.target).open(self.account, reply, SINGLETON, DEFAULT_RESPONSE_THRESHOLD)
        shown_as = shown if shown != subject else ""
        delivered = route.target.router.publish(route.reply, reply, hdr, payload, origin, shown_as)
        if not delivered or route.response_type == SINGLETON or (not payload and not hdr):
            self.close(subject)
        else:
            route.last = imports.clock.monotonic()
        return delivered


# -- the imports -----------------------------------------------------------------------


@dataclass
class Imports:
    """The imports wired on one server's accounts (what :func:`wire_imports` returns).

    ``counts`` tallies the work done (``carried`` stream messages,
    ``requests`` through service imports, ``responses``) for tests.
    """

    clock: Clock
    rng: random.Random
    accounts: Accounts
    subscriptions: list[Subscription] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"carried": 0, "requests": 0, "responses": 0})
    _responses: dict[str, Responses] = field(default_factory=dict)
    _active: list[object] = field(default_factory=list)
    # What :meth:`unwire` undoes: each import's subscription and its router, and a stream
    # import's interest callbacks on the exporter's and the importer's routers.
    _wired: list[tuple[Router, Subscription]] = field(default_factory=list)
    _callbacks: list[tuple[Router, Router, Any, Any]] = field(default_factory=list)

    def unwire(self, successor: Imports | None = None) -> None:
        """Take every import away (a configuration reload wires the new ones in its place).

        The reply subjects of requests still in flight go to ``successor``
        (the new wiring), for the accounts it still has; others are forgotten.
        """
        for router, subscription in self._wired:
            router.unsubscribe(subscription)
        for source, router, check, listener in self._callbacks:
            source.remove_import_callbacks(check, None)
            router.remove_import_callbacks(None, listener)
        for name, responses in self._responses.items():
            if successor is not None and successor.accounts.get(name) is responses.account:
                responses.handover(successor)
                successor._responses[name] = responses
            else:
                responses.drop()
        self._wired.clear()
        self._callbacks.clear()
        self._responses.clear()
        self.subscriptions.clear()

    def responses(self, account: Account) -> Responses:
        """The reply subjects of ``account`` (made when first needed)."""
        found = self._responses.get(account.name)
        if found is None:
            found = self._responses[account.name] = Responses(account, self)
        return found

    def reply_interest(self, account: Account, reply: str) -> tuple[Account, str]:
        """The account and subject a reply of ``account`` leads to (``trackDownAccountAndInterest``).

        A pull request that came through a service import has a ``_R_`` reply;
        its consumer watches the requester's own reply subject, in the
        requester's account, for interest.  Other replies are their own.
        """
        while reply.startswith(REPLY_PREFIX):
            responses = self._responses.get(account.name)
            route = responses.routes.get(reply) if responses is not None else None
            if route is None:
                break
            account, reply = route.target, route.reply
        return account, reply

    def add_stream(self, exporter: Account, importer: Account, imp: Import) -> None:
        local = imp.local or imp.subject
        rename, back = stream_import_renames(imp.subject, local)
        pattern = transform_untokenize(local)[0]
        router, source = importer.router, exporter.router
        counts = self.counts
        clock, timed = self.clock, bool(imp.expires and imp.ends_at_expiry)  # an activation token's end

        def carry(shown: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
            if isinstance(origin, _Carried) or (timed and not activation_current(imp, clock.time_ns() / 1e9)):
                return False
            counts["carried"] += 1
            # A push consumer's delivery is routed on its deliver subject and shows the stored one.
            subject = source.routed_subject or shown
            shown_as = shown if shown != subject else ""
            # As nats-server's shadow subscriptions: for this server's clients only, the others import for theirs.
            return router.publish(rename(subject), reply, hdr, payload, _Carried(origin), shown_as, routes=False)

        carrying = exporter.router.subscribe_internal(imp.subject, carry)

        def traced(trace: Any, subject: str, *message: Any) -> None:
            # nats-server's shadow subscriptions: one per subscription of the importer's on this server.
            renamed = rename(subject)
            matched = router.index.match(renamed)
            for _ in range(len(matched.psubs) + len(matched.qsubs)):
                trace.stream_export(importer.name, renamed)

        carrying.owner.trace_hop = traced
        self.subscriptions.append(carrying)
        self._wired.append((source, carrying))

        asking: list[str] = []  # imports that lead back to this account are not followed round

        def interest(subject: str) -> bool:
            if asking or not subjects.matches(imp.subject, subject):
                return False
            asking.append(subject)
            try:
                return router.has_exact_interest(rename(subject))
            finally:
                asking.pop()

        source.add_imported_interest(interest)

        forwarding: list[str] = []  # as ``asking``: no going round imports that lead back

        def forward(subject: str) -> None:
            if forwarding or not subjects.matches(pattern, subject):
                return
            forwarding.append(subject)
            try:
                source.notify_interest(back(subject))
            finally:
                forwarding.pop()

        router.add_interest_listener(forward)
        self._callbacks.append((source, router, interest, forward))

    def add_service(self, exporter: Account, importer: Account, imp: Import, export: Export | None) -> None:
        local = imp.local or imp.subject
        rename = service_import_rename(local, imp.subject)
        local = transform_untokenize(local)[0]
        response_type = export.response_type if export is not None else SINGLETON
        threshold = (export.response_threshold if export is not None else 0.0) or DEFAULT_RESPONSE_THRESHOLD
        key = object()
        active = self._active
        counts = self.counts
        clock, timed = self.clock, bool(imp.expires and imp.ends_at_expiry)  # an activation token's end

        def request(
            subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object, untraced: bool = False
        ) -> bool:
            if isinstance(origin, _Carried) or key in active:
                return False
            if timed and not activation_current(imp, clock.time_ns() / 1e9):
                return False
            counts["requests"] += 1
            responses = self.responses(exporter)
            new_reply = ""
            if reply:
                new_reply = (
                    reply
                    if reply.startswith(JS_ACK_PREFIX)
                    else responses.open(importer, reply, response_type, threshold)
                )
            if not active:
                hdr = _with_request_info(hdr, importer.name, origin)
            if untraced:  # a traced message goes on untraced past the import (no ``allow_trace``)
                hdr = replace_header(hdr or b"", TRACE_DEST, TRACE_DISABLED)
            active.append(key)
            try:
                target = exporter.router.map_published(rename(subject))
                delivered = exporter.router.publish(target, new_reply, hdr, payload, origin)
            finally:
                active.pop()
            if not delivered and new_reply and new_reply != reply:
                responses.close(new_reply)
            return delivered

        # Not announced to the other servers (nats-server's noForward): each serves its own requesters.
        requesting = importer.router.subscribe_internal(local, request, local_only=True)

        def traced(
            trace: Any, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object
        ) -> bool | None:
            trace.service_import(exporter.name, subject, exporter.router.map_published(rename(subject)))
            if trace.trace_only:
                return None  # nothing is delivered past the import
            return request(subject, reply, hdr, payload, origin, untraced=True)

        requesting.owner.trace_hop = traced
        self.subscriptions.append(requesting)
        self._wired.append((importer.router, requesting))


def _with_request_info(hdr: bytes | None, account: str, origin: object) -> bytes:
    """The request with nats-server's client info header (replacing one the publisher set)."""
    rtt = getattr(origin, "rtt", 0.0)
    info = json.dumps({"acc": account, "rtt": int(rtt * 1e9) if isinstance(rtt, float) else 0}, separators=(",", ":"))
    if hdr:
        hdr = hdrs.remove(hdr, REQUEST_INFO) or None
    return hdrs.add(hdr, REQUEST_INFO, info)


def _export_for(config: AccountConfig | None, subject: str) -> Export | None:
    """The service export of ``config`` an import of ``subject`` uses (exact, else the first covering it)."""
    if config is None:
        return None
    services = [e for e in config.exports if e.service]
    for export in services:
        if export.subject == subject:
            return export
    return next((e for e in services if is_subset(subject, e.subject)), None)


def activation_current(imp: Import, now: float) -> bool:
    """Whether the activation token of an account JWT's import is valid at ``now`` (``checkActivation``'s times)."""
    return not (imp.expires and imp.expires <= now) and not (imp.not_before and now < imp.not_before)


def wire_imports(accounts: Accounts, configs: list[AccountConfig], clock: Clock, rng: random.Random) -> Imports:
    """Install every import of ``configs`` on the accounts already created for them.

    The configuration was checked (:func:`fakejs.core.configfile.exports.check_imports`);
    an import naming an account that does not exist is skipped.
    """
    wiring = Imports(clock, rng, accounts)
    by_name = {c.name: c for c in configs}
    now = clock.time_ns() / 1e9
    for config in configs:
        importer = accounts.get(config.name)
        if importer is None:
            continue
        for imp in config.imports:
            exporter = accounts.get(imp.account)
            if exporter is None or not activation_current(imp, now):
                continue
            if imp.service:
                wiring.add_service(exporter, importer, imp, _export_for(by_name.get(imp.account), imp.subject))
            else:
                wiring.add_stream(exporter, importer, imp)
    return wiring
