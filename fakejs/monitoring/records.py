"""What /connz reports about a connection: a record taken per request, or kept when it closed.

:class:`ConnRecord` is one connection as nats-server's ``ConnInfo`` shows
it.  :class:`ClosedConnections` keeps the records of closed connections
for ``/connz?state=closed``: it is a callback the broker calls when a
client goes (:attr:`fakejs.core.broker.Broker.on_client_closed`), so the
core never needs to know what monitoring keeps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.router import Subscription
from fakejs.core.session import ClientSession
from fakejs.gocompat.gotime import NS, format_duration, rfc3339
from fakejs.monitoring.query import GLOBAL_ACCOUNT, go_uptime

# How many closed connections /connz?state=closed remembers (nats-server's default).
MAX_CLOSED_CLIENTS = 10000

# What nats-server shows instead of a token (it never echoes secrets).
REDACTED = "[REDACTED]"


def sub_detail(sub: Subscription, account: bool, name: str = GLOBAL_ACCOUNT) -> dict[str, Any]:
    """One subscription as nats-server's ``SubDetail`` (``account`` adds the account fields, naming ``name``)."""
    doc: dict[str, Any] = {"account": name, "account_tag": name} if account else {}
    doc["subject"] = sub.subject
    if sub.queue:
        doc["qgroup"] = sub.queue
    doc["sid"] = sub.sid
    doc["msgs"] = sub.delivered
    if sub.max:
        doc["max"] = sub.max
    doc["cid"] = getattr(sub.owner, "cid", 0)  # internal (JetStream) subscriptions have no client
    return doc


def auth_user(opts: dict[str, Any]) -> str:
    """The identity a client authenticated with, as nats-server reports it (tokens redacted)."""
    if opts.get("nkey"):
        return str(opts["nkey"])
    if opts.get("user"):
        return str(opts["user"])
    if opts.get("auth_token"):
        return REDACTED
    return ""


