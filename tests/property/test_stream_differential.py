"""Differential state machine: stream and consumer operations on fakejs and nats-server.

Hypothesis drives a :class:`RuleBasedStateMachine` whose every rule sends one
JetStream request -- stream create, update, publish with headers, purge,
delete, message get, info, list; consumer create, info, delete, no-wait
fetch, ack/nak/term -- to both servers and requires the two replies to be
equal once timestamps and server ids are normalised.  When the answers
differ, hypothesis shrinks the run to the shortest sequence of operations
that still shows it.

Both servers and their nats-py connections live on one event loop in a
background thread, shared by every example; each example starts by deleting
every stream so examples never see each other's state.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any, Coroutine

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from nats.aio.client import Client
import nats

from tests.harness.js import normalize
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON, Target, start_target, stop_target

pytestmark = [pytest.mark.slow, pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON or "")]

NAMES = ["S1", "S2", "S3"]
CONSUMERS = ["C1", "C2"]
SUBJECT_SETS = [["a"], ["a.*"], ["a.>"], ["b", "c"], ["c.>"], ["a", "b"], ["d.*.x"]]
PUBLISH_SUBJECTS = ["a", "a.1", "a.2", "a.1.2", "b", "c", "c.1", "d.1.x", "d.2.x", "e"]
EXAMPLES = int(os.environ.get("FAKEJS_FUZZ_EXAMPLES", "25"))


class _Pair:
    """Both servers and a client to each, on a private event loop thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="differential-loop", daemon=True)
        self.thread.start()
        self.targets: list[Target] = []
        self.clients: list[Client] = []
        self.run(self._start())

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _start(self) -> None:
        for kind in ("fake", "real"):
            target = await start_target(kind)
            self.targets.append(target)
            self.clients.append(await nats.connect(target.url))

    async def _stop(self) -> None:
        for client in self.clients:
            await client.close()
        for target in self.targets:
            await stop_target(target)

    def close(self) -> None:
        self.run(self._stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


_pair: _Pair | None = None


def pair() -> _Pair:
    global _pair
    if _pair is None:
        _pair = _Pair()
    return _pair


@pytest.fixture(scope="module", autouse=True)
def _close_pair():
    yield
    global _pair
    if _pair is not None:
        _pair.close()
        _pair = None


async def _request(nc: Client, subject: str, body: Any, headers: dict[str, str] | None = None) -> Any:
    """One request; the reply as comparable data (or the kind of failure)."""
    payload = body if isinstance(body, bytes) else (b"" if body is None else json.dumps(body).encode())
    try:
        msg = await nc.request(subject, payload, timeout=2, headers=headers)
    except Exception as exc:  # no responders, timeout: the kind is what must match
        return {"failure": type(exc).__name__}
    try:
        data: Any = normalize(json.loads(msg.data)) if msg.data else msg.data
    except ValueError:
        data = msg.data
    return {"headers": msg.headers, "data": data}


# ---------------------------------------------------------------- strategies


@st.composite
def stream_configs(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {"name": draw(st.sampled_from(NAMES)), "subjects": draw(st.sampled_from(SUBJECT_SETS))}
    optional = {
        "storage": st.sampled_from(["memory", "file"]),
        "retention": st.sampled_from(["limits", "interest", "workqueue"]),
        "max_msgs": st.sampled_from([-1, 0, 1, 3, 10]),
        "max_bytes": st.sampled_from([-1, 100, 200, 1000]),
        "max_msgs_per_subject": st.sampled_from([-1, 1, 2]),
        "max_msg_size": st.sampled_from([-1, 5, 64]),
        "discard": st.sampled_from(["old", "new"]),
        "discard_new_per_subject": st.booleans(),
        "allow_rollup_hdrs": st.booleans(),
        "deny_delete": st.booleans(),
        "deny_purge": st.booleans(),
        "allow_msg_ttl": st.booleans(),
        "duplicate_window": st.sampled_from([0, 10**9, 120 * 10**9]),
        "max_consumers": st.sampled_from([-1, 1]),
        "sealed": st.booleans(),
        "no_ack": st.booleans(),
        "allow_direct": st.booleans(),
    }
    for key, values in optional.items():
        if draw(st.integers(0, 4)) == 0:
            config[key] = draw(values)
    return config


@st.composite
def publish_headers(draw: st.DrawFn) -> dict[str, str] | None:
    choices = {
        "Nats-Msg-Id": st.sampled_from(["m1", "m2", "m3"]),
        "Nats-Expected-Stream": st.sampled_from(NAMES + ["X"]),
        "Nats-Expected-Last-Sequence": st.sampled_from(["0", "1", "2", "5", "x"]),
        "Nats-Expected-Last-Subject-Sequence": st.sampled_from(["0", "1", "3"]),
        "Nats-Expected-Last-Msg-Id": st.sampled_from(["m1", "m2", ""]),
        "Nats-Rollup": st.sampled_from(["sub", "all", "bad"]),
        "Nats-TTL": st.sampled_from(["1h", "never", "0s", "x", "30m"]),
    }
    headers = {}
    for key, values in choices.items():
        if draw(st.integers(0, 5)) == 0:
            headers[key] = draw(values)
    return headers or None


sequences = st.sampled_from([0, 1, 2, 3, 5, 8])


@st.composite
def consumer_configs(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {"durable_name": draw(st.sampled_from(CONSUMERS))}
    optional = {
        "ack_policy": st.sampled_from(["explicit", "none", "all"]),
        "deliver_policy": st.sampled_from(["all", "last", "new", "last_per_subject"]),
        "filter_subject": st.sampled_from(["a", "a.*", ">", "c.1", "b"]),
        "max_ack_pending": st.sampled_from([-1, 1, 2]),
        "max_deliver": st.sampled_from([-1, 1, 2]),
        "deliver_subject": st.just("push.x"),
        "max_waiting": st.sampled_from([1, 512]),
    }
    for key, values in optional.items():
        if draw(st.integers(0, 3)) == 0:
            config[key] = draw(values)
    return config


def _ack_subject_shape(reply: str | None) -> str | None:
    """An ack reply subject with its timestamp token replaced (the only part that differs)."""
    if reply and reply.startswith("$JS.ACK."):
        tokens = reply.split(".")
        if len(tokens) == 9:
            tokens[7] = "<ts>"
        return ".".join(tokens)
    return reply


async def _fetch(nc: Client, stream: str, consumer: str, batch: int) -> tuple[list[Any], list[str]]:
    """A no-wait pull: what arrived (comparable) and the ack subjects received."""
    inbox = nc.new_inbox()
    queue: asyncio.Queue = asyncio.Queue()
    sub = await nc.subscribe(inbox, cb=queue.put)
    body = json.dumps({"batch": batch, "no_wait": True}).encode()
    await nc.publish(f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", body, reply=inbox)
    seen: list[Any] = []
    replies: list[str] = []
    while True:
        try:
            msg = await asyncio.wait_for(queue.get(), 1.0)
        except asyncio.TimeoutError:
            seen.append("silence")
            break
        headers = dict(msg.headers or {})
        subject = "<inbox>" if msg.subject == inbox else msg.subject
        seen.append((subject, _ack_subject_shape(msg.reply), headers, msg.data))
        if "Status" in headers:
            break
        replies.append(msg.reply)
        if len(replies) == batch:
            break
    await sub.unsubscribe()
    return seen, replies


# ---------------------------------------------------------------- machine


class StreamMachine(RuleBasedStateMachine):
    """Every rule: one request to each server, equal normalised replies."""

    def same(self, subject: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        p = pair()

        async def both() -> list[Any]:
            return [await _request(nc, subject, body, headers) for nc in p.clients]

        fake, real = p.run(both())
        assert fake == real, f"{subject} {body!r} {headers!r}\nfake: {fake}\nreal: {real}"
        return real

    @initialize()
    def clean(self) -> None:
        p = pair()

        async def wipe() -> None:
            for nc in p.clients:
                names = await _request(nc, "$JS.API.STREAM.NAMES", {})
                for name in names["data"].get("streams") or []:
                    await _request(nc, f"$JS.API.STREAM.DELETE.{name}", None)

        p.run(wipe())

    @rule(config=stream_configs())
    def create(self, config: dict[str, Any]) -> None:
        self.same(f"$JS.API.STREAM.CREATE.{config['name']}", config)

    @rule(config=stream_configs())
    def update(self, config: dict[str, Any]) -> None:
        self.same(f"$JS.API.STREAM.UPDATE.{config['name']}", config)

    @rule(name=st.sampled_from(NAMES))
    def delete(self, name: str) -> None:
        self.same(f"$JS.API.STREAM.DELETE.{name}")

    @rule(subject=st.sampled_from(PUBLISH_SUBJECTS), size=st.sampled_from([0, 1, 10, 50]), headers=publish_headers())
    def publish(self, subject: str, size: int, headers: dict[str, str] | None) -> None:
        self.same(subject, b"x" * size, headers)

    @rule(subject=st.sampled_from(PUBLISH_SUBJECTS), count=st.integers(2, 6))
    def publish_many(self, subject: str, count: int) -> None:
        for i in range(count):
            self.same(subject, str(i).encode())

    @rule(
        name=st.sampled_from(NAMES),
        filter_=st.sampled_from([None, "a", "a.*", "b", "c.>", ">"]),
        seq=st.none() | sequences,
        keep=st.none() | st.sampled_from([0, 1, 2]),
    )
    def purge(self, name: str, filter_: str | None, seq: int | None, keep: int | None) -> None:
        body: dict[str, Any] = {}
        if filter_ is not None:
            body["filter"] = filter_
        if seq is not None:
            body["seq"] = seq
        if keep is not None:
            body["keep"] = keep
        self.same(f"$JS.API.STREAM.PURGE.{name}", body or None)

    @rule(name=st.sampled_from(NAMES), seq=sequences, no_erase=st.booleans())
    def delete_message(self, name: str, seq: int, no_erase: bool) -> None:
        body: dict[str, Any] = {"seq": seq}
        if no_erase:
            body["no_erase"] = True
        self.same(f"$JS.API.STREAM.MSG.DELETE.{name}", body)

    @rule(
        name=st.sampled_from(NAMES),
        how=st.sampled_from(["seq", "last_by_subj", "next_by_subj"]),
        seq=sequences,
        subject=st.sampled_from(PUBLISH_SUBJECTS + ["a.*", ">"]),
    )
    def get_message(self, name: str, how: str, seq: int, subject: str) -> None:
        body: dict[str, Any] = {"seq": seq} if how == "seq" else {"last_by_subj": subject}
        if how == "next_by_subj":
            body = {"seq": seq, "next_by_subj": subject}
        self.same(f"$JS.API.STREAM.MSG.GET.{name}", body)

    @rule(name=st.sampled_from(NAMES), subjects_filter=st.sampled_from([None, ">", "a.*", "c"]), deleted=st.booleans())
    def info(self, name: str, subjects_filter: str | None, deleted: bool) -> None:
        body: dict[str, Any] = {}
        if subjects_filter:
            body["subjects_filter"] = subjects_filter
        if deleted:
            body["deleted_details"] = True
        self.same(f"$JS.API.STREAM.INFO.{name}", body or None)

    @rule(subject=st.sampled_from([None, "a", "b", "c.1"]))
    def names_and_list(self, subject: str | None) -> None:
        body = {"subject": subject} if subject else {}
        self.same("$JS.API.STREAM.NAMES", body)
        self.same("$JS.API.STREAM.LIST", body)

    # -- consumers ------------------------------------------------------------

    @rule(stream=st.sampled_from(NAMES), config=consumer_configs())
    def create_consumer(self, stream: str, config: dict[str, Any]) -> None:
        body = {"stream_name": stream, "config": config}
        self.same(f"$JS.API.CONSUMER.CREATE.{stream}.{config['durable_name']}", body)

    @rule(stream=st.sampled_from(NAMES), name=st.sampled_from(CONSUMERS))
    def consumer_info(self, stream: str, name: str) -> None:
        self.same(f"$JS.API.CONSUMER.INFO.{stream}.{name}")

    @rule(stream=st.sampled_from(NAMES), name=st.sampled_from(CONSUMERS))
    def delete_consumer(self, stream: str, name: str) -> None:
        self.same(f"$JS.API.CONSUMER.DELETE.{stream}.{name}")

    @rule(stream=st.sampled_from(NAMES), name=st.sampled_from(CONSUMERS), batch=st.integers(1, 4))
    def fetch(self, stream: str, name: str, batch: int) -> None:
        p = pair()

        async def both() -> list[tuple[list[Any], list[str]]]:
            return [await _fetch(nc, stream, name, batch) for nc in p.clients]

        (fake, fake_replies), (real, real_replies) = p.run(both())
        assert fake == real, f"fetch {stream}.{name} batch {batch}\nfake: {fake}\nreal: {real}"
        self.unacked = [fake_replies, real_replies]

    @rule(index=st.integers(0, 3), payload=st.sampled_from([b"+ACK", b"", b"-NAK", b"+TERM", b"+WPI"]))
    def ack(self, index: int, payload: bytes) -> None:
        unacked = getattr(self, "unacked", [[], []])
        if index >= len(unacked[1]):
            return
        p = pair()

        async def both() -> list[Any]:
            return [await _request(nc, replies[index], payload) for nc, replies in zip(p.clients, unacked)]

        fake, real = p.run(both())
        assert fake == real, f"ack {payload!r}\nfake: {fake}\nreal: {real}"

    @invariant()
    def account_usage_agrees(self) -> None:
        self.same("$JS.API.INFO")


StreamMachine.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_stream_operations_agree = StreamMachine.TestCase
