"""JetStream advisories: subjects and payloads, as nats-server publishes them.

Every ``$JS.EVENT.ADVISORY.>`` message a JetStream sends is built here:
stream actions (``STREAM.CREATED|UPDATED|DELETED.<stream>``), consumer
actions and delivery events (``CONSUMER.*.<stream>.<consumer>``), abandoned
atomic batches, leader elections in a cluster, and the ``API`` audit of
each answered request -- and the sampled ack metric of a consumer with
``sample_freq`` (``$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>``).  They are
published in the JetStream's own account, and nats-server's domain
(``jetstream { domain }``) is named in each when one is set.  The ones about
servers go to a server's system account: a full API queue
(``API.LIMIT_REACHED``), and in a cluster a new meta leader
(``DOMAIN.LEADER_ELECTED``), a removed server (``SERVER.REMOVED``) and the
audit of the system account's meta requests.

Advisories are fire and forget: nothing is built unless someone listens on
the subject.  Payload fields follow nats-server's struct order (a typed
event header, then the advisory's own fields).  The JetStream and the
consumers are seen through the small protocols below, so this module
imports nothing of the layers that call it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from fakejs.core.clock import Clock
from fakejs.core.empty_reply import EMPTY_REPLY
from fakejs.core.router import Router
from fakejs.core.session import ClientSession
from fakejs.gocompat import gotime
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.internal_client import InternalClient

PREFIX = "$JS.EVENT.ADVISORY."
TYPE_PREFIX = "io.nats.jetstream.advisory.v1."
ACK_METRIC_PREFIX = "$JS.EVENT.METRIC.CONSUMER.ACK."
ACK_METRIC_TYPE = "io.nats.jetstream.metric.v1.consumer_ack"


class Publisher(Protocol):
    """The JetStream an advisory is published through."""

    @property
    def router(self) -> Router: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def account_name(self) -> str: ...

    @property
    def server_name(self) -> str: ...

    @property
    def domain(self) -> str: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def system_router(self) -> Router | None: ...

    def nuid(self) -> str: ...

    def reply(self, subject: str, payload: bytes, hdr: bytes | None = None, empty_reply: bool = False) -> None: ...


class Named(Protocol):
    """Anything an advisory names by its ``name`` (the stream of an :class:`AdvisedConsumer`)."""

    @property
    def name(self) -> str: ...


class AdvisedConsumer(Protocol):
    """A consumer an advisory is about: its name, its config, its stream's name, its JetStream."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> Mapping[str, Any]: ...

    @property
    def stream(self) -> Named: ...

    @property
    def js(self) -> Publisher: ...


def typed_event(js: Publisher, kind: str) -> dict[str, Any]:
    """nats-server's ``TypedEvent`` head of an advisory: type, id, timestamp."""
    return {"type": TYPE_PREFIX + kind, "id": js.nuid(), "timestamp": gotime.rfc3339(js.clock.time_ns())}


def domain_field(js: Publisher) -> dict[str, str]:
    """nats-server's ``domain`` field (``omitempty``)."""
    return {"domain": js.domain} if js.domain else {}


def _send(js: Publisher, subject: str, build: Callable[[], dict[str, Any]], empty_reply: bool = False) -> None:
    """Publish in the JetStream's account; ``empty_reply``: as nats-server's ``publishAdvisory`` does (see
    :data:`fakejs.core.router.EMPTY_REPLY`), the others leave through a stream's or consumer's send queue."""
    if js.router.has_interest(subject):
        js.reply(subject, dumps(build()).encode(), empty_reply=empty_reply)


def _send_with_system_copy(js: Publisher, subject: str, build: Callable[[], dict[str, Any]]) -> None:
    """Publish in the JetStream's account (unless it is the system account), then in the system account
    with the ``account`` named after the timestamp, as nats-server does for batches and elections."""
    system = js.system_router
    if system is not js.router:
        _send(js, subject, build, empty_reply=True)
    if system is None or not system.has_interest(subject):
        return
    doc = build()
    head = {key: doc.pop(key) for key in ("type", "id", "timestamp")}
    payload = dumps({**head, "account": js.account_name, **doc}).encode()
    system.publish(subject, EMPTY_REPLY, None, payload)


def _consumer_subject(consumer: AdvisedConsumer, kind: str) -> str:
    return f"{PREFIX}CONSUMER.{kind}.{consumer.stream.name}.{consumer.name}"


