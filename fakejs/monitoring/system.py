"""Requests a client of the system account may send, answered as nats-server does.

In the system account (``$SYS``, or the account ``system_account`` names)
the server answers:

* ``$SYS.REQ.SERVER.PING`` and ``$SYS.REQ.SERVER.PING.<KIND>`` (every
  server answers) and ``$SYS.REQ.SERVER.<server id>.<KIND>`` (this one),
  for the kinds in :attr:`SystemRequests.server_kinds`, ``STATSZ`` and ``IDZ``;
* ``$SYS.REQ.SERVER.<server id>.RELOAD``: the configuration file reloaded
  (the envelope without ``data``; a refused reload's error, code 500);
* ``$SYS.REQ.SERVER.<server id>.KICK`` and ``...LDM`` for one client
  (:mod:`fakejs.monitoring.client_requests`), ``$SYS.DEBUG.SUBSCRIBERS`` and
  ``$SYS.REQ.ACCOUNT.NSUBS`` (:mod:`fakejs.monitoring.subscribers`);
* the account resolver's requests (``...CLAIMS.UPDATE``, ``...CLAIMS.LOOKUP``,
  ``$SYS.REQ.CLAIMS.LIST``...): :mod:`fakejs.monitoring.claims`;
* the kinds nats-server serves and fakejs does not (:data:`REFUSED_SERVER_KINDS`):
  an error (500) naming the feature, never silence;
* ``$SYS.REQ.ACCOUNT.<account>.<KIND>`` for the kinds in
  :data:`ACCOUNT_KINDS`, about that account, and
  ``$SYS.REQ.ACCOUNT.PING.STATZ`` about every account with clients.

In every account, ``$SYS.REQ.USER.INFO`` tells a client who it is
(:mod:`fakejs.monitoring.userinfo`), and the requests of :data:`IMPORTED`
(``$SYS.REQ.ACCOUNT.PING.STATZ``, ``...PING.CONNZ``, ``$SYS.REQ.SERVER.PING.CONNZ``)
answer about the requester's account, as nats-server's imports of them do.

The answer is nats-server's ``ServerAPIResponse``: ``{"server": {...},
"data": {...}}``, or ``"error": {"code", "description"}`` instead of
``data`` (400: the request body is no JSON object of options; 500: the
document could not be made).  A request body carries the document's
options as JSON under nats-server's names (``{"subscriptions": true}``),
plus the filters ``server_name``, ``host``, ``cluster``, ``exact_match``,
``tags`` and ``domain``: a server they do not select stays silent.  Nobody
listens for a kind nats-server does not serve (the requester hears "no
responders").  ``IDZ`` answers the bare server
identity and ``STATSZ`` puts its document under ``statsz``.

:class:`SystemRequests` also publishes ``$SYS.SERVER.<id>.STATSZ`` on
nats-server's schedule (250 ms after the start, then at doubling intervals
up to every 10 s) whenever someone in the system account listens for it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.core.clock import TimerHandle
from fakejs.core.reload_errors import ReloadRefused
from fakejs.core.router import InternalHandler, Subscription
from fakejs.core.session import ClientSession
from fakejs.gocompat import gojson
from fakejs.gocompat.gotime import rfc3339
from fakejs.monitoring import subscribers
from fakejs.monitoring.accountz import NoAccount, account_info, account_stats, accountz, gatewayz, head
from fakejs.monitoring.client_requests import CLIENT_REQUESTS, client_id
from fakejs.monitoring.health import health
from fakejs.monitoring.resolver import AccountResolver
from fakejs.monitoring.userinfo import UserInfoResponder

if TYPE_CHECKING:
    from fakejs.monitoring.source import MonitoredServer

# nats-server's STATSZ schedule: the first after 250 ms, then doubling up to this.
STATSZ_FIRST = 0.25
STATSZ_INTERVAL = 10.0

# JSON option names -> /connz, /subsz and /jsz query parameters.
_CONNZ_OPTIONS = {
    "sort": "sort",
    "auth": "auth",
    "offset": "offset",
    "limit": "limit",
    "cid": "cid",
    "mqtt_client": "mqtt_client",
    "user": "user",
    "acc": "acc",
}
_SUBSZ_OPTIONS = {"offset": "offset", "limit": "limit", "subscriptions": "subs", "account": "acc", "test": "test"}
_JSZ_OPTIONS = {
    "account": "acc",
    "accounts": "accounts",
    "streams": "streams",
    "consumer": "consumers",
    "direct_consumer": "direct-consumers",
    "config": "config",
    "leader_only": "leader-only",
    "offset": "offset",
    "limit": "limit",
    "raft": "raft",
}
_CONN_STATES = {0: "open", 1: "closed", 2: "all"}
# The account request kinds nats-server serves.
ACCOUNT_KINDS = ("SUBSZ", "CONNZ", "LEAFZ", "JSZ", "INFO", "STATZ", "CONNS")
# The Go option types of the account requests whose names are not the kind's (errors name them).
_ACCOUNT_TYPES = {"INFO": "AccInfo", "STATZ": "AccountStatz"}
# The system account's requests nats-server imports into every other account, by the kind they ask for.
IMPORTED = {
    "$SYS.REQ.ACCOUNT.PING.STATZ": "STATZ",
    "$SYS.REQ.ACCOUNT.PING.CONNZ": "CONNZ",
    "$SYS.REQ.SERVER.PING.CONNZ": "CONNZ",
}
# Server kinds nats-server serves and fakejs does not: answered with an error naming them, never silence.
REFUSED_SERVER_KINDS = {
    "PROFILEZ": "Go runtime profiles",
    "EXPVARZ": "Go runtime variables",
    "IPQUEUESZ": "internal queue sizes",
}


def refusal(kind: str, feature: str) -> str:
    """The error a request kind fakejs does not serve is answered with."""
    return f"{kind} ({feature}): not supported by fakejs yet"


# The monitoring documents load with the first request that needs one: the responder is
# installed at every start, and a server nobody asks pays nothing for them.


def connz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import connz as documents

    return documents.connz(server, query)


def subsz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import connz as documents

    return documents.subsz(server, query)


def varz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import endpoints

    return endpoints.varz(server, query)


def jsz(server: MonitoredServer, query: dict[str, list[str]]) -> tuple[int, Any]:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import jsz as documents

    return documents.jsz(server, query)


def routez(server: MonitoredServer, subs: str) -> Any:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import routez as documents

    return documents.routez_document(server, subs)


def leafz_document(server: MonitoredServer, subscriptions: bool, account: str) -> Any:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import leafz

    return leafz.leafz_document(server, subscriptions, account)


def _routez_subs(options: dict[str, Any]) -> str:
    """``RoutezOptions``: ``subscriptions_detail`` wins over ``subscriptions``."""
    if options.get("subscriptions_detail"):
        return "detail"
    return "list" if options.get("subscriptions") else ""


def rss_bytes() -> int:
    # Loaded with the first request that needs it (see above)
    from fakejs.monitoring import endpoints

    return endpoints.rss_bytes()


class RequestError(Exception):
    """A request answered with ``{"error": {"code", "description"}}``."""

    def __init__(self, code: int, description: str) -> None:
        super().__init__(description)
        self.code = code


def _refused(kind: str, feature: str) -> Callable[[dict[str, Any]], Any]:
    def make(options: dict[str, Any]) -> Any:
        raise RequestError(500, refusal(kind, feature))

    return make


class Skip(Exception):
    """A request this server does not answer."""


def _param(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _query(options: dict[str, Any], names: dict[str, str]) -> dict[str, list[str]]:
    """The HTTP query parameters the JSON options stand for."""
    return {names[key]: [_param(value)] for key, value in options.items() if key in names and value not in ("", None)}


def _connz_query(options: dict[str, Any]) -> dict[str, list[str]]:
    params = _query(options, _CONNZ_OPTIONS)
    if options.get("subscriptions_detail"):
        params["subs"] = ["detail"]
    elif options.get("subscriptions"):
        params["subs"] = ["true"]
    state = options.get("state")
    if isinstance(state, int) and state in _CONN_STATES:
        params["state"] = [_CONN_STATES[state]]
    return params


def _document(result: tuple[int, Any]) -> Any:
    _status, doc = result
    if isinstance(doc, str):
        raise RequestError(500, doc)
    return doc


def _go_json_error(body: bytes, kind: str) -> str:
    """The text of Go's ``json.Unmarshal`` error for a body that is no JSON object of options."""
    text = body.decode(errors="replace").lstrip(" \t\r\n")
    try:
        value = json.loads(text)
    except ValueError:
        if not text:
            return "unexpected end of JSON input"
        first = text[0]
        if first not in '{["-0123456789tfn':
            return f"invalid character {first!r} looking for beginning of value"
        return "unexpected end of JSON input"
    names = {list: "array", str: "string", bool: "bool", int: "number", float: "number"}
    return f"json: cannot unmarshal {names.get(type(value), 'value')} into Go value of type server.{kind}EventOptions"


