"""The link between a stream and one stream it mirrors or sources from.

nats-server does everything through its own API, even on a single server:
the target stream sends a ``CONSUMER.CREATE`` request for an ephemeral
push consumer on the origin (``direct`` and ``sourcing``, no acks, flow
control, 1 s heartbeats, 10 s inactivity threshold), receives the
deliveries on an internal subscription to ``$JS.M.<token>`` /
``$JS.S.<token>`` made once the create reply is in (so the reply shows no
``push_bound``) and reads the origin's sequence, timestamp and pending
count from the ``$JS.ACK`` reply subject.  A :class:`Feed` is that link;
what to do with each message is its owner's business (:class:`FeedOwner`).

A durable sourcing consumer (``consumer: {name, deliver_subject}``, 2.14)
is made beforehand on the origin with ``ack_policy: flow_control``: the
feed only resets it to its ack floor (``CONSUMER.RESET``, an answer awaited
5 s), refuses it with another ack policy, and subscribes to its deliver
subject; each flow control answer acks what was stored, so a work-queue or
interest origin is consumed.  When the reset got no answer (no such
consumer), the deliver subject is watched while backing off: anything
arriving there means the consumer is back and the reset is tried at once.

Everything here runs on the server clock: the throttle between two
consumer requests (2 s), the back-off after failures (10 s per failure, at
most 2 minutes, plus 100-200 ms of jitter), the wait for an answer (30 s)
and the health check every 10 s that recreates a stalled consumer.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.router import Router, Subscription
from fakejs.core.subject_transform import SubjectTransform
from fakejs.gocompat.gotime import NS
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.internal_client import InternalClient
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.direct import DirectHost
from fakejs.protocol import headers as hdrs

RETRY_THRESHOLD = 2.0  # seconds between two consumer requests (sourceConsumerRetryThreshold)
RETRY_BACKOFF = 5.0  # seconds, times twice the failures (retryBackOff)
RETRY_MAXIMUM = 120.0  # seconds (retryMaximum)
HEALTH_CHECK = 10.0  # seconds (sourceHealthCheckInterval): also the consumers' inactive threshold
ANSWER_WAIT = 30.0  # seconds to wait for the consumer create answer (srcConsumerWaitTime)
DURABLE_ANSWER_WAIT = 5.0  # seconds to wait for a durable's reset answer (srcDurableConsumerWaitTime)
TOKEN_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
LAST_CONSUMER = "Nats-Last-Consumer"
LAST_STREAM = "Nats-Last-Stream"
CONSUMER_STALLED = "Nats-Consumer-Stalled"
STREAM_IDENTITY = "Nats-Stream-Identity"
REQUIRED_LEVEL = "Nats-Required-Api-Level"


def retry_backoff(fails: int) -> float:
    """``calculateRetryBackoff``: seconds to wait after ``fails`` failures."""
    return min(RETRY_BACKOFF * fails * 2, RETRY_MAXIMUM)


@dataclass(frozen=True)
class Delivery:
    """What the ``$JS.ACK`` reply subject of a delivery says (``consumer`` empty when it is not one)."""

    consumer: str
    delivered: int
    stream_seq: int
    consumer_seq: int
    ts: int
    pending: int


def parse_ack_reply(reply: str) -> Delivery:
    """``ackReplyInfo`` and ``consumerFromAckReply`` in one (v1: 9 tokens, v2: 12 or more)."""
    tokens = reply.split(".")
    if len(tokens) == 9:
        offset = 2
    elif len(tokens) >= 12:
        offset = 4
    else:
        return Delivery("", 0, 0, 0, 0, 0)
    if tokens[0] != "$JS" or tokens[1] != "ACK":
        return Delivery("", 0, 0, 0, 0, 0)
    try:
        numbers = [int(token) for token in tokens[offset + 2 : offset + 7]]
    except ValueError:
        return Delivery("", 0, 0, 0, 0, 0)
    return Delivery(tokens[offset + 1], *numbers)


@dataclass(frozen=True)
class Durable:
    """A durable sourcing consumer: its name and deliver subject, and the error for a wrong ack policy."""

    name: str
    deliver_subject: str
    wrong_ack_policy: str  # JSMirrorConsumerRequiresAckFCErr / JSSourceConsumerRequiresAckFCErr


class FeedHost(DirectHost, Protocol):
    """The target stream's JetStream: its account's router, the server clock and generator."""

    @property
    def router(self) -> Router: ...

    @property
    def account_name(self) -> str: ...

    @property
    def domain(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random: ...

    def account_client(self) -> InternalClient:
        """The account's internal client: it asks an origin to delete a consumer."""
        ...