# -- streams ----------------------------------------------------------------------------------

# nats-server's ``ActionAdvisoryType`` values and the subject token of each.
STREAM_ACTIONS = {"create": "CREATED", "modify": "UPDATED", "delete": "DELETED"}


def stream_action(js: Publisher, stream: str, action: str) -> None:
    """``io.nats.jetstream.advisory.v1.stream_action``: a stream was created, updated (``modify``) or deleted.

    nats-server sends it before the API reply (a delete after the advisories
    of the stream's consumers).
    """
    _send(
        js,
        f"{PREFIX}STREAM.{STREAM_ACTIONS[action]}.{stream}",
        lambda: {**typed_event(js, "stream_action"), "stream": stream, "action": action, **domain_field(js)},
    )


def batch_abandoned(js: Publisher, stream: str, batch_id: str, reason: str) -> None:
    """An atomic batch was dropped (``timeout``, ``large``, ``incomplete`` or ``unsupported``)."""
    _send_with_system_copy(
        js,
        f"{PREFIX}STREAM.BATCH_ABANDONED.{stream}",
        lambda: {
            **typed_event(js, "stream_batch_abandoned"),
            "stream": stream,
            **domain_field(js),
            "batch": batch_id,
            "reason": reason,
        },
    )


def stream_leader_elected(js: Publisher, stream: str, leader: str, replicas: list[dict[str, Any]]) -> None:
    """``io.nats.jetstream.advisory.v1.stream_leader_elected``: a replicated stream has a new leader (clustered)."""
    _send_with_system_copy(
        js,
        f"{PREFIX}STREAM.LEADER_ELECTED.{stream}",
        lambda: {
            **typed_event(js, "stream_leader_elected"),
            "stream": stream,
            "leader": leader,
            "replicas": replicas,
            **domain_field(js),
        },
    )


# -- consumers --------------------------------------------------------------------------------


def consumer_action(consumer: AdvisedConsumer, action: str) -> None:
    named_consumer_action(consumer.js, consumer.stream.name, consumer.name, action)


def named_consumer_action(js: Publisher, stream: str, consumer: str, action: str) -> None:
    """``io.nats.jetstream.advisory.v1.consumer_action``: a consumer was created or deleted."""
    kind = {"create": "CREATED", "delete": "DELETED"}[action]
    _send(
        js,
        f"{PREFIX}CONSUMER.{kind}.{stream}.{consumer}",
        lambda: {
            **typed_event(js, "consumer_action"),
            "stream": stream,
            "consumer": consumer,
            "action": action,
            **domain_field(js),
        },
    )


def terminated(
    consumer: AdvisedConsumer, stream_sequence: int, consumer_sequence: int, deliveries: int, reason: str
) -> None:
    js = consumer.js

    def build() -> dict[str, Any]:
        doc = {
            **typed_event(js, "terminated"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "consumer_seq": consumer_sequence,
            "stream_seq": stream_sequence,
            "deliveries": deliveries,
        }
        if reason:
            doc["reason"] = reason
        return {**doc, **domain_field(js)}

    _send(js, _consumer_subject(consumer, "MSG_TERMINATED"), build)


def nak(consumer: AdvisedConsumer, stream_sequence: int, consumer_sequence: int, deliveries: int) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "MSG_NAKED"),
        lambda: {
            **typed_event(js, "nak"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "consumer_seq": consumer_sequence,
            "stream_seq": stream_sequence,
            "deliveries": deliveries,
            **domain_field(js),
        },
    )


def max_deliveries(consumer: AdvisedConsumer, stream_sequence: int, deliveries: int) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "MAX_DELIVERIES"),
        lambda: {
            **typed_event(js, "max_deliver"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "stream_seq": stream_sequence,
            "deliveries": deliveries,
            **domain_field(js),
        },
    )


def _sampled(consumer: AdvisedConsumer) -> bool:
    """nats-server's ``shouldSample``: ``sample_freq`` percent of the acks (all from 100 on)."""
    sample_freq = consumer.config.get("sample_freq")
    if not sample_freq:
        return False  # the usual case, on every ack
    text = str(sample_freq).removesuffix("%")
    frequency = int(text) if text.isdigit() else 0
    if frequency <= 0:
        return False
    return frequency >= 100 or consumer.js.rng.randrange(100) <= frequency