class SystemRequests:
    """Answers the system account's requests and publishes its STATSZ; one per running server."""

    def __init__(self, server: MonitoredServer) -> None:
        self.server = server
        broker = server.broker
        self.events = broker.events
        self._subs: list[tuple[Account, Subscription]] = []
        self._timer: TimerHandle | None = None
        # ``$SYS.REQ.SERVER.<id>.RELOAD``: the server's reload (None: nobody listens).
        self.reload: Callable[[], None] | None = None
        self.server_kinds: dict[str, Callable[[dict[str, Any]], Any]] = {
            "VARZ": lambda o: _document(varz(server, {})),
            "CONNZ": lambda o: _document(connz(server, _connz_query(o))),
            "SUBSZ": lambda o: _document(subsz(server, _query(o, _SUBSZ_OPTIONS))),
            "JSZ": lambda o: _document(jsz(server, _query(o, _JSZ_OPTIONS))),
            "HEALTHZ": lambda o: health(server, o),
            "ACCOUNTZ": self._accountz,
            "LEAFZ": lambda o: leafz_document(server, o.get("subscriptions") is True, str(o.get("account") or "")),
            "ROUTEZ": lambda o: routez(server, _routez_subs(o)),
            "GATEWAYZ": lambda o: gatewayz(server, {})[1],
            "RAFTZ": lambda o: {},
            **{kind: _refused(kind, feature) for kind, feature in REFUSED_SERVER_KINDS.items()},
        }
        # Every account's clients may ask who they are ($SYS.REQ.USER.INFO).
        self.user_info = UserInfoResponder(list(broker.accounts), self.events)
        # The account resolver: accounts looked up and updated, and its requests ($SYS.REQ.CLAIMS...).
        self.resolver = AccountResolver(broker, self.events)
        account = self.events.account
        if account is None:
            return
        router = account.router
        # One subscription per kind, as nats-server has: a kind nobody serves gets no responders.
        subjects: list[tuple[str, InternalHandler]] = [("$SYS.REQ.SERVER.PING", self._on_statsz)]
        for kind in (*self.server_kinds, "STATSZ", "IDZ"):
            subjects.append((f"$SYS.REQ.SERVER.PING.{kind}", self._on_server))
            subjects.append((f"$SYS.REQ.SERVER.{broker.server_id}.{kind}", self._on_server))
        subjects.append((f"$SYS.REQ.SERVER.{broker.server_id}.RELOAD", self._on_reload))
        subjects.append((subscribers.SUBJECT, self._on_subscribers))
        subjects.append((subscribers.NSUBS_SUBJECT, self._on_nsubs))
        for kind in CLIENT_REQUESTS:
            subjects.append((f"$SYS.REQ.SERVER.{broker.server_id}.{kind}", self._on_client_request))
        for kind in ACCOUNT_KINDS:
            subjects.append((f"$SYS.REQ.ACCOUNT.*.{kind}", self._on_account))
        for subject, handler in subjects:
            self._subs.append((account, router.subscribe_internal(subject, handler)))
        for other in broker.accounts:
            if other is not account:
                for subject in IMPORTED:
                    sub = other.router.subscribe_internal(subject, self._imported(other), local_only=True)
                    self._subs.append((other, sub))
        self._started = broker.clock.monotonic()
        broker.on_client_connected.append(self._client_connected)
        broker.on_client_closed.append(self._client_closed)
        self._arm()

    def stop(self) -> None:
        self.user_info.stop()
        self.resolver.stop()
        broker = self.server.broker
        if self._client_connected in broker.on_client_connected:
            broker.on_client_connected.remove(self._client_connected)
        if self._client_closed in broker.on_client_closed:
            broker.on_client_closed.remove(self._client_closed)
        for account, sub in self._subs:
            account.router.unsubscribe(sub)
        self._subs.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- answering ------------------------------------------------------------------

    def _answer(
        self,
        reply: str,
        body: bytes,
        kind: str,
        make: Callable[[dict[str, Any]], Any],
        key: str = "data",
        to: Account | None = None,
    ) -> None:
        """Decode the options, apply the server filters, reply with the envelope."""
        if not reply:
            return
        options: dict[str, Any] = {}
        error: RequestError | None = None
        if body.strip():
            try:
                decoded = json.loads(body)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                options = decoded
            else:
                error = RequestError(400, _go_json_error(body, kind))
        if error is None and self._filtered(options):
            return
        response: dict[str, Any] = {"server": {}}
        if error is None:
            try:
                response[key] = make(options)
            except Skip:
                return
            except RequestError as err:
                # The document failed: nats-server still writes its (null) data, then the error.
                response[key] = None
                error = err
        response["server"] = self.events.server_info()
        if error is not None:
            response["error"] = {"code": error.code, "description": str(error)}
        self._reply(reply, response, to)

    def _reply(self, reply: str, doc: dict[str, Any], to: Account | None = None) -> None:
        account = to or self.events.account
        if account is not None:
            account.router.publish(reply, "", None, gojson.dumps(doc).encode())

    def _filtered(self, options: dict[str, Any]) -> bool:
        """Whether the request's server filters leave this server out."""
        broker = self.server.broker
        opts = broker.options
        name, host, cluster = (str(options.get(k) or "") for k in ("server_name", "host", "cluster"))
        mine = {"server_name": broker.name, "host": opts.host or "0.0.0.0", "cluster": ""}
        for key, wanted in (("server_name", name), ("host", host), ("cluster", cluster)):
            if wanted and (wanted != mine[key] if options.get("exact_match") else wanted not in mine[key]):
                return True
        tags = options.get("tags") or []
        if isinstance(tags, list) and any(tag not in opts.server_tags for tag in tags):
            return True
        domain = options.get("domain") or ""
        return bool(domain) and domain != opts.jetstream_domain

    def _on_statsz(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        self._answer(reply, payload, "Statsz", lambda o: self.statsz(), key="statsz")

    def _on_server(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        kind = subject.rsplit(".", 1)[-1]
        if kind == "STATSZ":
            self._on_statsz(subject, reply, headers, payload, origin)
        elif kind == "IDZ" and reply:
            broker = self.server.broker
            ident = {"name": broker.name, "host": broker.options.host or "0.0.0.0", "id": broker.server_id}
            self._reply(reply, ident)
        elif kind in self.server_kinds:
            self._answer(reply, payload, kind.title(), self.server_kinds[kind])

    def _imported(self, account: Account) -> InternalHandler:
        """The system account's requests nats-server imports into ``account``: answered about it alone."""
        makers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "STATZ": lambda o: self._account_statz(account.name, o),
            "CONNZ": lambda o: _document(connz(self.server, _connz_query({**o, "acc": account.name}))),
        }

        def on_request(subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
            kind = IMPORTED[subject]
            self._answer(reply, payload, _ACCOUNT_TYPES.get(kind, kind.title()), makers[kind], to=account)

        return on_request

    def _on_subscribers(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        account = self.events.account
        if reply and account is not None and isinstance(origin, ClientSession):
            count = subscribers.count_subscribers(account.router, payload)
            account.router.publish(reply, "", None, str(count).encode())

    def _on_nsubs(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        broker = self.server.broker
        count = subscribers.nsubs_request(broker.accounts, list(broker.clients.values()), payload)
        account = self.events.account
        if reply and count is not None and account is not None:
            account.router.publish(reply, "", None, str(count).encode())

    def _on_client_request(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        request = client_id(payload)
        if not reply or request is None or self._filtered(request[1]):
            return
        problem = CLIENT_REQUESTS[subject.rsplit(".", 1)[-1]](self.server.broker, request[0])
        response: dict[str, Any] = {"server": self.events.server_info()}
        if problem:
            response["error"] = {"code": 500, "description": problem}
        self._reply(reply, response)

    def _on_reload(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        """nats-server's reloadConfig: reload, then the envelope without data, with the error of a refused reload."""
        if self.reload is None:
            return
        response: dict[str, Any] = {"server": {}}
        try:
            self.reload()
        except ReloadRefused as refused:
            response["error"] = {"code": 500, "description": str(refused)}
        response["server"] = self.events.server_info()
        if reply:
            self._reply(reply, response)

    def _on_account(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        tokens = subject.split(".")
        name, kind = tokens[3], tokens[4]
        handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
            "CONNZ": lambda o: _document(connz(self.server, _connz_query({**o, "acc": name}))),
            "SUBSZ": lambda o: _document(
                subsz(self.server, _query({**o, "account": name, "subscriptions": True}, _SUBSZ_OPTIONS))
            ),
            "JSZ": lambda o: self._account_jsz(name, o),
            "INFO": lambda o: self._account_info(name),
            "LEAFZ": lambda o: leafz_document(self.server, o.get("subscriptions") is True, name),
            "STATZ": lambda o: self._account_statz(name, o),
        }
        if kind == "CONNS":
            self._account_conns(name, reply)
        elif kind in handlers:
            self._answer(reply, payload, _ACCOUNT_TYPES.get(kind, kind.title()), handlers[kind])

    def _account_conns(self, name: str, reply: str) -> None:
        """``CONNS``: the account's connection count event, bare, while it has clients."""
        account = self.server.broker.accounts.get(name)
        if account is None or not reply:
            return
        doc = self.events.account_conns_event(account)
        if doc["conns"]:
            self._reply(reply, doc)

    # -- documents ------------------------------------------------------------------

    def statsz(self) -> dict[str, Any]:
        """nats-server's ``ServerStats``: the figures fakejs keeps (leaf traffic in ``sent``/``received``; no routes or gateways)."""
        broker = self.server.broker
        stats = broker.stats
        cores = os.cpu_count() or 1
        # Loaded with the first statsz (a plain start does not load /leafz)
        from fakejs.monitoring.leafz import server_traffic

        total = server_traffic(stats, broker.leafs)  # the clients' and the leaf connections'
        in_traffic = {"msgs": stats.in_msgs, "bytes": stats.in_bytes}
        out_traffic = {"msgs": stats.out_msgs, "bytes": stats.out_bytes}
        doc: dict[str, Any] = {
            "start": rfc3339(broker.started_ns),
            "mem": rss_bytes(),
            "cores": cores,
            "cpu": 0,
            "connections": len(broker.clients),
            "total_connections": broker.total_connections,
            "active_accounts": len({client.account.name for client in broker.clients.values()}),
            "subscriptions": sum(account.router.index.count for account in broker.accounts),
            "sent": {"msgs": total.out_msgs, "bytes": total.out_bytes},
            "sent_to_clients": out_traffic,
            "received": {"msgs": total.in_msgs, "bytes": total.in_bytes},
            "received_from_clients": in_traffic,
            "slow_consumers": stats.slow_consumers,
        }
        if stats.slow_consumers:
            doc["slow_consumer_stats"] = {"clients": stats.slow_consumers, "routes": 0, "gateways": 0, "leafs": 0}
        doc["active_servers"] = 1
        if broker.jetstream_enabled and self.server.account_jetstreams:
            usage = _document(jsz(self.server, {}))
            config = {key: value for key, value in usage["config"].items() if key != "store_dir"}
            keys = ("memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets", "api")
            doc["jetstream"] = {"config": config, "stats": {k: usage[k] for k in keys}, "limits": usage["limits"]}
        doc["gomaxprocs"] = cores
        return doc

    def _accountz(self, options: dict[str, Any]) -> dict[str, Any]:
        try:
            return accountz(self.server, str(options.get("account") or ""))
        except NoAccount as error:
            raise RequestError(500, str(error)) from None

    def _account_jsz(self, name: str, options: dict[str, Any]) -> Any:
        found = [js for js in self.server.account_jetstreams if js.account.name == name]
        if not found:
            raise RequestError(500, f'account "{name}" not jetstream enabled')
        doc = _document(jsz(self.server, _query({**options, "account": name}, _JSZ_OPTIONS)))
        return doc["account_details"][0]

    def _account_info(self, name: str) -> dict[str, Any]:
        try:
            return account_info(self.server, name)
        except NoAccount as error:
            raise RequestError(500, str(error)) from None

    def _account_statz(self, name: str, options: dict[str, Any]) -> dict[str, Any]:
        broker = self.server.broker
        unused = bool(options.get("include_unused"))
        if name == "PING":
            chosen = list(broker.accounts)
        else:
            account = broker.accounts.get(name)
            chosen = [account] if account is not None else []
        stats = account_stats(self.server, chosen, unused)
        if not stats:
            raise Skip
        return {**head(self.server), "account_statz": stats}

    # -- the periodic STATSZ ------------------------------------------------------------

    def _client_connected(self, client: ClientSession, *_: Any) -> None:
        if client.account is self.events.account:
            self._arm()

    def _client_closed(self, client: ClientSession, *_: Any) -> None:
        if client.account is self.events.account:
            self._arm()

    def _arm(self) -> None:
        """Keep the STATSZ timer running while the system account has clients (only they can listen).

        The beats keep nats-server's schedule from the server's start, so a
        server without anyone there has no timer (a manual clock jumps freely).
        """
        system = self.events.account
        listening = system is not None and any(c.account is system for c in self.server.broker.clients.values())
        if listening and self._timer is None:
            clock = self.server.broker.clock
            self._timer = clock.call_at(self._started + next_beat(clock.monotonic() - self._started), self._heartbeat)
        elif not listening and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _heartbeat(self) -> None:
        self._timer = None
        self._arm()
        broker = self.server.broker
        account = self.events.account
        subject = f"$SYS.SERVER.{broker.server_id}.STATSZ"
        if account is not None and account.router.has_interest(subject):
            statsz = self.statsz()
            self.events.send(subject, {"server": self.events.server_info(), "statsz": statsz})


def next_beat(elapsed: float) -> float:
    """When, in seconds since the start, the next STATSZ is due after ``elapsed``.

    nats-server's schedule: 250 ms, then intervals doubling from 500 ms up
    to 10 s (0.25, 0.75, 1.75, 3.75, 7.75, 15.75, 25.75, ...).
    """
    beat, step = STATSZ_FIRST, STATSZ_FIRST * 2
    while beat <= elapsed and step < STATSZ_INTERVAL:
        beat, step = beat + step, min(step * 2, STATSZ_INTERVAL)
    if beat <= elapsed:
        beat += (int((elapsed - beat) // STATSZ_INTERVAL) + 1) * STATSZ_INTERVAL
    return beat