class FeedOwner(Protocol):
    """The mirror or source a feed works for."""

    def request(self, first: bool) -> tuple[str, dict[str, Any] | None, list[tuple[str, str]]]:
        """The ``CONSUMER.CREATE`` (or durable's ``CONSUMER.RESET``: no body) subject, body and headers."""
        ...

    def refused(self, error: dict[str, Any]) -> bool:
        """An error answer to take as a reason to start over at once (no failure counted)."""
        ...

    def created(self, info: dict[str, Any], identity: str) -> bool:
        """The consumer exists (its info); False to give up on it (retried later)."""
        ...

    def message(self, subject: str, hdr: bytes | None, payload: bytes, delivery: Delivery) -> bool:
        """A message from the origin; False when it asked for a retry."""
        ...


class Feed:
    """One origin's consumer: its setup, retries, health, flow control and info."""

    def __init__(
        self,
        js: FeedHost,
        owner: FeedOwner,
        deliver_prefix: str,
        api_prefix: str = "",
        durable: Durable | None = None,
        client: Callable[[], InternalClient] | None = None,
    ) -> None:
        self.js = js
        self.client = client  # the target stream's internal client: it sends the consumer requests
        self.owner = owner
        self.durable = durable
        self.deliver_prefix = deliver_prefix
        self.api_prefix = api_prefix  # ``external.api`` replacing ``$JS.API``
        self.consumer = ""  # the origin consumer's name once created
        self.stream_seq = 0  # the origin's last sequence handled (sseq)
        # The origin sequence of the last message this feed stored: a source's ``seq`` in STREAM.INFO
        # (nothing stored yet, or only messages the stream dropped, and nats-server shows none).
        self.stored_seq = 0
        self.requested = False  # a setup request went out: a mirror's info shows its filters from then on
        self.consumer_seq = 0  # the consumer's last delivery sequence handled (dseq)
        self.lag = 0
        self.error: dict[str, Any] | None = None
        self.last_contact = 0  # server clock ns of the last message from the origin
        self.fails = 0
        self.last_request = -1.0  # monotonic seconds of the last consumer request
        self.in_progress = False
        self.closed = False
        self._deliveries: Subscription | None = None
        self.listening = False  # set before subscribing: a durable may deliver at once
        self._answers: Subscription | None = None
        self._timers: dict[str, TimerHandle] = {}

    # -- timers ------------------------------------------------------------------------------

    def _later(self, key: str, delay: float, action: Callable[[], None]) -> None:
        self._cancel(key)

        def fire() -> None:
            self._timers.pop(key, None)
            if not self.closed:
                action()

        self._timers[key] = self.js.clock.call_later(delay, fire)

    def _cancel(self, key: str) -> None:
        timer = self._timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def _jitter(self) -> float:
        return 0.1 + self.js.rng.randrange(100_000_000) / NS

    # -- setup and retries -------------------------------------------------------------------

    def start(self, delay: bool) -> None:
        """Set the consumer up: soon (a mirror), or after the jitter (a source)."""
        # Even a mirror's first request goes out after the reply to the request that made the stream.
        self._later("setup", self._jitter() if delay else 0.0, self.setup)

    def schedule_retry(self) -> None:
        """``scheduleSetupMirrorConsumerRetry``: the throttle left, the back-off, the jitter."""
        wait = 0.0
        if self.last_request >= 0:
            wait = max(0.0, RETRY_THRESHOLD - (self.js.clock.monotonic() - self.last_request))
        wait += retry_backoff(self.fails) + self._jitter()
        self._later("setup", wait, self.setup)

    def retry(self) -> None:
        """Drop the consumer and set it up again (a gap, a stall, a refused message)."""
        self.cancel()
        self.schedule_retry() if self._throttled() else self.setup()

    def _throttled(self) -> bool:
        clock = self.js.clock
        return self.in_progress or (self.last_request >= 0 and clock.monotonic() - self.last_request < RETRY_THRESHOLD)

    def setup(self) -> None:
        if self.closed:
            return
        if self._throttled():
            self.schedule_retry()
            return
        self.cancel()
        self.last_request = self.js.clock.monotonic()
        self.requested = True
        subject, body, headers = self.owner.request(self.consumer == "" and self.stream_seq == 0)
        router = self.js.router
        payload = b""
        if body is not None:
            deliver = f"{self.deliver_prefix}.{self._token()}".replace("..", ".")
            body["config"]["deliver_subject"] = deliver
            payload = json.dumps(body, separators=(",", ":")).encode()
        subject = self._through_api(subject)
        reply = f"$JSC.R.{self._token()}"
        self.in_progress = True
        self.error = None
        self._answers = router.subscribe_internal(reply, self._on_answer)
        self._later("answer", DURABLE_ANSWER_WAIT if self.durable else ANSWER_WAIT, self._no_answer)
        if router.mapped(subject) != subject:
            # nats-server sends this request without the account's subject mappings: an
            # ``external`` API prefix naming the server's own domain reaches nobody, and the
            # answer wait runs out.
            return
        router.publish(subject, reply, hdrs.build(headers), payload, self.client() if self.client else None)

    def _through_api(self, subject: str) -> str:
        """An API subject as sent to the origin: ``external.api`` in place of ``$JS.API``."""
        if not self.api_prefix:
            return subject
        return subject.replace("$JS.API", self.api_prefix, 1).replace("..", ".")

    def _token(self) -> str:
        rng = self.js.rng
        return "".join(rng.choice(TOKEN_ALPHABET) for _ in range(8))

    def _on_answer(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        self._unsubscribe_answers()
        self._cancel("answer")
        self.in_progress = False
        try:
            answer = json.loads(payload)
        except ValueError:
            answer = {"error": {"code": 500, "err_code": 10025, "description": "invalid JSON"}}
        info = answer.get("config") and answer
        if not info or "error" in answer:
            self.error = answer.get("error") or {
                "code": 500,
                "err_code": 10029,
                "description": "invalid consumer create response",
            }
            if self.owner.refused(self.error):
                self.error = None  # started over at once, nothing shown
                self.cancel()
                self.schedule_retry()
            else:
                self._failed()
            return
        if self.durable is not None and info["config"].get("ack_policy") != "flow_control":
            self.error = api_error(self.durable.wrong_ack_policy).to_dict()
            self._failed()
            return
        identity = (hdrs.get(hdr, STREAM_IDENTITY) or b"").decode()
        if not self.owner.created(info, identity):
            self._failed()
            return
        self.fails = 0
        self.consumer = info["name"]
        self.consumer_seq = 0
        self.last_contact = self.js.clock.time_ns()
        self._later("health", HEALTH_CHECK, self._health)
        # Subscribed last, as nats-server: the consumer delivers as soon as someone listens, so its create
        # reply shows no ``push_bound``.
        deliver = self.durable.deliver_subject if self.durable is not None else info["config"]["deliver_subject"]
        self.listening = True
        self._deliveries = self.js.router.subscribe_internal(deliver, self._on_delivery)

    def _no_answer(self) -> None:
        self.in_progress = False
        self._failed()
        if self.durable is not None:
            self.listening = True
            self._deliveries = self.js.router.subscribe_internal(self.durable.deliver_subject, self._on_probe)

    def _on_probe(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        """``startProbeSubscription``: the durable speaks again, so the back-off is over."""
        if not self.listening or self.in_progress or self.fails == 0:
            return
        self.fails = 0
        self.schedule_retry()

    def _failed(self) -> None:
        self.fails += 1
        self.cancel()
        self.schedule_retry()

    def _health(self) -> None:
        """Every 10 s: no word from the origin for that long means the consumer is gone."""
        if self.js.clock.time_ns() - self.last_contact > HEALTH_CHECK * NS:
            self.retry()
        else:
            self._later("health", HEALTH_CHECK, self._health)

    # -- deliveries --------------------------------------------------------------------------

    def _on_delivery(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        if self.closed or not self.listening:
            return
        self.last_contact = self.js.clock.time_ns()
        if hdr and not payload and hdrs.status(hdr)[0] == 100:
            self._control(reply, hdr)
            return
        delivery = parse_ack_reply(reply)
        if delivery.consumer != self.consumer or delivery.delivered > 1:
            return
        if delivery.stream_seq <= self.stream_seq:
            if delivery.consumer_seq == self.consumer_seq + 1:
                self.consumer_seq += 1
            return
        self.lag = max(delivery.pending - 1, 0)
        self.owner.message(subject, hdr, payload, delivery)

    def _control(self, reply: str, hdr: bytes) -> None:
        """Flow control gets the sequences handled; a heartbeat reveals a missed delivery."""
        router = self.js.router
        if reply:
            answer = hdrs.build([(LAST_CONSUMER, str(self.consumer_seq)), (LAST_STREAM, str(self.stream_seq))])
            router.publish(reply, "", answer, b"", None)
            return
        last = hdrs.get(hdr, LAST_CONSUMER)
        if last and last.isdigit() and int(last) > 0 and int(last) != self.consumer_seq:
            self.retry()
            return
        stalled = hdrs.get(hdr, CONSUMER_STALLED)
        if stalled:
            router.publish(stalled.decode(), "", None, b"", None)

    # -- the owner's accounting ----------------------------------------------------------------

    def advance(self, delivery: Delivery) -> None:
        self.consumer_seq = delivery.consumer_seq
        self.stream_seq = delivery.stream_seq

    # -- stopping ----------------------------------------------------------------------------

    def _unsubscribe_answers(self) -> None:
        if self._answers is not None:
            self.js.router.unsubscribe(self._answers)
            self._answers = None

    def cancel(self) -> None:
        """``cancelSourceInfo``: no more deliveries; an ephemeral consumer on the origin times out, a durable stays."""
        self.listening = False
        if self._deliveries is not None:
            self.js.router.unsubscribe(self._deliveries)
            self._deliveries = None
        self._unsubscribe_answers()
        self.consumer = ""
        for key in ("health", "answer"):
            self._cancel(key)

    def close(self, origin: str = "", consumer: str = "") -> None:
        """Stop; with a ``consumer`` name, also ask ``origin`` to delete it (the link was removed).

        ``tryDeleteSourcingConsumer``: one best-effort request, named as the
        consumer was asked for -- so nats-server's answer is "consumer not
        found" for the renamed one of a limits origin, and the visible durable
        of a work-queue origin goes.  A durable the user made is never deleted.
        """
        self.cancel()
        self._cancel("setup")
        self.closed = True
        if consumer and self.durable is None:
            self._delete_consumer(origin, consumer)

    def _delete_consumer(self, origin: str, consumer: str) -> None:
        router = self.js.router
        subject = self._through_api(f"$JS.API.CONSUMER.DELETE.{origin}.{consumer}")
        reply = f"$JSC.R.{self._token()}"
        answer: list[Subscription] = []

        def done(*_: object) -> None:
            if answer:
                router.unsubscribe(answer.pop())

        answer.append(router.subscribe_internal(reply, done))
        self.js.clock.call_later(ANSWER_WAIT, done)
        router.publish(subject, reply, None, b"", self.js.account_client())

    # -- info --------------------------------------------------------------------------------

    def active_ns(self) -> int:
        """Nanoseconds since the origin was last heard from, -1 never."""
        if not self.last_contact:
            return -1
        return max(self.js.clock.time_ns() - self.last_contact, 0)


class FedStream(Protocol):
    """The target stream as its mirror or sources see it."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> StreamConfig: ...

    @property
    def store(self) -> MessageStore: ...

    @property
    def js(self) -> FeedHost: ...

    def internal_client(self) -> InternalClient:
        """The stream's own internal client (numbered on first use)."""
        ...

    @property
    def mirrored_last_seq(self) -> int:
        """The mirror's last sequence, stored or on its way to the store."""
        ...

    def skip_mirrored(self, next_seq: int) -> None:
        """The origin has nothing before ``next_seq``: the mirror's sequences go on from there."""
        ...

    def store_mirrored(self, subject: str, hdr: bytes | None, payload: bytes, seq: int, ts: int) -> bool:
        """Store the origin's message ``seq`` as ``seq``; False when the sequences no longer line up."""
        ...

    def store_sourced(self, subject: str, hdr: bytes | None, payload: bytes) -> bool:
        """Store a sourced message as if published (raises the ``ApiError`` a PubAck would carry); whether stored."""
        ...


def strip_headers(hdr: bytes | None, *names: str) -> bytes | None:
    """The origin's headers without ``Nats-Expected-*`` and ``Nats-Batch-*`` (and ``names``)."""
    if not hdr:
        return hdr
    for key, _ in hdrs.pairs(hdr):
        if key.startswith(("Nats-Expected-", "Nats-Batch-")) or key in names:
            hdr = hdrs.remove(hdr, key) if hdr else hdr
    return hdr or None


def transforms_of(source: dict[str, Any], rng: random.Random) -> list[tuple[str, SubjectTransform | None]]:
    """A mirror's or source's ``subject_transforms`` as (source filter, transform) pairs."""
    out: list[tuple[str, SubjectTransform | None]] = []
    for spec in source.get("subject_transforms") or []:
        src, dest = spec.get("src", ""), spec.get("dest", "")
        out.append((src, SubjectTransform.parse(src or ">", dest, rng=rng) if dest else None))
    return out


def transformed(subject: str, transforms: list[tuple[str, SubjectTransform | None]]) -> str:
    for _, transform in transforms:
        if transform is not None:
            mapped = transform.match(subject)
            if mapped is not None:
                return mapped
    return subject