def ack_sample(
    consumer: AdvisedConsumer, stream_sequence: int, consumer_sequence: int, deliveries: int, delivered_ns: int
) -> None:
    """``io.nats.jetstream.metric.v1.consumer_ack`` on ``$JS.EVENT.METRIC.CONSUMER.ACK.<stream>.<consumer>``:
    a sampled ack, with the nanoseconds since the message was delivered (``ack_time``)."""
    if not _sampled(consumer):
        return
    js = consumer.js
    now = js.clock.time_ns()
    _send(
        js,
        f"{ACK_METRIC_PREFIX}{consumer.stream.name}.{consumer.name}",
        lambda: {
            "type": ACK_METRIC_TYPE,
            "id": js.nuid(),
            "timestamp": gotime.rfc3339(now),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "consumer_seq": consumer_sequence,
            "stream_seq": stream_sequence,
            "ack_time": now - delivered_ns,
            "deliveries": deliveries,
            **domain_field(js),
        },
    )


def pause(consumer: AdvisedConsumer, paused: bool, until: gotime.GoTime | None) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "PAUSE"),
        lambda: {
            **typed_event(js, "consumer_pause"),
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            "paused": paused,
            # A zero time.Time is not "empty" to Go's omitempty: it is always there.
            "pause_until": until.text() if until is not None else gotime.ZERO_TIME,
            **domain_field(js),
        },
    )


def pinned(consumer: AdvisedConsumer, group: str, pin_id: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "PINNED"),
        lambda: {
            **typed_event(js, "consumer_group_pinned"),
            "account": js.account_name,
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            **domain_field(js),
            "group": group,
            "pinned_id": pin_id,
        },
    )


def unpinned(consumer: AdvisedConsumer, group: str, reason: str) -> None:
    js = consumer.js
    _send(
        js,
        _consumer_subject(consumer, "UNPINNED"),
        lambda: {
            **typed_event(js, "consumer_group_unpinned"),
            "account": js.account_name,
            "stream": consumer.stream.name,
            "consumer": consumer.name,
            **domain_field(js),
            "group": group,
            "reason": reason,
        },
    )


def consumer_leader_elected(
    js: Publisher, stream: str, consumer: str, leader: str, replicas: list[dict[str, Any]]
) -> None:
    """``io.nats.jetstream.advisory.v1.consumer_leader_elected``: a replicated consumer has a new leader."""
    _send_with_system_copy(
        js,
        f"{PREFIX}CONSUMER.LEADER_ELECTED.{stream}.{consumer}",
        lambda: {
            **typed_event(js, "consumer_leader_elected"),
            "stream": stream,
            "consumer": consumer,
            "leader": leader,
            "replicas": replicas,
            **domain_field(js),
        },
    )


# -- API audit --------------------------------------------------------------------------------

AUDIT_SUBJECT = PREFIX + "API"


def api_audit(
    js: Publisher, subject: str, request: bytes, response: bytes, client: dict[str, Any], server: str = ""
) -> None:
    """``io.nats.jetstream.advisory.v1.api_audit``: one answered API request, sent after its reply.

    ``client`` is the requester's ``ClientInfo`` (:func:`requester_info`); ``server`` the server that
    answered (in a cluster, the leader of the stream or consumer asked about), the JetStream's by default.
    """

    def build() -> dict[str, Any]:
        doc: dict[str, Any] = {**typed_event(js, "api_audit"), "server": server or js.server_name, "client": client}
        doc["subject"] = subject
        if request:
            doc["request"] = request.decode("utf-8", "replace")
        doc["response"] = response.decode("utf-8", "replace")
        return {**doc, **domain_field(js)}

    if js.router.has_interest(AUDIT_SUBJECT):
        js.reply(AUDIT_SUBJECT, dumps(build()).encode(), empty_reply=True)


# -- the cluster's servers, in the system account ---------------------------------------------

DOMAIN_LEADER_ELECTED = PREFIX + "DOMAIN.LEADER_ELECTED"
SERVER_REMOVED = PREFIX + "SERVER.REMOVED"


def _send_system(system: Router, subject: str, build: Callable[[], dict[str, Any]]) -> None:
    """Publish in a server's system account (nats-server's ``publishAdvisory`` with no account)."""
    if system.has_interest(subject):
        system.publish(subject, EMPTY_REPLY, None, dumps(build()).encode())


