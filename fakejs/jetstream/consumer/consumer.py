"""A consumer: the one object streams, the API and monitoring talk to.

:class:`Consumer` subscribes to its subjects, serves the stream's events and
ConsumerInfo, and composes parts that each own their state: where delivery
stands, the ack tracker and ack messages, the pull dispatch and priority
groups, push flow control and pacing, inactivity and pause timers, and the
delivery loop (:mod:`fakejs.jetstream.consumer.delivery`).  The parts see the
consumer only as a :class:`~fakejs.jetstream.consumer.view.ConsumerView`.
Every timer is on the server clock.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from fakejs.core.clock import Clock
from fakejs.core.subjects import is_subset, matches
from fakejs.gocompat import gotime
from fakejs.jetstream import advisories, status
from fakejs.jetstream.apilevel import required_level
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer import priority_groups
from fakejs.jetstream.consumer.ack_messages import AckMessages
from fakejs.jetstream.consumer.ack_tracker import AckTracker
from fakejs.jetstream.consumer.delivery import UNACKED_LIMITS, DeliveryLoop
from fakejs.jetstream.consumer.lifecycle import Inactivity, PauseTimer
from fakejs.jetstream.consumer.pacing import HeldDelivery, Pacer, rate_limiter
from fakejs.jetstream.consumer.position import DeliveryPosition, reset_start
from fakejs.jetstream.consumer.priority_groups import PriorityGroups
from fakejs.jetstream.consumer.pull_dispatch import PullDispatch, requester
from fakejs.jetstream.consumer.pull_requests import WaitQueue
from fakejs.jetstream.consumer.push_flow import PushFlow
from fakejs.jetstream.consumer.view import ConsumerName
from fakejs.jetstream.storage.consumer_state import ConsumerState
from fakejs.jetstream.storage.store import StoredMessage

if TYPE_CHECKING:
    from fakejs.core.router import Subscription
    from fakejs.jetstream.stream.stream import Stream


class Consumer:
    """One consumer of a stream: its config, its subscriptions and the parts that deliver for it.

    Others read it through its properties (``next_stream_sequence``, ``pending``, ``waiting``...), not the parts' state.
    """

    def __init__(self, stream: Stream, name: str, config: ConsumerConfig, created_ns: int) -> None:
        self.stream = stream
        self.js = stream.js
        self.clock: Clock = stream.clock
        self.name = name
        self.pull_subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream.name}.{name}"  # its pulls come here
        self.config = config
        self.created_ns = created_ns
        self.closed = False
        self.filters = consumerconfig.filters(config)
        # Subjects the stream signals this consumer on (nats-server's consumer sublist).
        self.signal_subjects: list[str] = list(self.filters) or [">"]
        self.active = not consumerconfig.is_push(config)
        self.subscriptions: list[Subscription] = []
        self._compose(ConsumerName(stream.name, name))

    def _compose(self, name: ConsumerName) -> None:
        """Build the parts; each sees this consumer through :class:`ConsumerView`."""
        self._compose_acks(name)
        self._compose_pulls(name)
        self._compose_push(name)
        self._compose_timers()
        js = self.js
        self.loop = DeliveryLoop(
            self,
            self.clock,
            js.broker.faults,
            self.stream,
            send_message=js.router.publish,
            reply=js.reply,
            release=self._release,
            position=self.position,
            acks=self.acks,
            pulls=self.pulls,
            push=self.push,
            pacer=self.pacer,
            pause=self.pause_timer,
        )

    def _compose_acks(self, name: ConsumerName) -> None:
        self.position = DeliveryPosition()
        self.acks = AckTracker(
            self,
            self.clock,
            first_stream_seq=self._first_stream_seq,
            on_max_deliveries=partial(advisories.max_deliveries, self),
            recorder=self.stream.timeline,
            name=name,
        )
        self.ack_messages = AckMessages(
            self,
            self.acks,
            self.stream,
            self.js.reply,
            release=self._release,
            pull=self.pull_request,
            on_activity=self._ack_seen,
            on_nak=partial(advisories.nak, self),
            on_terminated=partial(advisories.terminated, self),
            on_ack_sample=partial(advisories.ack_sample, self),
            deferrals=self.js.broker.deferrals,
            pull_subject=self.pull_subject,
        )

    def _compose_pulls(self, name: ConsumerName) -> None:
        js = self.js
        self.pulls = PullDispatch(
            self,
            self.clock,
            js.broker.faults,
            name,
            reply=js.reply,
            has_interest=js.router.has_interest,
            touch=self.touch,
            available=self._available,
            priority=self._priority_groups,
            track_interest=partial(js.reply_interest, within=name),
            recorder=self.stream.timeline,
            before_serving=self.ack_messages.before_pull,
        )
        self.priority: PriorityGroups | None = None
        self._configure_priority()

    def _compose_push(self, name: ConsumerName) -> None:
        js = self.js
        broker = js.broker
        self.push = PushFlow(
            self,
            self.clock,
            broker.faults,
            name,
            broker.random,
            publish=js.router.publish,
            reply=js.reply,
            ack_through=partial(self.ack_messages.ack, reply=""),
            holding=self._holding,
            recorder=self.stream.timeline,
        )
        self.pacer = Pacer(
            self,
            self.clock,
            self._send_held,
            rate_limiter(self.config, self.stream.config, broker.options.max_payload),
        )

    def _compose_timers(self) -> None:
        self.inactivity = Inactivity(
            self,
            self.clock,
            self.js.broker.random,
            remove=partial(self.stream.remove_consumer, self, "inactive"),
            pulls_waiting=self.pulls.still_waiting,
            latest_ack_deadline_ns=self.acks.latest_ack_deadline_ns,
        )
        self.pause_timer = PauseTimer(self, self.clock, on_resumed=self._resumed)

    def _configure_priority(self) -> None:
        """Priority-group state follows the config (policies may change on update)."""
        pinned = self.priority is not None and bool(self.priority.pin_id)
        wanted = priority_groups.wanted(self.config, pinned)
        if wanted and self.priority is None:
            self.priority = PriorityGroups(
                self,
                self.clock,
                new_pin_id=self.js.nuid,
                on_pinned=partial(advisories.pinned, self),
                on_unpinned=partial(advisories.unpinned, self),
                recorder=self.stream.timeline,
                name=ConsumerName(self.stream.name, self.name),
            )
        elif not wanted and self.priority is not None:
            self.priority.close()
            self.priority = None
        self.pulls.reconfigure()

    def reconfigure(self, new_config: ConsumerConfig, filters_changed: Callable[[], None] | None = None) -> None:
        """``updateConfig``: take ``new_config`` (already checked) in place.

        When the filters change, nats-server re-registers the consumer for stream signals under its new
        filters -- under none at all when the filters were removed, so such a consumer is no longer told
        about new messages (its pending count and waiting pulls only move on other events) -- and then
        calls ``filters_changed`` (an interest stream drops what no consumer needs any more).
        """
        old = self.config
        self.config = new_config
        self.filters = consumerconfig.filters(new_config)
        if self.filters != consumerconfig.filters(old):
            self.signal_subjects = list(self.filters)
            self._recount_pending()
            if filters_changed is not None:
                filters_changed()
        if new_config["deliver_subject"] != old["deliver_subject"]:
            router = self.js.router
            router.unwatch_interest(old["deliver_subject"], self.interest_changed)
            router.watch_interest(new_config["deliver_subject"], self.interest_changed)
            self.active = self.has_delivery_interest()
        self._configure_priority()
        if new_config["inactive_threshold"] != old["inactive_threshold"]:
            self.inactivity.set_threshold()
            self.touch()

    # -- what the parts call back ---------------------------------------------------------

    def _first_stream_seq(self) -> int:
        """The ack tracker: the first sequence the stream still holds."""
        return self.stream.store.first_seq

    def _stored(self, seq: int) -> bool:
        """The ack tracker, on a purge: whether the stream still holds ``seq``."""
        return self.stream.store.get(seq) is not None

    def _ack_seen(self) -> None:
        """The ack messages: an ack came, which holds off deletion for inactivity."""
        self.inactivity.ack_seen()

    def _available(self) -> int:
        """The pull dispatch: how many messages a no-wait pull could get now."""
        return max(self.num_pending, 0) + len(self.acks.redelivery_queue)

    def _priority_groups(self) -> PriorityGroups | None:
        """The pull dispatch: the priority groups (created and dropped as the config changes)."""
        return self.priority

    def _holding(self) -> bool:
        """Push flow control: whether the pacer holds a delivery (then no heartbeat goes out)."""
        return self.pacer.holding

    def _send_held(self, delivery: HeldDelivery) -> None:
        """The pacer: a held delivery's moment has come."""
        self.loop.send(delivery)

    def _resumed(self) -> None:
        """The pause timer: ``pause_until`` has passed."""
        advisories.pause(self, False, self.config["pause_until"])

    # -- what others read ------------------------------------------------------------

    @property
    def is_push(self) -> bool:
        return consumerconfig.is_push(self.config)

    @property
    def next_stream_sequence(self) -> int:
        """The next stream sequence to deliver (``sseq`` in nats-server)."""
        return self.position.next_stream_sequence

    @property
    def next_consumer_sequence(self) -> int:
        """The consumer sequence of the next delivery (``dseq`` in nats-server)."""
        return self.position.next_consumer_sequence

    @property
    def num_pending(self) -> int:
        """Messages still to deliver (``npc`` in nats-server; may dip below zero, reports clamp it)."""
        return self.position.num_pending

    @property
    def ack_floor_stream(self) -> int:
        """The ack floor's stream sequence (``asflr`` in nats-server)."""
        return self.acks.ack_floor_stream

    @property
    def ack_floor_consumer(self) -> int:
        """The ack floor's consumer sequence (``adflr`` in nats-server)."""
        return self.acks.ack_floor_consumer

    @property
    def pending(self) -> Mapping[int, list[int]]:
        """Stream sequences awaiting an ack -> [consumer sequence, delivery time ns]."""
        return self.acks.pending

    @property
    def num_ack_pending(self) -> int:
        return len(self.acks.pending)

    @property
    def redelivery_queue(self) -> Collection[int]:
        """Stream sequences queued for redelivery (``rdq`` in nats-server)."""
        return self.acks.redelivery_queue

    @property
    def state(self) -> ConsumerState:
        """The persisted state (journaled by the JetStream service)."""
        return self.acks.state

    @property
    def waiting(self) -> WaitQueue:
        """The waiting pull requests."""
        return self.pulls.queue

    @property
    def flow_pending_bytes(self) -> int:
        """Push flow control: bytes delivered since the last answered request (``pbytes`` in nats-server)."""
        return self.push.pending_bytes

    @property
    def flow_window(self) -> int:
        """Push flow control: the current window (``maxpb`` in nats-server)."""
        return self.push.window

    @property
    def flow_request_reply(self) -> str:
        """Push flow control: the unanswered request's reply subject (``fcid`` in nats-server)."""
        return self.push.request_reply

    def delivery_count(self, seq: int) -> int:
        return self.acks.delivery_count(seq)

    def is_paused(self) -> bool:
        return self.pause_timer.is_paused()

    def wants(self, subject: str) -> bool:
        """Whether a message on ``subject`` is for this consumer (interest retention)."""
        return not self.filters or any(matches(f, subject) for f in self.filters)

    # -- start ---------------------------------------------------------------------------

    def select_start(self) -> None:
        """``selectStartingSeqNo``: where delivery begins for the deliver policy."""
        store = self.stream.store
        per_subject = self.stream.config["max_msgs_per_subject"]
        self.position.select_start(self.config, store, self.filters, per_subject)
        self.acks.start_at(self.position.next_stream_sequence)

    def restore(self) -> None:
        """Take up where the persisted state left off (after a restart)."""
        self.position.restore(self.state.delivered, self.stream.store, self.filters)
        self.acks.restore()

    def _recount_pending(self) -> None:
        """Count what is still to deliver again (the filters changed)."""
        self.position.recount(self.stream.store, self.filters)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Subscribe to pulls and acks and begin delivering."""
        router = self.js.router
        stream = self.stream.name
        self.subscriptions = [
            router.subscribe_internal(self.pull_subject, self._on_next),
            router.subscribe_internal(f"$JS.API.CONSUMER.RESET.{stream}.{self.name}", self._on_reset),
        ]
        if self.config["ack_policy"] not in ("none", "flow_control"):  # nobody listens for acks otherwise
            self.subscriptions.append(
                router.subscribe_internal(f"$JS.ACK.{stream}.{self.name}.*.*.*.*.*", self.ack_messages.receive)
            )
        if self.is_push:
            router.watch_interest(self.config["deliver_subject"], self.interest_changed)
            self.active = self.has_delivery_interest()
        if self.config["flow_control"]:
            self.subscriptions.append(router.subscribe_internal(f"{self.push.subject_prefix}.*", self.push.on_answer))
        self.pacer.start(self.stream.store.last_seq)
        self.push.arm_heartbeat()
        self.touch()
        self.pause_timer.arm()
        self.js.after_answer(self.kick)  # the create reply goes out before the first delivery

    def delete(self, cause: str = "api") -> None:
        """Stop for good: waiting pulls learn "409 Consumer Deleted" (``cause``: why, for the timeline)."""
        if self.closed:
            return
        self.closed = True
        if self.stream.timeline:
            self.stream.timeline.record("consumer.delete", stream=self.stream.name, consumer=self.name, cause=cause)
        for request in self.pulls.queue.clear():
            self.js.reply(request.reply, b"", status.consumer_deleted())
        self._unsubscribe()
        self._stop_timers()
        if self.priority is not None:
            self.priority.close()
        advisories.consumer_action(self, "delete")

    def stop(self) -> None:
        """Server shutdown: waiting pulls learn "409 Server Shutdown", then stop."""
        for request in self.pulls.queue.clear():
            self.js.reply(request.reply, b"", status.server_shutdown(request.batch_left, request.bytes_left))
        self.closed = True
        self._unsubscribe()
        self._stop_timers()

    def _stop_timers(self) -> None:
        self.acks.stop()
        self.pulls.stop()
        self.inactivity.stop()
        self.pause_timer.stop()
        self.pacer.stop()
        self.push.stop()

    def _unsubscribe(self) -> None:
        router = self.js.router
        for sub in self.subscriptions:
            router.unsubscribe(sub)
        self.subscriptions = []
        if self.is_push:
            router.unwatch_interest(self.config["deliver_subject"], self.interest_changed)

    def touch(self) -> None:
        """Activity: restart the inactivity countdown."""
        self.inactivity.touch()

    def has_delivery_interest(self) -> bool:
        """Push delivery needs a subscription on exactly the deliver subject."""
        return self.js.router.has_exact_interest(self.config["deliver_subject"], self.config["deliver_group"])

    def interest_changed(self) -> None:
        """Someone subscribed to or left the deliver subject (the router watches it for us)."""
        if self.closed:
            return
        active = self.has_delivery_interest()
        if active != self.active:
            self.active = active
            self.touch()
            if active:
                self.kick()

    def pause(self, until: gotime.GoTime | None) -> bool:
        """Hold delivery back until ``until`` (None: resume now); whether it is paused now (see ConsumerAdmin.pause)."""
        self.config["pause_until"] = until
        consumerconfig.set_static_metadata(self.config)
        self.pause_timer.arm()
        return self.pause_timer.is_paused()

    def unpin(self, group: str) -> None:
        """``$JS.API.CONSUMER.UNPIN``: ``group``'s pinned client loses its pin (nothing without priority groups)."""
        if self.priority is not None:
            self.priority.unpin(group)

    def expire_pin(self, group: str) -> str:
        """The pin's timeout, now (a fault): returns the pin id it dropped ("" when nobody was pinned)."""
        if self.priority is None:
            return ""
        pin_id = self.priority.pin_id
        self.priority.expire(group)
        return pin_id

    def reset_to(self, seq: int) -> int:
        """``resetStartingSeq``: deliver again from ``seq`` (0: from the ack floor); returns where."""
        seq = reset_start(self.config, seq, self.ack_floor_stream, self.stream.store)
        self.acks.reset(seq)
        self.position.reset(seq, self.stream.store, self.filters)
        self.kick()
        return seq

    # -- requests on the consumer's subjects ---------------------------------------------------

    def _on_next(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        if not reply or self.closed:
            return True
        if not self.js.online(self.stream.name, self.name):
            return False  # no leader holds it: a request gets no responders
        if self.is_push:
            self.js.reply(reply, b"", status.consumer_is_push_based())
        elif required_level(hdr):
            self.js.reply(reply, b"", status.required_api_level())
        else:
            self.pull_request(reply, payload, *(requester(origin) if self.stream.timeline else (None, "")))
        return True

    def _on_reset(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> None:
        self.js.asset_request("consumer.reset", self, reply, hdr, payload)

    def pull_request(self, reply: str, payload: bytes, client: int | None = None, client_node: str = "") -> None:
        """A pull (``MSG.NEXT`` from ``client``, ``client_node``'s if another server's, or ``+NXT``): push ones refuse it."""
        if self.is_push:
            self.js.reply(reply, b"", status.consumer_is_push_based())
            return
        self.pulls.request(reply, payload, client, client_node)

    # -- acks --------------------------------------------------------------------------

    def terminate(
        self, stream_sequence: int, consumer_sequence: int, delivery_count: int, reason: str, reply: str
    ) -> bool:
        """``processTerm``: ack ``stream_sequence`` for good, with the ``MSG_TERMINATED`` advisory."""
        return self.ack_messages.terminate(stream_sequence, consumer_sequence, delivery_count, reason, reply)

    # -- delivery ------------------------------------------------------------------

    def kick(self) -> None:
        """Deliver whatever can be delivered now."""
        self.loop.kick()

    def _release(self, seq: int) -> None:
        """This consumer is done with ``seq``: the stream's retention decides whether it goes."""
        self.stream.acked(self, seq)

    def lost_push_interest(self) -> None:
        """A push delivery reached nobody: stop pushing until interest returns."""
        self.active = False

    # -- stream events -------------------------------------------------------------------

    def signaled(self, subject: str) -> bool:
        """Whether the stream tells this consumer about a new message on ``subject``."""
        if len(subjects := self.signal_subjects) == 1:  # one filter, or none (">": every subject), no generator
            return subjects[0] == ">" or matches(subjects[0], subject)
        return any(matches(f, subject) for f in subjects)

    def message_stored(self, msg: StoredMessage) -> None:
        """``processStreamSignal``."""
        if self.signaled(msg.subject):
            position = self.position
            position.stored(msg.seq)
            if msg.seq >= position.next_stream_sequence:
                self.loop.kick()

    def message_removed(self, seq: int, subject: str = "") -> None:
        """The stream removed ``seq`` (limits, a delete): a pending delivery of it is terminated.

        Only a consumer signaled for ``subject`` hears of it (nats-server's
        ``storeUpdates``): one whose filters an update removed hears of no
        removal, so its pending count keeps the message.
        """
        if subject and not self.signaled(subject):
            return
        if not subject or self.wants(subject):
            self.position.removed(seq)
        entry = self.pending.get(seq)
        if entry is not None:
            self.terminate(seq, entry[0], self.delivery_count(seq), UNACKED_LIMITS, "")
        else:
            self.acks.forget(seq)

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
        raised = self.acks.purged(start, wider, self._stored)
        self.position.purged(start, self.acks.ack_floor_consumer if raised else 0)
        self.acks.settle_after_purge()
        self._recount_pending()
        self.kick()

    # -- info --------------------------------------------------------------------------

    def info(self, dynamic_metadata: bool = True) -> dict[str, Any]:
        """ConsumerInfo, as ``$JS.API.CONSUMER.INFO`` and monitoring report it."""
        if not self.is_push:
            self.pulls.process(eos=False)
        self.position.clamp(self.stream.store)
        info: dict[str, Any] = {
            "stream_name": self.stream.name,
            "name": self.name,
            "created": gotime.rfc3339(self.created_ns),
            "config": consumerconfig.to_json(self.config, dynamic_metadata),
            "delivered": self.acks.delivered_info(self.next_consumer_sequence, self.next_stream_sequence),
            "ack_floor": self.acks.ack_floor_info(),
            "num_ack_pending": len(self.acks.pending),
            "num_redelivered": 0 if self.config["max_deliver"] == 1 else len(self.acks.redelivery_counts),
            "num_waiting": 0 if self.is_push else len(self.pulls.queue),
            "num_pending": max(self.num_pending, 0),
        }
        cluster = self.js.cluster_section(self.stream.name, self.name)
        if cluster is not None:
            info["cluster"] = cluster
        if self.is_push and self.active:
            info["push_bound"] = True
        remaining = self.pause_timer.remaining_ns()
        if remaining > 0:
            info["paused"] = True
            info["pause_remaining"] = remaining
        info["ts"] = gotime.rfc3339(self.clock.time_ns())
        groups = self.priority.state() if self.priority is not None else []
        if groups:
            info["priority_groups"] = groups
        return info
