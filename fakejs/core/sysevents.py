"""Events the server publishes in its system account, as nats-server does.

A client of the system account (``$SYS``, or the account ``system_account``
names) that subscribes to ``$SYS.>`` sees, without asking:

* ``$SYS.ACCOUNT.<acc>.CONNECT`` when a client logs in to ``<acc>`` and
  ``$SYS.ACCOUNT.<acc>.DISCONNECT`` when one closes (with what it sent and
  received and why it closed); a leaf connection bound to ``<acc>`` too
  (``kind`` ``Leafnode``; nats-server's ``LEAFNODE.CONNECT`` goes to
  gateways only, which fakejs has not);
* ``$SYS.SERVER.<id>.CLIENT.AUTH.ERR`` before the DISCONNECT of a client
  whose login was refused;
* the account's connection count, ``$SYS.SERVER.ACCOUNT.<acc>.CONNS`` and
  ``$SYS.ACCOUNT.<acc>.SERVER.CONNS`` (one event, two subjects), when it
  changes and every 30 seconds while the account has clients (never for
  the global account ``$G``);
* ``$SYS.SERVER.<id>.LAMEDUCK`` when the server enters lame duck mode and
  ``$SYS.SERVER.<id>.SHUTDOWN`` when it starts to shut down: the bare
  ``ServerInfo``.  The shutdown is the last event: the clients the server
  then closes are not announced.

Every message the server sends there carries its identity, the
``ServerInfo`` block (:meth:`SystemEvents.server_info`), numbered by one
sequence shared with the answers to system requests
(:mod:`fakejs.monitoring.system`).
"""

from __future__ import annotations

from typing import Any, Protocol

from fakejs.core.accounts import GLOBAL_ACCOUNT, Account, Accounts
from fakejs.core.clientio import AUTH_VIOLATION
from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.options import NATS_VERSION, SYSTEM_ACCOUNT, ServerOptions
from fakejs.core.session import ClientSession
from fakejs.core.stats import Stats
from fakejs.gocompat import gojson, ids
from fakejs.gocompat.gotime import NS, rfc3339

CONNECT_TYPE = "io.nats.server.advisory.v1.client_connect"
DISCONNECT_TYPE = "io.nats.server.advisory.v1.client_disconnect"
# Where an account hears of its refused logins (nats-server's authErrorAccountEventSubj).
ACCOUNT_AUTH_ERROR = "$SYS.ACCOUNT.CLIENT.AUTH.ERR"
ACCOUNT_CONNS_TYPE = "io.nats.server.advisory.v1.account_connections"
# nats-server repeats an account's connection count this often while it has clients.
ACCOUNT_CONNS_INTERVAL = 30.0
# The feature flags nats-server 2.15.1 reports by default.
FEATURE_FLAGS = {
    "js_ack_fc_v2": False,
    "js_api_reply_v2": False,
    "js_raft_delete_range": True,
    "js_snapshot_sources": False,
}
# Mixed into the server's seed for the event id generator.
EVENT_ID_SEED = 0x5E5E
# ServerInfo capability flags: JetStream, binary stream snapshots, account NRG.
JETSTREAM_FLAGS = 1 | 2 | 4


class EventHost(Protocol):
    """What the events read from the server (:class:`~fakejs.core.broker.Broker`)."""

    options: ServerOptions
    clock: Clock
    accounts: Accounts
    clients: dict[int, ClientSession]
    server_id: str
    name: str
    jetstream_enabled: bool

    @property
    def cluster_name(self) -> str: ...

    def leaf_connections(self, account: str) -> int:
        """The leaf connections up and bound to ``account``."""

    def leaf_traffic(self, account: str) -> Stats:
        """What the leaf connections bound to ``account`` took in and sent (closed ones too)."""


def _traffic(msgs: int, size: int) -> dict[str, int]:
    return {"msgs": msgs, "bytes": size}