def domain_leader_elected(
    js: Publisher, system: Router, leader_peer: str, replicas: list[dict[str, Any]], cluster: str
) -> None:
    """``io.nats.jetstream.advisory.v1.domain_leader_elected``: a server became the meta leader.

    Sent by the new leader in its system account: the leader's peer id (not its name), every
    server of the meta group as ``PeerInfo``, the cluster's name.
    """
    _send_system(
        system,
        DOMAIN_LEADER_ELECTED,
        lambda: {
            **typed_event(js, "domain_leader_elected"),
            "leader": leader_peer,
            "replicas": replicas,
            "cluster": cluster,
            **domain_field(js),
        },
    )


def server_removed(js: Publisher, system: Router, server: str, server_id: str, cluster: str) -> None:
    """``io.nats.jetstream.advisory.v1.server_removed``: ``$JS.API.SERVER.REMOVE`` took this server out of
    the meta group; the removed server itself sends it, in its system account."""
    _send_system(
        system,
        SERVER_REMOVED,
        lambda: {
            **typed_event(js, "server_removed"),
            "server": server,
            "server_id": server_id,
            "cluster": cluster,
            **domain_field(js),
        },
    )


API_LIMIT_REACHED = PREFIX + "API.LIMIT_REACHED"


def api_limit_reached(js: Publisher, dropped: int, origin: object = None) -> None:
    """``io.nats.jetstream.advisory.v1.api_limit_reached``: an API queue was full and its requests dropped
    (:mod:`fakejs.jetstream.api.queue_limits`); in the system account only, naming the server the
    request came in through (``origin``, the requesting client; the JetStream's server by default)."""
    system = js.system_router
    if system is None:
        return
    server = str(getattr(origin.broker, "name", "")) if isinstance(origin, ClientSession) else ""
    _send_system(
        system,
        API_LIMIT_REACHED,
        lambda: {
            **typed_event(js, "api_limit_reached"),
            "server": server or js.server_name,
            **domain_field(js),
            "dropped": dropped,
        },
    )


def system_api_audit(js: Publisher, system: Router, server: str, subject: str, request: bytes, response: bytes) -> None:
    """The ``api_audit`` of a request only the system account may send (``META.LEADER.STEPDOWN``,
    ``SERVER.REMOVE``): in the system account, with an empty client info, as nats-server sends it."""

    def build() -> dict[str, Any]:
        doc: dict[str, Any] = {**typed_event(js, "api_audit"), "server": server, "client": {}, "subject": subject}
        if request:
            doc["request"] = request.decode("utf-8", "replace")
        doc["response"] = response.decode("utf-8", "replace")
        return {**doc, **domain_field(js)}

    _send_system(system, AUDIT_SUBJECT, build)


def requester_info(js: Publisher, origin: object) -> dict[str, Any]:
    """nats-server's detailed ``ClientInfo`` of the client that sent an API request (empty fields left out).

    ``server`` and ``cluster`` are those of the server the client is connected
    to.  A request that reached the JetStream through another account's
    import names the requester's account and the service's (``svc``), its
    round trip and server; one from an internal client of the server (a
    mirror's or source's consumer request), that client; any other from the
    server itself, only the account and the server.
    """
    if isinstance(origin, InternalClient):
        return origin.client_info(js.server_name)
    if not isinstance(origin, ClientSession):
        return {"acc": js.account_name, "server": js.server_name}
    if origin.account.name != js.account_name:  # through an import: the requester's account, then the service's
        through: dict[str, Any] = {"acc": origin.account.name, "svc": js.account_name}
        rtt = int(origin.rtt * gotime.NS)
        if rtt:
            through["rtt"] = rtt
        through["server"] = str(getattr(origin.broker, "name", js.server_name))
        return through
    opts = origin.opts
    info: dict[str, Any] = {"start": gotime.rfc3339(origin.started_ns)}
    if origin.host:
        info["host"] = origin.host
    info["id"] = origin.cid
    info["acc"] = origin.account.name
    for key, option in (("user", "nkey"), ("user", "user"), ("name", "name"), ("lang", "lang"), ("ver", "version")):
        if opts.get(option) and key not in info:
            info[key] = str(opts[option])
    rtt = int(origin.rtt * gotime.NS)
    if rtt:
        info["rtt"] = rtt
    info["server"] = str(getattr(origin.broker, "name", js.server_name))
    cluster = str(getattr(origin.broker, "cluster_name", ""))
    if cluster:
        info["cluster"] = cluster
    info["kind"] = origin.kind
    info["client_type"] = "nats"
    return info