@dataclass(slots=True)
class ConnRecord:
    """What /connz reports about one connection, open (taken per request) or closed (kept at close)."""

    cid: int
    ip: str
    port: int
    start_ns: int
    last_ns: int
    rtt_ns: int
    pending: int
    in_msgs: int
    out_msgs: int
    in_bytes: int
    out_bytes: int
    name: str
    lang: str
    version: str
    user: str
    subs: list[dict[str, Any]] = field(default_factory=list)
    account: str = GLOBAL_ACCOUNT
    stop_ns: int = 0
    reason: str = ""
    tls_version: str = ""
    tls_cipher: str = ""
    tls_first: bool = False
    tls_peer_certs: list[dict[str, str]] = field(default_factory=list)
    client_type: str = "nats"  # nats-server's ``type``: "nats", or "websocket"
    # An operator-mode login's user JWT (none when a bearer token), its issuer, its tags and its name.
    jwt: str = ""
    issuer_key: str = ""
    tags: tuple[str, ...] = ()
    user_name_tag: str = ""
    account_name_tag: str = ""  # the account's JWT name, else its name (nats-server's getNameTag)
    kind: str = "Client"  # or "Leafnode" (which has no ``type``)

    @classmethod
    def of(cls, client: ClientSession, subs: Iterable[Subscription], closed: bool = False) -> ConnRecord:
        """Snapshot ``client``; subscriptions of a closed one carry their account, as in nats-server."""
        opts, login = client.opts, client.login
        details = client.io.details
        # The session keeps activity on the monotonic clock; report it as wall time.
        last_ns = client.started_ns + int((client.last_activity - client.started) * NS)
        return cls(
            cid=client.cid,
            ip=client.host if client.port else "",
            port=client.port,
            start_ns=client.started_ns,
            last_ns=last_ns,
            rtt_ns=rtt_ns(client.rtt),
            pending=client.out_size + client.io.write_buffer_size(),
            in_msgs=client.in_msgs,
            out_msgs=client.out_msgs,
            in_bytes=client.in_bytes,
            out_bytes=client.out_bytes,
            name=str(opts.get("name") or ""),
            lang=str(opts.get("lang") or ""),
            version=str(opts.get("version") or ""),
            user=auth_user(opts),
            subs=[sub_detail(sub, account=closed, name=client.account.name) for sub in subs],
            account=client.account.name,
            tls_version=details.tls_version,
            tls_cipher=details.tls_cipher,
            tls_first=details.tls_first and bool(details.tls_version),
            tls_peer_certs=list(details.tls_peer_certs),
            client_type="websocket" if client.websocket else "nats",
            jwt=shown_jwt(opts.get("jwt")),
            issuer_key=login.issuer_key if login is not None else "",
            tags=login.tags if login is not None else (),
            user_name_tag=login.name_tag if login is not None else "",
            account_name_tag=client.account.name_tag or client.account.name,
        )

    @classmethod
    def closed(cls, client: ClientSession, subs: list[Subscription]) -> ConnRecord:
        """The record nats-server keeps for ``/connz?state=closed`` when a client goes."""
        record = cls.of(client, subs, closed=True)
        record.stop_ns = client.stopped_ns or client.broker.clock.time_ns()
        record.reason = client.close_reason
        return record

    def render(self, now_ns: int, subs: str, auth: bool) -> dict[str, Any]:
        """The ``ConnInfo`` document; ``subs`` is "", "list" or "detail"."""
        end = self.stop_ns or now_ns
        doc: dict[str, Any] = {
            "cid": self.cid,
            "kind": self.kind,
        }
        if self.kind == "Client":
            doc["type"] = self.client_type
        doc.update({"ip": self.ip, "port": self.port, "start": rfc3339(self.start_ns)})
        doc["last_activity"] = rfc3339(self.last_ns)
        if self.stop_ns:
            doc["stop"] = rfc3339(self.stop_ns)
        if self.reason:
            doc["reason"] = self.reason
        doc["rtt"] = format_duration(self.rtt_ns)
        doc["uptime"] = go_uptime(end - self.start_ns)
        doc["idle"] = go_uptime(end - self.last_ns)
        doc["pending_bytes"] = self.pending
        doc["in_msgs"] = self.in_msgs
        doc["out_msgs"] = self.out_msgs
        doc["in_bytes"] = self.in_bytes
        doc["out_bytes"] = self.out_bytes
        doc["subscriptions"] = len(self.subs)
        for key in ("name", "lang", "version"):
            value = getattr(self, key)
            if value:
                doc[key] = value
        if self.tls_version:
            doc["tls_version"] = self.tls_version
            doc["tls_cipher_suite"] = self.tls_cipher
            if auth and self.tls_peer_certs:
                doc["tls_peer_certs"] = self.tls_peer_certs
            if self.tls_first:
                doc["tls_first"] = True
        if auth and self.user:
            doc["authorized_user"] = self.user
        if auth and self.account != GLOBAL_ACCOUNT:
            doc["account"] = self.account
        if self.subs:
            if subs == "detail":
                doc["subscriptions_list_detail"] = self.subs
            elif subs == "list":
                doc["subscriptions_list"] = [detail["subject"] for detail in self.subs]
        doc.update(self._jwt_fields(auth))
        return doc

    def _jwt_fields(self, auth: bool) -> dict[str, Any]:
        """``jwt``, ``issuer_key``, ``name_tag`` and ``tags``: an open client's with ``auth`` only.

        nats-server keeps them for a closed client, its user JWT's name as ``name_tag``, and
        with ``auth`` shows its account's tag there instead (unless the global account).
        """
        if not auth and not self.stop_ns:
            return {}
        name_tag = self.user_name_tag
        if auth and (not self.stop_ns or self.account != GLOBAL_ACCOUNT):
            name_tag = self.account_name_tag
        fields: dict[str, Any] = {}
        for key, value in (("jwt", self.jwt), ("issuer_key", self.issuer_key), ("name_tag", name_tag)):
            if value:
                fields[key] = value
        if self.tags:
            fields["tags"] = list(self.tags)
        return fields


def shown_jwt(token: object) -> str:
    """The user JWT a client sent as ``/connz`` shows it: none when it is a bearer token (``redactBearerJWT``)."""
    if not isinstance(token, str) or not token:
        return ""
    # Only a client that logged in with a user JWT (operator mode) loads the JWT decoder
    from fakejs.core.jwt.claims import USER, JwtError, decode_kind

    try:
        claims = decode_kind(token, USER)
    except JwtError:
        return token
    return "" if claims.nats.get("bearer_token") else token


def rtt_ns(seconds: float) -> int:
    """nats-server's reported RTT: whole microseconds below a millisecond, nanoseconds otherwise."""
    ns = int(seconds * NS)
    if 1_000 < ns < 1_000_000:
        ns -= ns % 1_000
    return ns


class ClosedConnections:
    """The records of the most recent closed connections (a close callback of the broker)."""

    def __init__(self, limit: int = MAX_CLOSED_CLIENTS) -> None:
        self._records: deque[ConnRecord] = deque(maxlen=limit)

    def __call__(self, client: ClientSession, subs: list[Subscription]) -> None:
        self._records.append(ConnRecord.closed(client, subs))

    def add(self, record: ConnRecord) -> None:
        """A closed connection of another kind (a leaf connection)."""
        self._records.append(record)

    def __iter__(self) -> Iterator[ConnRecord]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)