class SystemEvents:
    """Publishes the system account's events for one server."""

    def __init__(self, host: EventHost) -> None:
        self.host = host
        self.seq = 0
        # Traffic of the closed clients of each account: [in msgs, in bytes, out msgs, out bytes].
        self._closed_traffic: dict[str, list[int]] = {}
        self._timers: dict[str, TimerHandle] = {}
        # Set once the SHUTDOWN event is out: nothing more is published until the server starts again.
        self.closed = False
        # Event ids come from a generator of their own (nats-server too has a separate one), so
        # events never shift the ids a seeded server draws from its main generator.
        seed = host.options.seed
        self._ids = ids.new_random(None if seed is None else seed ^ EVENT_ID_SEED)

    @property
    def account(self) -> Account | None:
        """The system account (``None`` if ``system_account`` names none)."""
        return self.host.accounts.get(self.host.options.system_account or SYSTEM_ACCOUNT)

    def server_info(self) -> dict[str, Any]:
        """The ``server`` block of every system message (each one takes the next ``seq``)."""
        host = self.host
        opts = host.options
        self.seq += 1
        info: dict[str, Any] = {"name": host.name, "host": opts.host or "0.0.0.0", "id": host.server_id}
        if host.cluster_name:
            info["cluster"] = host.cluster_name
        if host.jetstream_enabled and opts.jetstream_domain:
            info["domain"] = opts.jetstream_domain
        info["ver"] = NATS_VERSION
        if opts.server_tags:
            info["tags"] = list(opts.server_tags)
        info["feature_flags"] = dict(FEATURE_FLAGS)
        info["jetstream"] = host.jetstream_enabled
        info["flags"] = JETSTREAM_FLAGS if host.jetstream_enabled else 0
        info["seq"] = self.seq
        info["time"] = rfc3339(host.clock.time_ns())
        return info

    def send(self, subject: str, doc: dict[str, Any]) -> None:
        """Publish ``doc`` (JSON, as Go writes it) in the system account."""
        account = self.account
        if account is not None and not self.closed:
            account.router.publish(subject, "", None, gojson.dumps(doc).encode())

    def _heard(self, subject: str) -> bool:
        """Whether anyone in the system account listens on ``subject`` (else no event is built)."""
        account = self.account
        return account is not None and not self.closed and account.router.has_interest(subject)

    def _typed(self, kind: str) -> dict[str, Any]:
        return {"type": kind, "id": ids.nuid(self._ids), "timestamp": rfc3339(self.host.clock.time_ns())}

    # -- clients ------------------------------------------------------------------

    def connected(self, client: ClientSession) -> None:
        """A client logged in: its account's connection count, then the CONNECT event."""
        if self.account is None:
            return
        self.account_conns(client.account)
        subject = f"$SYS.ACCOUNT.{client.account.name}.CONNECT"
        if self._heard(subject):
            doc = self._typed(CONNECT_TYPE)
            doc["server"] = self.server_info()
            doc["client"] = self._client_info(client, closed=False)
            self.send(subject, doc)

    def disconnected(self, client: ClientSession) -> None:
        """A client closed: its account's connection count, then the DISCONNECT event."""
        name = client.account.name
        kept = self._closed_traffic.setdefault(name, [0, 0, 0, 0])
        for i, value in enumerate((client.in_msgs, client.in_bytes, client.out_msgs, client.out_bytes)):
            kept[i] += value
        if self.account is None:
            return
        auth_error = f"$SYS.SERVER.{self.host.server_id}.CLIENT.AUTH.ERR"
        if client.close_reason == AUTH_VIOLATION and self._heard(auth_error):
            # A refused login is reported to the operators first, in the same shape.
            self.send(auth_error, self._disconnect_event(client))
        self.account_conns(client.account)
        subject = f"$SYS.ACCOUNT.{name}.DISCONNECT"
        if self._heard(subject):
            self.send(subject, self._disconnect_event(client))

    def auth_error(self, client: ClientSession, account: Account, reason: str) -> None:
        """A refused login, told in ``account`` itself (``$SYS.ACCOUNT.CLIENT.AUTH.ERR``, ``sendAccountAuthErrorEvent``).

        The disconnect event's shape, ``acc`` the account told, ``reason`` as given.
        """
        if self.account is None or self.closed or not account.router.has_interest(ACCOUNT_AUTH_ERROR):
            return
        doc = self._disconnect_event(client, reason)
        doc["client"]["acc"] = account.name
        account.router.publish(ACCOUNT_AUTH_ERROR, "", None, gojson.dumps(doc).encode())

    def _disconnect_event(self, client: ClientSession, reason: str | None = None) -> dict[str, Any]:
        doc = self._typed(DISCONNECT_TYPE)
        doc["timestamp"] = rfc3339(client.stopped_ns or self.host.clock.time_ns())
        doc["server"] = self.server_info()
        doc["client"] = self._client_info(client, closed=True)
        doc["sent"] = _traffic(client.in_msgs, client.in_bytes)
        doc["received"] = _traffic(client.out_msgs, client.out_bytes)
        doc["reason"] = client.close_reason if reason is None else reason
        return doc

    def _client_info(self, client: ClientSession, closed: bool) -> dict[str, Any]:
        """nats-server's ``ClientInfo`` (empty fields left out; ``jwt`` as the client sent it)."""
        opts = client.opts
        info: dict[str, Any] = {"start": rfc3339(client.started_ns)}
        if client.host:
            info["host"] = client.host
        info["id"] = client.cid
        info["acc"] = client.account.name
        user = opts.get("nkey") or opts.get("user")
        for key, value in (("user", user), ("name", opts.get("name")), ("lang", opts.get("lang"))):
            if value:
                info[key] = str(value)
        if opts.get("version"):
            info["ver"] = str(opts["version"])
        if closed:
            rtt = int(client.rtt * NS)
            if rtt:
                info["rtt"] = rtt
            info["stop"] = rfc3339(client.stopped_ns or self.host.clock.time_ns())
        info.update(jwt_fields(client))
        info["kind"] = client.kind
        info["client_type"] = "nats"
        return info

    # -- leaf connections ------------------------------------------------------------

    def leaf_connected(self, account: Account, client: dict[str, Any]) -> None:
        """A leaf connection bound to ``account`` came up (``client``: its ``ClientInfo``): the counts, then CONNECT."""
        if self.account is None:
            return
        self.account_conns(account)
        subject = f"$SYS.ACCOUNT.{account.name}.CONNECT"
        if self._heard(subject):
            self.send(subject, {**self._typed(CONNECT_TYPE), "server": self.server_info(), "client": client})

    def leaf_disconnected(
        self, account: Account, client: dict[str, Any], traffic: tuple[int, int, int, int], reason: str, stopped_ns: int
    ) -> None:
        """A leaf connection closed: DISCONNECT (``traffic``: in msgs, in bytes, out msgs, out bytes), then the counts."""
        if self.account is None:
            return
        subject = f"$SYS.ACCOUNT.{account.name}.DISCONNECT"
        if self._heard(subject):
            doc = self._typed(DISCONNECT_TYPE)
            doc["timestamp"] = rfc3339(stopped_ns)
            doc.update({"server": self.server_info(), "client": client})
            doc.update({"sent": _traffic(*traffic[:2]), "received": _traffic(*traffic[2:]), "reason": reason})
            self.send(subject, doc)
        self.account_conns(account)

    # -- accounts -----------------------------------------------------------------

    def account_stat(self, account: Account) -> dict[str, Any]:
        """nats-server's ``AccountStat`` for one account: connections, subscriptions, traffic."""
        members = [c for c in self.host.clients.values() if c.account is account and not c.closed]
        kept = self._closed_traffic.get(account.name, [0, 0, 0, 0])
        ln = self.host.leaf_traffic(account.name)  # in nats-server's account totals too
        received = (
            kept[0] + ln.in_msgs + sum(c.in_msgs for c in members),
            kept[1] + ln.in_bytes + sum(c.in_bytes for c in members),
        )
        sent = (
            kept[2] + ln.out_msgs + sum(c.out_msgs for c in members),
            kept[3] + ln.out_bytes + sum(c.out_bytes for c in members),
        )
        others = {"gateways": _traffic(0, 0), "routes": _traffic(0, 0)}
        leafs = self.host.leaf_connections(account.name)
        return {
            "acc": account.name,
            "name": account.name,
            "conns": len(members),
            "leafnodes": leafs,
            "total_conns": len(members) + leafs,
            "num_subscriptions": account.router.index.count,
            "sent": {**_traffic(*sent), **others, "leafs": _traffic(ln.out_msgs, ln.out_bytes)},
            "received": {**_traffic(*received), **others, "leafs": _traffic(ln.in_msgs, ln.in_bytes)},
            "slow_consumers": 0,
        }

    def account_conns_event(self, account: Account) -> dict[str, Any]:
        """The account connection count event (``server`` block included)."""
        return {**self._typed(ACCOUNT_CONNS_TYPE), "server": self.server_info(), **self.account_stat(account)}

    def account_conns(self, account: Account) -> None:
        """Publish the account's connection count on both subjects; repeat it while it has clients."""
        if account.name == GLOBAL_ACCOUNT or self.account is None:
            return
        typed, stat = self._typed(ACCOUNT_CONNS_TYPE), self.account_stat(account)
        timer = self._timers.pop(account.name, None)
        if timer is not None:
            timer.cancel()
        if stat["total_conns"]:
            self._timers[account.name] = self.host.clock.call_later(ACCOUNT_CONNS_INTERVAL, self.account_conns, account)
        for subject in (f"$SYS.SERVER.ACCOUNT.{account.name}.CONNS", f"$SYS.ACCOUNT.{account.name}.SERVER.CONNS"):
            self.send(subject, {**typed, "server": self.server_info(), **stat})

    # -- the server ---------------------------------------------------------------

    def lame_duck(self) -> None:
        """nats-server's ``$SYS.SERVER.<id>.LAMEDUCK``: the server stops taking clients (its ``ServerInfo``)."""
        subject = f"$SYS.SERVER.{self.host.server_id}.LAMEDUCK"
        if self._heard(subject):
            self.send(subject, self.server_info())

    def shutting_down(self, announce: bool = True) -> None:
        """nats-server's ``$SYS.SERVER.<id>.SHUTDOWN``, the server's last event (its ``ServerInfo``).

        ``announce`` False: a crash, which says nothing (and publishes nothing more either).
        """
        subject = f"$SYS.SERVER.{self.host.server_id}.SHUTDOWN"
        if announce and self._heard(subject):
            self.send(subject, self.server_info())
        self.closed = True

    def started(self) -> None:
        """The server runs (again): events are published."""
        self.closed = False

    def stop(self) -> None:
        """Cancel the repeating account events (the server is shutting down)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()


def jwt_fields(client: ClientSession) -> dict[str, Any]:
    """A client's ``jwt``, ``issuer_key``, ``name_tag`` (its account's JWT name, else its name) and ``tags``.

    nats-server's ``ClientInfo`` and ``ConnInfo`` fields, in their order, empty ones left out.
    """
    login, account = client.login, client.account
    fields: dict[str, Any] = {}
    token = client.opts.get("jwt")
    if isinstance(token, str) and token:
        fields["jwt"] = token
    if login is not None and login.issuer_key:
        fields["issuer_key"] = login.issuer_key
    fields["name_tag"] = account.name_tag or account.name
    if login is not None and login.tags:
        fields["tags"] = list(login.tags)
    return fields
