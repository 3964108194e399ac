"""Push flow control and idle heartbeats, as nats-server sends them.

Clients such as nats-py's ``js.subscribe`` and ordered consumers depend on
these rules:

* **Flow control** (``flow_control: true``): every delivery adds
  ``len(deliver subject) + len(ack reply) + len(headers) + len(payload)`` to
  the pending bytes.  The delivery that takes them past half the window is
  followed by ``100 FlowControl Request`` with a reply on
  ``$JS.FC.<stream>.<consumer>.<4 chars>``; delivery stops while the bytes
  exceed the window.  An answer on the latest request subtracts what was
  pending when it went out and doubles the window (2 MiB up to 32 MiB).
  With ``ack_policy: flow_control`` the answer's ``Nats-Last-Consumer`` /
  ``Nats-Last-Stream`` headers also ack up to those sequences.
* **Idle heartbeats**: ``100 Idle Heartbeat`` once per ``idle_heartbeat`` of
  idleness while someone listens (paused consumers included), naming the
  unanswered flow-control subject in ``Nats-Consumer-Stalled``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from fakejs.core.clock import Clock, Countdown
from fakejs.core.hooks import Hooks
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.gocompat import ids
from fakejs.gocompat.gotime import NS
from fakejs.jetstream import status
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.consumer.view import ConsumerName, ConsumerView, Publish, Reply
from fakejs.protocol import headers as hdrs

FLOW_CONTROL_MAX_PENDING = 32 * 1024 * 1024


def _int64(value: bytes | None) -> int:
    if value and value.isdigit() and value.isascii():
        return int(value)
    return -1


class PushFlow:
    """The flow-control window and the idle-heartbeat timer of a push consumer.

    ``publish`` sends the flow-control request, ``reply`` the heartbeats;
    ``ack_through(stream_sequence, consumer_sequence)`` acks what a flow-control answer confirms
    (``ack_policy: flow_control``); ``holding`` tells whether a paced
    delivery blocks the loop (no heartbeat then).
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        hooks: Hooks,
        name: ConsumerName,
        rng: random.Random,
        publish: Publish,
        reply: Reply,
        ack_through: Callable[[int, int], object],
        holding: Callable[[], bool],
        recorder: Recorder = NO_RECORDER,
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._hooks = hooks
        self._name = name
        self._random = rng
        self._publish = publish
        self._reply = reply
        self._ack_through = ack_through
        self._holding = holding
        self._recorder = recorder  # the server's timeline (see fakejs.core.recorder)
        self.subject_prefix = f"$JS.FC.{name.stream}.{name.consumer}"
        # The names nats-server gives these: pblimit, maxpb, pbytes, fcid and fcsz.
        self.window_limit = FLOW_CONTROL_MAX_PENDING if consumer.config["flow_control"] else 0
        self.window = self.window_limit // 16  # the window: 2 MiB, doubling up to window_limit
        self.pending_bytes = 0  # bytes delivered since the last answered request
        self.request_reply = ""  # the outstanding request's reply subject
        self.pending_at_request = 0  # pending_bytes when that request went out
        # An update may not turn a push consumer into a pull one or back, so this holds for good.
        self._is_push = consumerconfig.is_push(consumer.config)
        self._idle = Countdown(clock, self._heartbeat_due)  # from the last delivery, idle_heartbeat long

    # -- flow control ---------------------------------------------------------------

    @property
    def stalled(self) -> bool:
        """The window is full: push delivery waits for an answer."""
        return self.window > 0 and self.pending_bytes > self.window

    def count(self, size: int) -> None:
        """A delivery of ``size`` bytes is about to go out."""
        if self.window > 0:
            self.pending_bytes += size

    def after_delivery(self, size: int) -> None:
        """``needFlowControl`` after a delivery of ``size`` bytes went out."""
        if self.window == 0 or not self._is_push:
            return
        if not self.request_reply:
            wanted = self.pending_bytes > self.window // 2
            config = self._consumer.config
            if not wanted and config["ack_policy"] == "flow_control":
                max_ack_pending = max(config["max_ack_pending"], 0)
                wanted = max_ack_pending > 0 and self._consumer.num_ack_pending >= max_ack_pending
            if wanted:
                self.send_request()
        elif self.pending_bytes - self.pending_at_request >= self.window:
            self.pending_at_request += size

    def send_request(self) -> None:
        """``100 FlowControl Request`` on the deliver subject; its reply subject is the new ``request_reply``."""
        if not self._is_push:
            return
        token = ids.token(self._random, ids.BASE62, 4)
        self.request_reply = f"{self.subject_prefix}.{token}"
        self.pending_at_request = self.pending_bytes
        if self._recorder:
            name = self._name
            self._recorder.record(
                "flow_control", stream=name.stream, consumer=name.consumer, subject=self.request_reply
            )
        self._publish(self._consumer.config["deliver_subject"], self.request_reply, status.flow_control_request(), b"")

    def on_answer(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        """A message on ``$JS.FC.<stream>.<consumer>.*``: only an answer to the latest request counts."""
        consumer = self._consumer
        if consumer.closed or subject != self.request_reply:
            return
        if self.window < self.window_limit:
            self.window = min(self.window * 2, self.window_limit)
        self.pending_bytes = max(self.pending_bytes - self.pending_at_request, 0)
        self.request_reply, self.pending_at_request = "", 0
        if consumer.config["ack_policy"] == "flow_control" and hdr:
            last_dseq = _int64(hdrs.get(hdr, "Nats-Last-Consumer"))
            last_sseq = _int64(hdrs.get(hdr, "Nats-Last-Stream"))
            if last_sseq > 0:
                self._ack_through(last_sseq, max(last_dseq, 0))
        consumer.kick()

    # -- idle heartbeats ---------------------------------------------------------------

    def arm_heartbeat(self) -> None:
        """(Re)start the idle countdown (``hb.Reset``); every delivery calls this."""
        interval = self._consumer.config["idle_heartbeat"]
        if interval <= 0 or not self._is_push or self._consumer.closed:
            self.stop()
            return
        self._idle.restart(interval / NS)

    def _heartbeat_due(self) -> None:
        consumer = self._consumer
        if consumer.closed or self._holding():
            return  # a blocked loop sends nothing; the delivery restarts the countdown
        hooks = self._hooks
        if consumer.active and not (
            hooks and hooks.fire("consumer.heartbeat", stream=self._name.stream, consumer=self._name.consumer)
        ):
            subject = consumer.config["deliver_subject"]
            self._reply(
                subject,
                b"",
                status.idle_heartbeat(
                    consumer.next_consumer_sequence - 1, consumer.next_stream_sequence - 1, self.request_reply
                ),
            )
            if consumer.config["ack_policy"] == "flow_control" and consumer.num_ack_pending and not self.request_reply:
                self.send_request()
        self.arm_heartbeat()

    def stop(self) -> None:
        """No more heartbeats (the consumer is gone)."""
        self._idle.cancel()
