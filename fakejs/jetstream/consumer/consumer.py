"""A consumer: delivery position, waiting pulls, pending acks, redelivery.

The state mirrors nats-server's consumer so clients see the same numbers:
``sseq``/``dseq`` are the next stream and delivery sequences, ``pending``
maps stream sequences awaiting an ack to their delivery sequence and
delivery time, ``rdc`` counts redeliveries, ``rdq`` is the redelivery
queue, and ``store_*`` are the persisted counters ConsumerInfo reports.

Delivery (:meth:`Consumer.kick`) runs whenever something may let a message
go out -- a new message, a pull request, an ack, a redelivery timer -- and
keeps delivering until nothing more can be delivered, as nats-server's
``loopAndGatherMsgs`` does.  Every timer is on the server clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import is_subset, matches
from fakejs.gocompat import gotime
from fakejs.jetstream import advisories, status
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer.acks import AckHandling
from fakejs.jetstream.consumer.lifecycle import Lifecycle
from fakejs.jetstream.consumer.priority import PriorityGroups
from fakejs.jetstream.consumer.pull import PullHandling
from fakejs.jetstream.consumer.push import HeldDelivery, PushHandling
from fakejs.jetstream.consumer.waiting import WaitQueue
from fakejs.jetstream.storage.consumer_state import ConsumerState
from fakejs.jetstream.storage.store import StoredMessage
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.core.clock import TimerHandle
    from fakejs.core.router import Subscription
    from fakejs.jetstream.stream.stream import Stream

NS = 1_000_000_000
ACK_WAIT_DELAY = 1_000_000  # nats-server adds 1ms to every ack deadline
MSG_SIZE = "Nats-Msg-Size"


class Consumer(AckHandling, PullHandling, PushHandling, Lifecycle):
    def __init__(self, stream: Stream, name: str, config: ConsumerConfig, created_ns: int) -> None:
        self.stream = stream
        self.js = stream.js
        self.clock = stream.clock
        self.name = name
        self.config = config
        self.created_ns = created_ns
        self.closed = False
        self.filters = consumerconfig.filters(config)
        # Subjects the stream signals this consumer on (nats-server's consumer sublist).
        self.signal_subjects: list[str] = list(self.filters) or [">"]
        self.sseq = 1
        self.dseq = 1
        self.adflr = 0  # ack floor, delivery sequence
        self.asflr = 0  # ack floor, stream sequence
        self.pending: dict[int, list[int]] = {}  # sseq -> [dseq, timestamp ns]
        self.rdc: dict[int, int] = {}  # sseq -> times redelivered
        self.rdq: list[int] = []
        self.npc = 0  # messages still to deliver
        self.npf = 0  # stream sequence npc was last counted through
        self.state = ConsumerState(config["ack_policy"], max(config["max_deliver"], 0))
        self.last_delivered_ns = 0
        self.last_ack_ns = 0
        self.lss: list[int] | None = None  # last-per-subject sequences still to deliver
        self.lss_resume = 0
        self.waiting = WaitQueue(config["max_waiting"], config["priority_policy"] == "prioritized")
        self.active = not consumerconfig.is_push(config)
        self.subscriptions: list[Subscription] = []
        self._running = False
        self._again = False
        self._ack_timer: TimerHandle | None = None
        self._ack_deadline: float | None = None
        self._wait_timer: TimerHandle | None = None
        self._wait_deadline: float | None = None
        self._inactive_timer: TimerHandle | None = None
        self._pause_timer: TimerHandle | None = None
        self.priority: PriorityGroups | None = None
        self.configure_priority()
        self.init_push()
        self.dthresh = 0  # inactivity threshold in effect (ns)
        self.set_inactive_threshold()
        self.on_delete: list[Any] = []

    def configure_priority(self) -> None:
        """Priority-group state follows the config (policies may change on update)."""
        cfg = self.config
        # A pin outlives a switch to no policy, as in nats-server.
        pinned = self.priority is not None and bool(self.priority.pin_id)
        wanted = cfg["priority_policy"] != "none" or bool(cfg["priority_groups"]) or pinned
        if wanted and self.priority is None:
            self.priority = PriorityGroups(self)
        elif not wanted and self.priority is not None:
            self.priority.close()
            self.priority = None
        self.waiting.prioritized = cfg["priority_policy"] == "prioritized"

    # -- identity ------------------------------------------------------------------

    @property
    def is_push(self) -> bool:
        return consumerconfig.is_push(self.config)

    @property
    def max_ack_pending(self) -> int:
        return max(self.config["max_ack_pending"], 0)

    @property
    def max_deliver(self) -> int:
        return max(self.config["max_deliver"], 0)

    def wants(self, subject: str) -> bool:
        """Whether a message on ``subject`` is for this consumer (interest retention)."""
        return not self.filters or any(matches(f, subject) for f in self.filters)

    # -- start ---------------------------------------------------------------------------

    def select_start(self) -> None:
        """``selectStartingSeqNo``: where delivery begins for the deliver policy."""
        cfg = self.config
        store = self.stream.store
        first, last = store.first_seq, store.last_seq
        policy = cfg["deliver_policy"]
        if cfg["opt_start_seq"]:
            sseq = cfg["opt_start_seq"]
        elif policy == "all":
            sseq = first
        elif policy == "last":
            if not self.filters:
                sseq = last
            else:
                sseq = 0
                for f in self.filters:
                    msg = store.last_message(f)
                    if msg is not None and msg.seq > sseq:
                        sseq = msg.seq
        elif policy == "last_per_subject":
            if self.stream.config["max_msgs_per_subject"] == 1:
                sseq = first
            else:
                seqs = [m.seq for m in store.last_for_subjects(self.filters)]
                self.lss_resume = last
                if seqs:
                    sseq = seqs[0]
                    self.lss = seqs
                else:
                    sseq = last
        elif cfg["opt_start_time"] is not None:
            sseq = store.seq_from_time(cfg["opt_start_time"].ns)
            if self.filters:
                nseq = last
                for f in self.filters:
                    msg = store.next_message(first, f)
                    if msg is not None and msg.seq >= sseq and msg.seq < nseq:
                        nseq = msg.seq
                if sseq < nseq < last:
                    sseq = nseq
        else:  # new
            sseq = last + 1
        if first == 0 and not cfg["opt_start_seq"]:
            sseq = 1
        elif sseq > last and not cfg["opt_start_seq"]:
            sseq = last + 1
        elif sseq < first:
            sseq = first
        self.sseq = sseq
        self.dseq = 1
        self.adflr = 0
        self.asflr = sseq - 1
        self.state.set_starting(sseq - 1)
        self.recount_pending()

    def restore(self) -> None:
        """Take up where the persisted state left off (after a restart)."""
        state = self.state
        self.dseq = state.delivered[0] + 1
        self.sseq = state.delivered[1] + 1
        self.adflr, self.asflr = state.ack_floor
        self.pending = {seq: list(entry) for seq, entry in state.pending.items()}
        self.rdc = dict(state.redelivered)
        store = self.stream.store
        if self.sseq < store.first_seq:
            self.sseq = store.first_seq
        self.recount_pending()
        if self.pending:
            self._arm_ack_timer(0.0)

    def recount_pending(self) -> None:
        store = self.stream.store
        self.npf = store.last_seq
        if self.lss is not None:
            self.npc = len(self.lss) + store.filtered_count(self.lss_resume + 1, self.filters)
        else:
            self.npc = store.filtered_count(self.sseq, self.filters)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def next_subject(self) -> str:
        return f"$JS.API.CONSUMER.MSG.NEXT.{self.stream.name}.{self.name}"

    def start(self) -> None:
        """Subscribe to pulls and acks and begin delivering."""
        router = self.js.router
        stream = self.stream.name
        self.subscriptions = [
            router.subscribe_internal(self.next_subject, self._on_next),
            router.subscribe_internal(f"$JS.API.CONSUMER.RESET.{stream}.{self.name}", self._on_reset),
        ]
        if self.config["ack_policy"] not in ("none", "flow_control"):  # nobody listens for acks otherwise
            self.subscriptions.append(
                router.subscribe_internal(f"$JS.ACK.{stream}.{self.name}.*.*.*.*.*", self._on_ack)
            )
        if self.is_push:
            router.watch_interest(self.config["deliver_subject"], self._interest_changed)
            self.active = self._has_delivery_interest()
        self.start_push()
        self._touch()
        self._arm_pause_timer()
        self.kick()

    def delete(self, reason: str = "") -> None:
        """Stop for good: waiting pulls learn "409 Consumer Deleted"."""
        if self.closed:
            return
        self.closed = True
        for request in self.waiting.clear():
            self.js.reply(request.reply, b"", status.consumer_deleted())
        self._unsubscribe()
        for timer in (self._ack_timer, self._wait_timer, self._inactive_timer, self._pause_timer):
            if timer is not None:
                timer.cancel()
        self._ack_timer = self._wait_timer = self._inactive_timer = self._pause_timer = None
        self.stop_push()
        if self.priority is not None:
            self.priority.close()
        for callback in list(self.on_delete):
            callback(self)
        advisories.consumer_action(self, "delete")

    def stop(self) -> None:
        """Server shutdown: waiting pulls learn "409 Server Shutdown", then stop."""
        for request in self.waiting.clear():
            self.js.reply(request.reply, b"", status.server_shutdown(request.n, request.b))
        self.closed = True
        self._unsubscribe()
        for timer in (self._ack_timer, self._wait_timer, self._inactive_timer, self._pause_timer):
            if timer is not None:
                timer.cancel()
        self.stop_push()

    def _unsubscribe(self) -> None:
        router = self.js.router
        for sub in self.subscriptions:
            router.unsubscribe(sub)
        self.subscriptions = []
        if self.is_push:
            router.unwatch_interest(self.config["deliver_subject"], self._interest_changed)

    def _on_next(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
        if not reply or self.closed:
            return
        if self.is_push:
            self.js.reply(reply, b"", status.consumer_is_push_based())
            return
        if required_level(hdr):
            self.js.reply(reply, b"", status.required_api_level())
            return
        self.pull_request(reply, payload, hdr)

    def _on_ack(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
        self.process_ack(subject, reply, payload)

    def _on_reset(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
        self.js.asset_request("consumer.reset", self, reply, hdr, payload)

    # -- delivery loop ------------------------------------------------------------------

    def kick(self) -> None:
        """Deliver whatever can be delivered now."""
        if self.closed:
            return
        if self._running:
            self._again = True
            return
        self._running = True
        try:
            while True:
                self._again = False
                self._deliver_available()
                if not self._again or self.closed:
                    break
        finally:
            self._running = False

    def _deliver_available(self) -> None:
        if self.held is not None:
            return  # the loop waits for a paced delivery
        max_ack_pending_hit = False
        while not self.closed:
            if self.is_paused():
                break
            if self.is_push:
                if not self.active or self.flow_stalled:
                    break
            elif not len(self.waiting):
                break
            picked = self._next_message()
            if picked is None:
                max_ack_pending_hit = self.max_ack_pending > 0 and len(self.pending) >= self.max_ack_pending
                break
            msg, dc = picked
            if dc == 1:
                self.npc -= 1
            ack_reply = self.ack_reply(msg.seq, self.dseq, dc, msg.ts, max(self.npc, 0))
            hdr, data = msg.hdr, msg.data
            if self.config["headers_only"]:
                hdr = hdrs.add(hdr, MSG_SIZE, str(len(data)))
                data = b""
            size = len(msg.subject) + len(ack_reply) + (len(hdr) if hdr else 0) + len(data)
            wr_n = wr_b = 0
            if self.is_push:
                target = self.config["deliver_subject"]
            else:
                request = self._next_waiting(size)
                if request is None:
                    self._undo_pick(msg.seq, dc)
                    break
                wr_n, wr_b = request.n, request.b
                target = request.reply
                if self.priority is not None:
                    hdr = self.priority.stamp(hdr)
                if request.n > 0 and request.heartbeat:
                    request.next_heartbeat = self.clock.monotonic() + request.heartbeat
            size = len(msg.subject) + len(ack_reply) + (len(hdr) if hdr else 0) + len(data)  # after any pin header
            delivery = HeldDelivery("replay", target, ack_reply, msg, hdr, data, dc, size, wr_n, wr_b)
            faults = self.js.broker.faults
            if faults:
                hit = faults.fire(
                    "consumer.deliver", stream=self.stream.name, consumer=self.name, subject=msg.subject, seq=msg.seq
                )
                if hit is not None:
                    if hit.change == "delay":
                        self._hold(delivery._replace(stage="sending"), float(hit.args.get("seconds", 1.0)))
                        return
                    delivery = delivery._replace(stage="dropped")  # counted as sent, never arrives
            if self.pace(delivery):
                return
            self.send_delivery(delivery)
            if faults:
                faults.settle()  # an action after this delivery (delete, disconnect...) stops the batch
        self.replay_caught_up()
        if not self.is_push:
            self.process_waiting(eos=not max_ack_pending_hit)

    def send_delivery(self, delivery: HeldDelivery) -> None:
        target, wr_n, wr_b = delivery.target, delivery.wr_n, delivery.wr_b
        self._deliver(
            target,
            delivery.ack_reply,
            delivery.msg,
            delivery.hdr,
            delivery.data,
            delivery.dc,
            delivery.stage != "dropped",
        )
        if wr_n <= 0 and wr_b > 0:
            self.js.reply(target, b"", status.batch_completed(wr_n, wr_b))
        self._arm_heartbeat()

    def _undo_pick(self, seq: int, dc: int) -> None:
        """A message was picked but nobody can take it now: put it back."""
        if dc == 1 and seq == self.sseq - 1:
            self.sseq -= 1
            self.npc += 1
        elif seq not in self.rdq:
            self.rdc[seq] = self.rdc.get(seq, 0) - 1
            if self.rdc[seq] <= 0:
                del self.rdc[seq]
            self.rdq.append(seq)

    def ack_reply(self, sseq: int, dseq: int, dc: int, ts: int, pending: int) -> str:
        return f"$JS.ACK.{self.stream.name}.{self.name}.{dc}.{sseq}.{dseq}.{ts}.{pending}"

    def _next_message(self) -> tuple[StoredMessage, int] | None:
        """``getNextMsg``: redeliveries first, then new messages."""
        store = self.stream.store
        while self.rdq:
            seq = self.rdq.pop(0)
            dc = self.rdc.get(seq, 0) + 1 + 1
            self.rdc[seq] = dc - 1
            if self.max_deliver and dc > self.max_deliver:
                if dc == self.max_deliver + 1:
                    self.delivery_exceeded(seq, dc - 1)
                pending = self.pending.pop(seq, None)
                if pending is not None:
                    self._store_delivered(pending[0], seq, dc, pending[1])
                    self.move_ack_floor(pending[0], seq)
                continue
            msg = store.get(seq)
            if msg is None:
                self.rdc[seq] -= 1
                pending = self.pending.get(seq)
                if pending is not None:
                    self.terminate(seq, pending[0], dc - 1, "unacknowledged limits", "")
                continue
            return msg, dc
        if self.max_ack_pending and len(self.pending) >= self.max_ack_pending:
            return None
        if self.lss:
            seq = self.lss.pop(0)
            if not self.lss:
                self.lss = None
                self.sseq = self.lss_resume
            else:
                self.sseq = seq
            msg = store.get(seq)
            self.sseq += 1
            return (msg, 1) if msg is not None else None
        msg = store.next_matching(self.sseq, self.filters)
        if msg is None:
            if store.last_seq >= self.sseq:
                self.sseq = store.last_seq + 1
            return None
        self.sseq = msg.seq + 1
        return msg, 1

    def _deliver(
        self,
        target: str,
        ack_reply: str,
        msg: StoredMessage,
        hdr: bytes | None,
        data: bytes,
        dc: int,
        publish: bool = True,
    ) -> None:
        dseq = self.dseq
        self.dseq += 1
        now_ns = self.clock.time_ns()
        self._store_delivered(dseq, msg.seq, dc, now_ns)
        if self.config["ack_policy"] == "none":
            self.adflr, self.asflr = dseq, msg.seq
        else:
            self.track_pending(msg.seq, dseq)
        if self.is_push:
            self.count_push_bytes(target, ack_reply, hdr, data)
        if publish and not self._publish(target, ack_reply, msg, hdr, data):
            self.did_not_deliver(msg.seq, target)
        if self.is_push:
            self.after_push_delivery(len(target) + len(ack_reply) + (len(hdr) if hdr else 0) + len(data))
        if self.config["ack_policy"] == "none" and self.stream.config["retention"] != "limits":
            self.stream.acked(self, msg.seq)

    def _publish(self, target: str, ack_reply: str, msg: StoredMessage, hdr: bytes | None, data: bytes) -> bool:
        """Send a stored message: on its own subject, to ``target``, with the ack reply."""
        return self.js.router.publish(target, ack_reply, hdr, data, None, shown_as=msg.subject)

    def _store_delivered(self, dseq: int, sseq: int, dc: int, ts: int) -> None:
        self.last_delivered_ns = self.clock.time_ns()
        self.state.update_delivered(dseq, sseq, dc, ts)

    def did_not_deliver(self, seq: int, target: str) -> None:
        """Nobody received a delivery: give it back (``didNotDeliver``)."""
        count = self.rdc.get(seq)
        if count is not None:
            self.rdc[seq] = count - 1
            if self.rdc[seq] <= 0:
                del self.rdc[seq]
        if self.is_push:
            self.active = False
            return
        for request in self.waiting:
            if request.reply == target:
                request.n += 1
                request.d -= 1
                break
        if seq in self.pending and seq not in self.rdq:
            self.rdq.append(seq)

    # -- stream events -------------------------------------------------------------------

    def signaled(self, subject: str) -> bool:
        """Whether the stream tells this consumer about a new message on ``subject``."""
        return any(matches(f, subject) for f in self.signal_subjects)

    def message_stored(self, msg: StoredMessage) -> None:
        """``processStreamSignal``."""
        if self.signaled(msg.subject):
            if msg.seq > self.npf:  # not already counted by a recount
                self.npc += 1
            if msg.seq >= self.sseq:
                self.kick()

    def message_removed(self, seq: int, subject: str = "") -> None:
        msg_subject = subject
        if seq >= self.sseq and (not msg_subject or self.wants(msg_subject)):
            self.npc -= 1
        if seq in self.pending:
            pending = self.pending[seq]
            self.terminate(seq, pending[0], self.delivery_count(seq), "unacknowledged limits", "")
        elif seq in self.rdc:
            del self.rdc[seq]
            self.state.update_acks(0, seq)

    # A consumer with several filters counts as unfiltered here, as it does in
    # nats-server 2.15.1 (its purge matching only looks at a single filter).

    def is_filtered_match(self, subject: str) -> bool:
        """``isFilteredMatch``: the consumer sees all of ``subject`` (it is as wide or wider)."""
        if len(self.filters) != 1:
            return True
        return subject == self.filters[0] or is_subset(subject, self.filters[0])

    def is_equal_or_subset_match(self, subject: str) -> bool:
        """``isEqualOrSubsetMatch``: the consumer's filter lies within ``subject``."""
        if len(self.filters) != 1:
            return False
        return subject == self.filters[0] or is_subset(self.filters[0], subject)

    def purged(self, start: int, last_seq: int, wider: bool) -> None:
        """``purge``: move past what a stream purge removed, acking what it took away."""
        if start == 0 and not wider:
            start = last_seq + 1
        if self.sseq < start:
            self.sseq = start
        store = self.stream.store
        if self.asflr < start:
            self.asflr = start - 1
            for seq, (dseq, _) in list(self.pending.items()):
                if seq <= self.asflr or (wider and store.get(seq) is None):
                    if dseq > self.adflr:
                        self.adflr = dseq
                        self.dseq = max(self.dseq, self.adflr)
                    del self.pending[seq]
                    self.rdc.pop(seq, None)
                    self.state.update_acks(dseq, seq)
                    self.last_ack_ns = self.clock.time_ns()
        if not self.pending:
            self.rdc.clear()
            self.adflr, self.asflr = self.dseq - 1, self.sseq - 1
        self.rdq = [seq for seq in self.rdq if seq >= self.sseq]
        self.state.overwrite([self.dseq - 1, self.sseq - 1], [self.adflr, self.asflr], self.pending, self.rdc)
        self.recount_pending()
        self.kick()

    # -- info --------------------------------------------------------------------------

    def info(self, dynamic_metadata: bool = True) -> dict[str, Any]:
        if not self.is_push:
            self.process_waiting(eos=False)
        # ``checkNumPending``: never more than the stream holds at or after sseq.
        store = self.stream.store
        if self.sseq > store.last_seq:
            self.npc = 0
        elif self.npc > 0:
            self.npc = min(self.npc, store.msgs, store.last_seq - self.sseq + 1)
        if self.state.has_state():
            delivered = {"consumer_seq": self.state.delivered[0], "stream_seq": self.state.delivered[1]}
        else:
            delivered = {"consumer_seq": max(self.dseq, 1) - 1, "stream_seq": max(self.sseq, 1) - 1}
        if self.last_delivered_ns:
            delivered["last_active"] = gotime.rfc3339(self.last_delivered_ns)
        ack_floor = {"consumer_seq": self.state.ack_floor[0], "stream_seq": self.state.ack_floor[1]}
        if self.last_ack_ns:
            ack_floor["last_active"] = gotime.rfc3339(self.last_ack_ns)
        info: dict[str, Any] = {
            "stream_name": self.stream.name,
            "name": self.name,
            "created": gotime.rfc3339(self.created_ns),
            "config": consumerconfig.to_json(self.config, dynamic_metadata),
            "delivered": delivered,
            "ack_floor": ack_floor,
            "num_ack_pending": len(self.pending),
            "num_redelivered": 0 if self.config["max_deliver"] == 1 else len(self.rdc),
            "num_waiting": 0 if self.is_push else len(self.waiting),
            "num_pending": max(self.npc, 0),
        }
        if self.is_push and self.active:
            info["push_bound"] = True
        until = self.config["pause_until"]
        if until is not None:
            remaining = until.ns - self.clock.time_ns()
            if remaining > 0:
                info["paused"] = True
                info["pause_remaining"] = remaining
        info["ts"] = gotime.rfc3339(self.clock.time_ns())
        groups = self.priority.state() if self.priority is not None else []
        if groups:
            info["priority_groups"] = groups
        return info
