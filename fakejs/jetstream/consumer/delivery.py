"""The delivery loop: from the stream to the push subject or a waiting pull.

:meth:`DeliveryLoop.kick` runs whenever something may let a message go out
-- a new message, a pull request, an ack, a redelivery timer -- and keeps
delivering until nothing more can be delivered, as nats-server's
``loopAndGatherMsgs`` does.  Each round picks the next message
(redeliveries first, ``getNextMsg``), addresses it (the deliver subject, or
the next waiting pull), lets a fault or the pacer hold it, and sends it: the
ack tracker records it and push flow control counts it.  A message nobody
takes is put back (``didNotDeliver``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from fakejs.core.clock import Clock
from fakejs.core.hooks import Hooks
from fakejs.jetstream import status
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.consumer.ack_tracker import AckTracker
from fakejs.jetstream.consumer.lifecycle import PauseTimer
from fakejs.jetstream.consumer.pacing import HeldDelivery, Pacer
from fakejs.jetstream.consumer.position import DeliveryPosition
from fakejs.jetstream.consumer.priority_groups import PriorityGroups
from fakejs.jetstream.consumer.pull_dispatch import PullDispatch
from fakejs.jetstream.consumer.push_flow import PushFlow
from fakejs.jetstream.consumer.view import ConsumerView, Reply
from fakejs.jetstream.storage.store import StoredMessage
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.jetstream.stream.stream import Stream

MSG_SIZE = "Nats-Msg-Size"
_new_tuple = tuple.__new__
UNACKED_LIMITS = "Unacknowledged message was deleted"  # nats-server's ackTermUnackedLimitsReason: the stream removed a pending message


def wire_size(subject: str, reply: str, hdr: bytes | None, data: bytes) -> int:
    """The bytes of a delivery as flow control, rate limits and ``max_bytes`` count them."""
    return len(subject) + len(reply) + (len(hdr) if hdr else 0) + len(data)


class DeliverySource(ConsumerView, Protocol):
    """What the loop needs of its consumer beyond :class:`ConsumerView`."""

    @property
    def name(self) -> str: ...

    @property
    def filters(self) -> list[str]:
        """The filter subjects in effect (they may change on update)."""
        ...

    @property
    def priority(self) -> PriorityGroups | None: ...

    def terminate(
        self, stream_sequence: int, consumer_sequence: int, delivery_count: int, reason: str, reply: str
    ) -> bool:
        """Ack ``stream_sequence`` for good, with the ``MSG_TERMINATED`` advisory."""
        ...

    def lost_push_interest(self) -> None:
        """A push delivery reached nobody: stop pushing until interest returns."""
        ...


class SendMessage(Protocol):
    """Publish a stored message to ``target`` (shown on its own subject); whether anyone received it."""

    def __call__(self, target: str, ack_reply: str, hdr: bytes | None, data: bytes, /, *, shown_as: str) -> bool: ...


class DeliveryLoop:
    """Moves messages from the stream to the consumer's clients, one at a time.

    It works the consumer's other parts: the position and the ack tracker
    pick the message, the pull dispatch or the push subject takes it, the
    pacer and the pause timer hold it back.  ``release(seq)`` lets a
    work-queue or interest stream drop a message an ``ack_policy: none``
    consumer has delivered.
    """

    def __init__(
        self,
        consumer: DeliverySource,
        clock: Clock,
        hooks: Hooks,
        stream: Stream,
        send_message: SendMessage,
        reply: Reply,
        release: Callable[[int], None],
        *,
        position: DeliveryPosition,
        acks: AckTracker,
        pulls: PullDispatch,
        push: PushFlow,
        pacer: Pacer,
        pause: PauseTimer,
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._hooks = hooks
        self._stream = stream
        self._send_message = send_message
        self._reply = reply
        self._release = release
        self._position = position
        self._acks = acks
        self._pulls = pulls
        self._push = push
        self._pacer = pacer
        self._pause = pause
        self._running = False
        self._again = False
        self._ack_prefix = ""  # "$JS.ACK.<stream>.<consumer>.", made on first use (names never change)
        # An update may not turn a push consumer into a pull one or back, so this holds for good.
        self._is_push = consumerconfig.is_push(consumer.config)
        self._recorder = stream.timeline  # the server's timeline (see fakejs.core.recorder)
        self._recording = bool(self._recorder)  # a recorder's truth never changes: one test, not one per message

    def kick(self) -> None:
        """Deliver whatever can be delivered now (once more if kicked while running)."""
        consumer = self._consumer
        if consumer.closed:
            return
        pacer = self._pacer
        if not self._is_push and not self._pulls.queue.waiting and pacer.held is None:  # not holding, no call
            # Nobody is waiting (a pull consumer between requests: every ack kicks): nothing
            # can be delivered, and the loop would only note the position for a replaying pacer.
            if pacer.replay:
                pacer.caught_up(self._position.next_stream_sequence)
            return
        if self._running:
            self._again = True
            return
        self._running = True
        try:
            while True:
                self._again = False
                self._deliver_available()
                if not self._again or consumer.closed:
                    break
        finally:
            self._running = False

    def _deliver_available(self) -> None:
        if self._pacer.holding:
            return  # the loop waits for a paced delivery
        max_ack_pending_hit = False
        while not self._consumer.closed and self._may_deliver():
            picked = self._next_message()
            if picked is None:
                max_ack_pending_hit = self._acks.ack_pending_full()
                break
            delivery = self._address(*picked)
            if delivery is None:
                break
            if not self._dispatch(delivery):
                return  # held back: the pacer resumes the loop
        self._pacer.caught_up(self._position.next_stream_sequence)
        if not self._is_push:
            self._pulls.process(eos=not max_ack_pending_hit)

    def _may_deliver(self) -> bool:
        if self._consumer.config["pause_until"] is not None and self._pause.is_paused():  # unpaused: no call
            return False
        if self._is_push:
            return self._consumer.active and not self._push.stalled
        return self._pulls.queue.waiting > 0

    # -- one delivery --------------------------------------------------------------------

    def _next_message(self) -> tuple[StoredMessage, int] | None:
        """``getNextMsg``: redeliveries first, then new messages; with the delivery count."""
        store = self._stream.store
        acks = self._acks
        while acks.redelivery_queue.queued and (redelivery := acks.next_redelivery()) is not None:
            seq, delivery_count = redelivery
            msg = store.get(seq)
            if msg is not None:
                return msg, delivery_count
            acks.uncount_missing(seq)
            entry = acks.pending.get(seq)
            if entry is not None:
                self._consumer.terminate(seq, entry[0], delivery_count - 1, UNACKED_LIMITS, "")
        if acks.ack_pending_full():
            return None
        msg = self._position.next_new(store, self._consumer.filters)
        return (msg, 1) if msg is not None else None

    def _address(self, msg: StoredMessage, delivery_count: int) -> HeldDelivery | None:
        """Address a picked message: the push subject or the next waiting pull (None: nobody takes it)."""
        consumer, position = self._consumer, self._position
        pending = position.num_pending
        ack_reply = self.ack_reply(
            msg.seq, position.next_consumer_sequence, delivery_count, msg.ts, pending if pending > 0 else 0
        )
        hdr, data = msg.hdr, msg.data
        if consumer.config["headers_only"]:
            hdr = hdrs.add(hdr, MSG_SIZE, str(len(data)))
            data = b""
        batch_left = bytes_left = 0
        size = wire_size(msg.subject, ack_reply, hdr, data)
        if self._is_push:
            target = consumer.config["deliver_subject"]
        else:
            request = self._pulls.next_waiting(size)
            if request is None:
                self._put_back(msg.seq, delivery_count)
                return None
            batch_left, bytes_left, target = request.batch_left, request.bytes_left, request.reply
            if consumer.priority is not None:
                hdr = consumer.priority.stamp(hdr)
                size = wire_size(msg.subject, ack_reply, hdr, data)  # with the pin header
        # HeldDelivery(...) without the named tuple's own __new__ frame: the fields in their declared order
        fields = ("replay", target, ack_reply, msg, hdr, data, delivery_count, size, batch_left, bytes_left)
        return _new_tuple(HeldDelivery, fields)

    def ack_reply(
        self, stream_sequence: int, consumer_sequence: int, delivery_count: int, ts: int, pending: int
    ) -> str:
        prefix = self._ack_prefix
        if not prefix:
            prefix = self._ack_prefix = f"$JS.ACK.{self._stream.name}.{self._consumer.name}."
        return f"{prefix}{delivery_count}.{stream_sequence}.{consumer_sequence}.{ts}.{pending}"

    def _put_back(self, seq: int, delivery_count: int) -> None:
        """A message was picked but nobody can take it now: put it back."""
        if delivery_count == 1 and self._position.put_back(seq):
            return
        self._acks.take_back(seq)

    def _dispatch(self, delivery: HeldDelivery) -> bool:
        """Send a delivery unless a fault or the pacer holds it; False when the loop must wait."""
        hooks = self._hooks
        armed = bool(hooks)  # one truth test per delivery (a fault fired while sending settles on the next turn)
        if armed:
            msg = delivery.msg
            hit = hooks.fire(
                "consumer.deliver",
                stream=self._stream.name,
                consumer=self._consumer.name,
                subject=msg.subject,
                seq=msg.seq,
            )
            if hit is not None:
                if hit.change == "delay":
                    self._pacer.hold(delivery._replace(stage="sending"), float(hit.args.get("seconds", 1.0)))
                    return False
                delivery = delivery._replace(stage="dropped")  # counted as sent, never arrives
        if self._pacer.pace(delivery):
            return False
        self.send(delivery)
        if armed:
            hooks.settle()  # an action after this delivery (delete, disconnect...) stops the batch
        return True

    def send(self, delivery: HeldDelivery) -> None:
        """Send a delivery whose moment has come; a pull's last one may end its batch."""
        target, batch_left, bytes_left = delivery.target, delivery.batch_left, delivery.bytes_left
        self._deliver(delivery, publish=delivery.stage != "dropped")
        if batch_left <= 0 and bytes_left > 0:
            self._reply(target, b"", status.batch_completed(batch_left, bytes_left))
        if batch_left <= 0 and not self._is_push and self._recording:
            names = {"stream": self._stream.name, "consumer": self._consumer.name}
            self._recorder.record("pull.filled", **names, reply=target)
        if self._is_push:  # a pull consumer's idle countdown never runs (its requests have their own heartbeats)
            self._push.arm_heartbeat()

    def _deliver(self, delivery: HeldDelivery, publish: bool) -> None:
        target, ack_reply, msg = delivery.target, delivery.ack_reply, delivery.msg
        ack_none = self._consumer.config["ack_policy"] == "none"
        consumer_sequence = self._position.take_delivery_seq()
        if self._recording:
            self._record_delivery(delivery, consumer_sequence)
        if ack_none:
            self._acks.delivered_acked(consumer_sequence, msg.seq, delivery.delivery_count)
        else:
            self._acks.delivered(consumer_sequence, msg.seq, delivery.delivery_count)
        push = self._is_push
        if push:
            size = wire_size(target, ack_reply, delivery.hdr, delivery.data)
            self._push.count(size)
        if publish and not self._send_message(target, ack_reply, delivery.hdr, delivery.data, shown_as=msg.subject):
            self._not_received(msg.seq, target)
        if push:
            self._push.after_delivery(size)
        if ack_none and self._stream.config["retention"] != "limits":
            self._release(msg.seq)

    def _record_delivery(self, delivery: HeldDelivery, consumer_sequence: int) -> None:
        msg = delivery.msg
        stream, consumer = self._stream.name, self._consumer.name
        values = (stream, consumer, msg.seq, consumer_sequence, delivery.delivery_count, msg.subject, delivery.size)
        # one per message: by position; the header block as sent, decoded when the timeline is read
        self._recorder.record_values("deliver", (*values, delivery.target, delivery.hdr))

    def _not_received(self, seq: int, target: str) -> None:
        """Nobody received a delivery: give it back (``didNotDeliver``)."""
        self._acks.uncount(seq)
        if self._is_push:
            self._consumer.lost_push_interest()
            return
        self._pulls.not_received(target)
        self._acks.requeue_pending(seq)
