"""Running one operation sequence on fakejs and on a real nats-server, side by side.

:class:`Pair` owns both targets on one asyncio loop: fakejs in-process
(``fakejs.Server(port=0)``) and ``nats-server -a 127.0.0.1 -p -1 -js -sd
<tmp>`` as a subprocess, with one nats-py connection to each.  Every
operation goes to both servers at once, and the next one starts when both
have answered, so the two see the same history at nearly the same wall
time; their normalised replies (:mod:`fakejs.parity.normalize`) must be equal.
A request that gets no answer costs a timeout, paid once for both servers.

The first unequal reply is a *divergence* (:func:`divergence`);
:mod:`fakejs.parity.reproduce` confirms, shrinks and replays them.  A real
server starts in about 10 ms, so every confirmation and every shrinking step
gets brand-new servers (:func:`run_fresh`): nothing a previous sequence left
behind (API counters, consumers) can matter.  The real server is started by
fakejs's one launcher, :class:`fakejs.targets.real.ServerProcess`.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from fakejs.parity import batches, feeds, wide
from fakejs.parity.accounts import API_PREFIX, AccountServers
from fakejs.parity.events import POLLER
from fakejs.parity.families import APP, accounts_of
from fakejs.parity.normalize import (
    ack_subject_shape,
    first_difference,
    jsonable,
    normalize_headers,
    payload_view,
    status_code,
    text,
)
from fakejs.parity.operations import Operation
from fakejs.server.server import Server
from fakejs.targets.real import ServerProcess

# Seconds.  Both servers answer in well under a millisecond, but some requests
# get no answer at all (a publish to a ``no_ack`` stream) and each of those costs
# a full timeout.  Such requests are rare, while a timeout that is too short
# turns a scheduling hiccup on a busy machine into a false divergence (one
# server "silent", the other answering), so a request waits generously; a
# multi-message reply ends after a shorter silence.
REQUEST_TIMEOUT = 2.0
QUIET = 0.5  # without a message, this ends a multi-message reply ("silence")
WAITING_QUIET = 1.5  # the silence that ends a pull that waits (``expires`` 1 s)
SKIPPED = {"skipped": True}  # an ack with nothing to ack: no request was made

# The divergence the test suite injects into fakejs to prove the pipeline works:
# every STREAM.INFO reply gets an extra top-level field.
DEFAULT_INJECTION: dict[str, Any] = {
    "on": "api.reply",
    "match": {"subject": "$JS.API.STREAM.INFO.*"},
    "do": "rewrite",
    "args": {"set": {"injected": True}},
    "times": None,
    "name": "parity-injected",
}

# op -> (subject template, API subject pattern used for grouping, feature)
OPERATIONS: dict[str, tuple[str, str, str]] = {
    "stream.create": ("$JS.API.STREAM.CREATE.{stream}", "$JS.API.STREAM.CREATE.<stream>", "streams"),
    "stream.update": ("$JS.API.STREAM.UPDATE.{stream}", "$JS.API.STREAM.UPDATE.<stream>", "streams"),
    "stream.delete": ("$JS.API.STREAM.DELETE.{stream}", "$JS.API.STREAM.DELETE.<stream>", "streams"),
    "stream.info": ("$JS.API.STREAM.INFO.{stream}", "$JS.API.STREAM.INFO.<stream>", "streams"),
    "stream.names": ("$JS.API.STREAM.NAMES", "$JS.API.STREAM.NAMES", "streams"),
    "stream.list": ("$JS.API.STREAM.LIST", "$JS.API.STREAM.LIST", "streams"),
    "stream.purge": ("$JS.API.STREAM.PURGE.{stream}", "$JS.API.STREAM.PURGE.<stream>", "purge"),
    "msg.delete": ("$JS.API.STREAM.MSG.DELETE.{stream}", "$JS.API.STREAM.MSG.DELETE.<stream>", "messages"),
    "msg.get": ("$JS.API.STREAM.MSG.GET.{stream}", "$JS.API.STREAM.MSG.GET.<stream>", "messages"),
    "account.info": ("$JS.API.INFO", "$JS.API.INFO", "account"),
    "publish": ("{subject}", "<publish>", "publish"),
    "consumer.create": (
        "$JS.API.CONSUMER.CREATE.{stream}.{consumer}",
        "$JS.API.CONSUMER.CREATE.<stream>.<consumer>",
        "consumers",
    ),
    "consumer.info": (
        "$JS.API.CONSUMER.INFO.{stream}.{consumer}",
        "$JS.API.CONSUMER.INFO.<stream>.<consumer>",
        "consumers",
    ),
    "consumer.delete": (
        "$JS.API.CONSUMER.DELETE.{stream}.{consumer}",
        "$JS.API.CONSUMER.DELETE.<stream>.<consumer>",
        "consumers",
    ),
    "consumer.names": ("$JS.API.CONSUMER.NAMES.{stream}", "$JS.API.CONSUMER.NAMES.<stream>", "consumers"),
    "consumer.list": ("$JS.API.CONSUMER.LIST.{stream}", "$JS.API.CONSUMER.LIST.<stream>", "consumers"),
    "consumer.unpin": (
        "$JS.API.CONSUMER.UNPIN.{stream}.{consumer}",
        "$JS.API.CONSUMER.UNPIN.<stream>.<consumer>",
        "consumers",
    ),
    "fetch": (
        "$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}",
        "$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>",
        "fetch",
    ),
    "ack": ("$JS.ACK", "$JS.ACK.<stream>.<consumer>...", "acks"),
    "direct.get": ("$JS.API.DIRECT.GET.{stream}", "$JS.API.DIRECT.GET.<stream>", "direct get"),
    "direct.last": ("$JS.API.DIRECT.GET.{stream}.{subject}", "$JS.API.DIRECT.GET.<stream>.<subject>", "direct get"),
    "kv.create": ("$JS.API.STREAM.CREATE.{stream}", "$JS.API.STREAM.CREATE.<kv stream>", "kv"),
    "kv.put": ("{subject}", "$KV.<bucket>.<key> (put)", "kv"),
    "kv.delete": ("{subject}", "$KV.<bucket>.<key> (delete)", "kv"),
    "kv.purge": ("{subject}", "$KV.<bucket>.<key> (purge)", "kv"),
    "kv.get": ("$JS.API.DIRECT.GET.{stream}.{subject}", "$JS.API.DIRECT.GET.<kv stream>.<key>", "kv"),
    "atomic_batch": ("{subject}", "<atomic batch>", "atomic batches"),
    "fast_batch": ("{subject}", "<fast batch>", "fast batches"),
    "schedule": ("{subject}", "<schedule>", "schedules"),
    "priority_pulls": (
        "$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}",
        "$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer> (prioritized)",
        "priority",
    ),
    "ttl.settle": ("$JS.API.STREAM.INFO.{stream}", "<ttl expiry>", "ttl expiry"),
    "traced_publish": ("{subject}", "<traced publish>", "tracing"),
    "advisories": ("$JS.EVENT.ADVISORY.>", "$JS.EVENT.ADVISORY.>", "advisories"),
    "reload": ("<reload>", "<reload>", "reload"),
}
# Operations carried out on both servers together (wide.py), not by each client on its own.
TOGETHER = frozenset({"priority_pulls", "ttl.settle", "advisories", "reload"})
PUBLISHES = frozenset({"publish", "kv.put", "kv.delete", "kv.purge", "schedule"})
# Operations after which the real server may still be removing a stream's files (see ServerProcess.settle).
STORE_CHANGES = frozenset({"stream.create", "stream.update", "stream.delete", "kv.create"})
FEATURES = tuple(dict.fromkeys(feature for _, _, feature in OPERATIONS.values()))


def subject_of(op: Operation) -> str:
    """The subject the operation's request goes to (APP's API requests under the import's prefix)."""
    subject = OPERATIONS[op["op"]][0].format(**op)
    if op.get("account") == APP and subject.startswith("$JS.API."):
        subject = API_PREFIX + subject[len("$JS.API") :]
    return subject


def api_of(op: Operation) -> str:
    """The operation's API subject with names replaced (what divergences are grouped by)."""
    api = OPERATIONS[op["op"]][1]
    return f"{api} (import, {op.get('export')})" if op.get("account") == APP else api


def feature_of(op: Operation) -> str:
    return "imports" if op.get("account") == APP else OPERATIONS[op["op"]][2]


# ---------------------------------------------------------------------------- one client


@dataclass
class Session:
    """A client of one target, and what an ack needs: the last fetch's ack subjects."""

    nc: Client
    unacked: list[str] = field(default_factory=list)


def _message(msg: Msg) -> dict[str, Any]:
    return {"headers": normalize_headers(msg.headers), "data": payload_view(msg.data)}


async def request(
    nc: Client, subject: str, payload: bytes = b"", headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """One request; its reply as comparable data, or the kind of failure (no responders, timeout)."""
    try:
        msg = await nc.request(subject, payload, timeout=REQUEST_TIMEOUT, headers=headers)
    except Exception as exc:  # noqa: BLE001 - the kind of failure is what must match
        return {"failure": type(exc).__name__}
    reply: dict[str, Any] = jsonable(_message(msg))
    return reply


async def _collect(
    nc: Client, subject: str, payload: bytes, enough: int | None, quiet: float = QUIET
) -> list[Msg | str]:
    """Publish with a private inbox; what arrives until a status, ``enough`` messages, or silence."""
    inbox = nc.new_inbox()
    queue: asyncio.Queue[Msg] = asyncio.Queue()

    async def put(msg: Msg) -> None:
        queue.put_nowait(msg)

    sub = await nc.subscribe(inbox, cb=put)
    await nc.publish(subject, payload, reply=inbox)
    seen: list[Msg | str] = []
    delivered = 0
    while True:
        try:
            msg = await asyncio.wait_for(queue.get(), quiet)
        except TimeoutError:
            seen.append("silence")
            break
        seen.append(msg)
        if msg.headers and "Status" in msg.headers:
            break
        delivered += 1
        if enough is not None and delivered >= enough:
            break
    await sub.unsubscribe()
    return seen


async def fetch(session: Session, op: Operation) -> dict[str, Any]:
    """A no-wait pull of ``batch`` messages; remembers their ack subjects for later acks."""
    request = {"batch": op["batch"], "no_wait": True, **(op.get("extra") or {})}
    quiet = QUIET if request["no_wait"] else WAITING_QUIET  # a waiting pull: silence only after it ended
    seen = await _collect(session.nc, subject_of(op), json.dumps(request).encode(), op["batch"], quiet)
    items: list[Any] = []
    session.unacked = []
    for msg in seen:
        if isinstance(msg, str):
            items.append(msg)
            continue
        subject = "<inbox>" if msg.subject.startswith("_INBOX.") else msg.subject
        items.append([subject, ack_subject_shape(msg.reply), normalize_headers(msg.headers), text(msg.data)])
        if msg.reply:
            session.unacked.append(msg.reply)
    return {"items": items}


async def direct_get(session: Session, op: Operation) -> dict[str, Any]:
    """A Direct Get request; batches and multi_last answer with several messages and an EOB status."""
    body = op.get("body")
    payload = b"" if body is None else json.dumps(body).encode()
    many = isinstance(body, dict) and ((body.get("batch") or 0) > 0 or bool(body.get("multi_last")))
    seen = await _collect(session.nc, subject_of(op), payload, None if many else 1)
    return {"items": [m if isinstance(m, str) else jsonable(_message(m)) for m in seen]}


async def perform(session: Session, op: Operation) -> Any:
    """Carry out one operation as one client; the reply as JSON-able, comparable data."""
    kind = op["op"]
    if kind in PUBLISHES:
        return await request(session.nc, op["subject"], op["payload"].encode(), op.get("headers"))
    if kind == "fetch":
        return await fetch(session, op)
    if kind == "ack":
        if op["index"] >= len(session.unacked):
            return SKIPPED
        return await request(session.nc, session.unacked[op["index"]], op["payload"].encode())
    if kind == "direct.get":
        return await direct_get(session, op)
    if kind == "atomic_batch":
        return await batches.atomic_batch(session.nc, op, QUIET)
    if kind == "fast_batch":
        return await batches.fast_batch(session.nc, op, QUIET)
    if kind == "traced_publish":
        return await wide.traced_publish(session.nc, op, QUIET)
    body = op.get("body")
    payload = b"" if body is None else json.dumps(body).encode()
    return await request(session.nc, subject_of(op), payload, op.get("headers"))


# ---------------------------------------------------------------------------- the two servers


async def _quiet(_: Exception | None = None) -> None:
    """nats-py callbacks: a closed connection is reported through the replies, not logs."""


async def connect(url: str, name: str | None = None) -> Client:
    return await nats.connect(
        url, name=name, allow_reconnect=False, error_cb=_quiet, disconnected_cb=_quiet, closed_cb=_quiet
    )


@dataclass
class RunResult:
    """What running a sequence showed: how many operations ran, and the first divergence."""

    executed: int
    features: Counter[str]
    divergence: dict[str, Any] | None


class Pair:
    """fakejs and a real nats-server, a client to each, on the running loop."""

    def __init__(self, inject: dict[str, Any] | None = None, binary: str | None = None) -> None:
        self.inject = inject
        self.binary = binary
        self.fake: Server | None = None
        self.real: ServerProcess | None = None
        self.sessions: list[Session] = []
        self.feeding = False  # a fed stream or a schedule was seen: wait for both servers after each operation
        # The two-account configuration (the export's response type), or None for the plain servers.
        self.accounts: str | None = None
        self.configured: AccountServers | None = None
        self.app_sessions: list[Session] = []  # APP's clients (two-account pairs)
        self.watches: list[wide.AdvisoryWatch] = []
        # The clients that poll both servers in lockstep (named, so their API audits can be told apart).
        self.pollers: list[Client] = []
        self.reloaded = False  # a reload changed the configuration: the next sequence gets fresh servers

    async def start(self) -> Pair:
        self.feeding = self.reloaded = False
        try:
            if self.accounts is not None:
                await self._start_configured(self.accounts)
            else:
                self.fake = Server(port=0)
                await self.fake.start()
                self.real = ServerProcess(self.binary, pin_streams=True)
                await self.real.start_async()
                self.sessions = [Session(await connect(self.fake.url)), Session(await connect(self.real.url))]
                self.pollers = [await connect(self.fake.url, POLLER), await connect(self.real.url, POLLER)]
            if self.inject:
                assert self.fake is not None
                self.fake.control.add_fault(**self.inject)
        except BaseException:
            await self.stop()
            raise
        return self

    async def _start_configured(self, export: str) -> None:
        self.configured = AccountServers(export, self.binary)
        self.fake, self.real = self.configured.fake, self.configured.real
        await self.configured.start()
        self.sessions = [Session(await connect(url)) for url in self.configured.urls("js")]
        self.app_sessions = [Session(await connect(url)) for url in self.configured.urls("app")]
        self.pollers = [await connect(url, POLLER) for url in self.configured.urls("js")]

    async def configure(self, accounts: str | None) -> None:
        """Servers for a sequence that needs ``accounts`` (see :func:`~fakejs.parity.families.accounts_of`)."""
        if accounts != self.accounts or self.reloaded:
            self.accounts = accounts
            await self.restart()

    async def stop(self) -> None:
        for watch in self.watches:
            await watch.stop()
        self.watches = []
        for nc in [session.nc for session in self.sessions + self.app_sessions] + self.pollers:
            try:
                await nc.close()
            except Exception:  # noqa: BLE001, S110 - a connection its server dropped may fail to close; all is torn down
                pass
        self.sessions = []
        self.app_sessions = []
        self.pollers = []
        if self.configured is not None:
            await self.configured.stop()
            self.configured = self.fake = self.real = None
        if self.real is not None:
            await self.real.stop_async()
            self.real = None
        if self.fake is not None:
            await self.fake.stop()
            self.fake = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def reset(self) -> None:
        """Delete every stream on both servers (through the API, so both count the same requests)."""
        self.feeding = False
        for watch in self.watches:
            await watch.stop()
        self.watches = []
        for session in self.sessions + self.app_sessions:
            session.unacked = []
        for session in self.sessions:
            names = await request(session.nc, "$JS.API.STREAM.NAMES", b"{}")
            data = names.get("data")
            if not isinstance(data, dict):
                raise RuntimeError(f"cannot list streams: {names}")
            for name in data.get("streams") or []:
                await request(session.nc, f"$JS.API.STREAM.DELETE.{name}")
        if self.real is not None:
            await self.real.settle()

    async def __aenter__(self) -> Pair:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def both(self, op: Operation) -> tuple[Any, Any]:
        """The operation on both servers at once (each server still sees operations in order)."""
        if op["op"] in TOGETHER:
            return await self.together(op)
        fake, real = self.app_sessions if op.get("account") == APP and self.app_sessions else self.sessions
        replies = await asyncio.gather(perform(fake, op), perform(real, op))
        return replies[0], replies[1]

    async def together(self, op: Operation) -> tuple[Any, Any]:
        """An operation that needs both servers in step (:mod:`fakejs.parity.wide`)."""
        clients = [session.nc for session in self.sessions]
        kind = op["op"]
        if kind == "priority_pulls":
            replies = await wide.priority_pulls(clients, op, self.pollers)
        elif kind == "ttl.settle":
            replies = await wide.ttl_settle(self.pollers, op)
        elif kind == "advisories":
            replies = await wide.advisories(self.watches)
        elif self.configured is None:  # a reload without the configuration file: nothing to reload
            return SKIPPED, SKIPPED
        else:
            self.reloaded = True
            replies = list(await self.configured.reload(op["change"]))
            probes = [await _probe(url) for url in (*self.configured.urls("app"), *self.configured.urls("js"))]
            replies = [{**replies[0], "probes": probes[0::2]}, {**replies[1], "probes": probes[1::2]}]
        return replies[0], replies[1]

    async def step(self, op: Operation) -> tuple[Any, Any]:
        """:meth:`both`, then wait for what happens after the replies.

        The real server's store settles if the operation may have deleted
        files; once streams are fed by others (or schedules fire), both
        servers settle (:func:`fakejs.parity.feeds.settle`).
        """
        replies = await self.both(op)
        if op["op"] in STORE_CHANGES and self.real is not None:
            await self.real.settle()
        self.feeding = self.feeding or feeds.feeds_later(op)
        if self.feeding:
            await feeds.settle(self.pollers)
        return replies

    async def run(self, ops: list[Operation]) -> RunResult:
        """Run ``ops`` on both servers, stopping at the first divergence.

        A sequence that looks at advisories has them watched from its start.
        """
        features: Counter[str] = Counter()
        executed = 0
        if any(op["op"] == "advisories" for op in ops) and not self.watches:
            self.watches = [await wide.AdvisoryWatch(session.nc).start() for session in self.sessions]
        for index, op in enumerate(ops):
            real_session = (self.app_sessions if op.get("account") == APP and self.app_sessions else self.sessions)[1]
            subject = subject_of(op)
            if op["op"] == "ack" and op["index"] < len(real_session.unacked):
                subject = ack_subject_shape(real_session.unacked[op["index"]]) or subject
            fake, real = await self.step(op)
            if fake == SKIPPED and real == SKIPPED:
                continue
            executed += 1
            features[feature_of(op)] += 1
            if fake != real:
                return RunResult(executed, features, divergence(index, op, subject, fake, real))
        return RunResult(executed, features, None)


def divergence(index: int, op: Operation, subject: str, fake: Any, real: Any) -> dict[str, Any]:
    """A divergence record: where, what was sent, both replies, and how to group it."""
    real_code = status_code(real)
    fake_code = status_code(fake)
    return {
        "index": index,
        "op": op["op"],
        "subject": subject,
        "api": api_of(op),
        "feature": feature_of(op),
        "status_code": real_code if real_code is not None else fake_code,
        "fake_status_code": fake_code,
        "difference": first_difference(fake, real),
        "fake_reply": fake,
        "real_reply": real,
    }


def signature(found: dict[str, Any]) -> tuple[Any, ...]:
    """What must stay the same while shrinking: operation, API, both status codes, where the replies differ."""
    return (found["op"], found["api"], found["status_code"], found["fake_status_code"], found.get("difference"))


# ---------------------------------------------------------------------------- whole sequences


async def run_fresh(ops: list[Operation], inject: dict[str, Any] | None = None, binary: str | None = None) -> RunResult:
    """Run ``ops`` on brand-new servers (with the two-account configuration if they need it)."""
    pair = Pair(inject, binary)
    pair.accounts = accounts_of(ops)
    async with pair:
        return await pair.run(ops)


async def _probe(url: str) -> dict[str, Any]:
    """A new client after a reload: whether it connects, and the max_payload its INFO announces."""
    try:
        nc = await connect(url)
    except Exception as exc:  # noqa: BLE001 - a refused connection is the outcome compared
        return {"failure": type(exc).__name__}
    payload = nc.max_payload
    await nc.close()
    return {"max_payload": payload}
