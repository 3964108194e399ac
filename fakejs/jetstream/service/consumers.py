"""Creating, updating and removing a stream's consumers, and the retention their acks drive.

These are nats-server's ``addConsumerWithAction`` rules: defaults and
validation, the create/update ``action`` semantics, the work-queue
partitioning rules and the stream's consumer limit -- plus what acks mean
for work-queue and interest streams (a message leaves when no consumer
needs it any more).
"""

from __future__ import annotations

import random
from functools import partial

from fakejs.core.clock import Clock
from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.router import Router
from fakejs.core.subjects import overlap
from fakejs.gocompat import ids
from fakejs.gocompat.gotime import GoTime
from fakejs.jetstream import advisories
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config import consumer_rules
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.consumer_rules import EPHEMERAL_INACTIVE_THRESHOLD
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.consumer.registry import consumers_of
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service import limits
from fakejs.jetstream.service.persistence import Persistence
from fakejs.jetstream.stream.stream import Stream, StreamConsumer


class ConsumerAdmin:
    """Adds, updates and removes an account's consumers, and applies the retention their acks drive.

    It checks what a consumer's config may be and may become, picks names,
    keeps to the consumer limits and work-queue rules, and writes consumers
    through :class:`~fakejs.jetstream.service.persistence.Persistence`; the
    consumer applies a change to itself (:meth:`~fakejs.jetstream.consumer.consumer.Consumer.reconfigure`).
    """

    def __init__(
        self, router: Router, clock: Clock, rng: random.Random, persistence: Persistence, limits: JetStreamLimits
    ) -> None:
        self.router = router
        self.clock = clock
        self.random = rng
        self.persistence = persistence
        self.limits = limits  # the account's JetStream limits

    # -- create and update ------------------------------------------------------------------

    def create(
        self, stream: Stream, config: ConsumerConfig, action: str, pedantic: bool, asked_identity: str
    ) -> tuple[Consumer, str]:
        """``CONSUMER.CREATE``: a new consumer, or an existing one updated or confirmed.

        Returns the consumer and the stream identity to echo to the client
        (empty unless the consumer is direct or sourcing).
        """
        if config["direct"] and config["sourcing"] and config["name"]:
            self._sourcing(stream, config)
        existing = stream.consumers.get(config["name"]) if config["name"] else None
        if existing is not None:
            config["pause_until"] = existing.config["pause_until"]
        identity = ""
        if config["direct"] or config["sourcing"]:
            identity = stream.identity()
            if asked_identity and asked_identity != identity:
                raise api_error("JSConsumerStreamIdentityMismatchF", msg=identity)
        consumerconfig.set_static_metadata(config)
        return self.add(stream, config, action, pedantic), identity

    def _sourcing(self, stream: Stream, config: ConsumerConfig) -> None:
        """A mirror's or source's consumer: a durable acked by flow control on an interest or
        work-queue stream (it must hold messages back), else a direct one with a unique name."""
        if stream.config["retention"] != "limits":
            config["direct"] = False
            config["durable_name"] = config["name"]
            config["ack_policy"] = "flow_control"
            config["ack_wait"] = config["max_deliver"] = config["inactive_threshold"] = 0
        else:
            config["name"] = f"{config['name']}-{ids.consumer_name(self.random)}"

    def add(self, stream: Stream, config: ConsumerConfig, action: str, pedantic: bool) -> Consumer:
        account_limits = self.limits
        consumer_rules.apply_defaults(config, stream.config, pedantic, account_limits.max_ack_pending)
        consumer_rules.check(config, stream.config, account_limits.max_ack_pending)
        name = config["durable_name"] or config["name"]
        existing: Consumer | None = consumers_of(stream).get(name) if name else None
        if existing is not None:
            if action == "create":
                consumerconfig.copy_static_metadata(config, existing.config)
                if config != existing.config:
                    raise api_error("JSConsumerAlreadyExists")
            if stream.config["retention"] == "workqueue" and not _partition_unique(
                stream, name, consumerconfig.filters(config)
            ):
                raise api_error("JSConsumerWQConsumerNotUniqueErr")
            self.update(existing, config)
            return existing
        if action == "update":
            raise api_error("JSConsumerDoesNotExist")
        _check_room(stream, name, config, account_limits)
        name = consumer_rules.new_consumer_name(name, config, lambda taken: taken in stream.consumers, self.random)
        if not config["durable_name"] and not config["inactive_threshold"]:
            config["inactive_threshold"] = EPHEMERAL_INACTIVE_THRESHOLD
        return self._start(stream, name, config)

    def _start(self, stream: Stream, name: str, config: ConsumerConfig) -> Consumer:
        consumer = Consumer(stream, name, config, self.clock.time_ns())
        consumer.select_start()
        try:
            self.persistence.consumer_added(stream, consumer)
        except OSError:
            raise api_error("JSConsumerCreateErrF", err="error creating store for consumer") from None
        stream.register_consumer(consumer)
        consumer.start()
        return consumer

    def update(self, consumer: Consumer, config: ConsumerConfig) -> None:
        """``updateConfig``: apply what may change in place."""
        old = consumer.config
        interest = self.router.has_exact_interest(old["deliver_subject"]) if consumer.is_push else False
        consumer_rules.check_update(old, config, interest)
        if not old["durable_name"] and config["inactive_threshold"] <= 0:
            # Still ephemeral while this update is applied: the default threshold is stamped once more.
            config["inactive_threshold"] = EPHEMERAL_INACTIVE_THRESHOLD
        stream = consumer.stream
        # An interest stream drops what no consumer needs once the filters changed (``cleanupNoInterestMessages``).
        consumer.reconfigure(
            config, partial(self.drop_unneeded, stream) if stream.config["retention"] == "interest" else None
        )
        self.persistence.consumer_updated(stream, consumer)
        if stream.timeline:
            stream.timeline.record("consumer.update", stream=stream.name, consumer=consumer.name)
        consumer.js.after_answer(consumer.kick)  # the update reply goes out before what it lets through

    def pause(self, consumer: Consumer, until: GoTime | None) -> None:
        """``CONSUMER.PAUSE``: hold delivery back until ``until`` (None: resume now), announced and stored."""
        paused = consumer.pause(until)
        stream = consumer.stream
        if stream.timeline:
            until_ns = None if until is None else until.ns
            stream.timeline.record("consumer.pause", stream=stream.name, consumer=consumer.name, until=until_ns)
        advisories.pause(consumer, paused, until)
        self.persistence.consumer_updated(stream, consumer)
        if not paused:
            consumer.kick()

    @staticmethod
    def unpin(consumer: Consumer, group: str) -> None:
        """``CONSUMER.UNPIN``: the group's pinned client loses its pin (the group must be the consumer's)."""
        if group not in consumer.config["priority_groups"]:
            raise api_error("JSConsumerInvalidPriorityGroupErr")
        consumer.unpin(group)

    # -- removal and retention ---------------------------------------------------------------

    def remove(self, stream: Stream, consumer: StreamConsumer, cause: str = "api") -> None:
        """``consumer`` goes (``cause``: why, for the timeline); interest retention drops what nobody needs now."""
        stream.unregister_consumer(consumer)
        consumer.delete(cause)
        self.persistence.consumer_removed(stream, consumer)
        if stream.config["retention"] == "interest":
            self.drop_unneeded(stream)

    def acked(self, stream: Stream, consumer: StreamConsumer, seq: int) -> None:
        """A consumer is done with ``seq``: remove it if retention says so."""
        retention = stream.config["retention"]
        msg = stream.store.get(seq)
        if msg is None:
            return
        if retention == "workqueue":
            stream.remove_message(seq)
        elif retention == "interest":
            for other in consumers_of(stream).values():
                if other is not consumer and needs_ack(other, seq, msg.subject):
                    return
            stream.remove_message(seq)

    def drop_unneeded(self, stream: Stream) -> None:
        """Interest streams: remove every message no remaining consumer needs (all of them when none is left)."""
        if not stream.consumers:
            stream.purge()
            return
        for msg in list(stream.store):
            if not any(needs_ack(c, msg.seq, msg.subject) for c in consumers_of(stream).values()):
                stream.remove_message(msg.seq)

    @staticmethod
    def listed(stream: Stream) -> list[Consumer]:
        """The consumers ``CONSUMER.NAMES`` and ``CONSUMER.LIST`` show, by name: direct ones are internal."""
        return sorted((c for c in consumers_of(stream).values() if not c.config["direct"]), key=lambda c: c.name)


def needs_ack(consumer: Consumer, seq: int, subject: str) -> bool:
    """``needAck``: whether the consumer still has to see or acknowledge ``seq``."""
    if not consumer.wants(subject):
        return False
    ack_floor: int = consumer.ack_floor_stream
    if consumer.config["ack_policy"] in ("none", "all", "flow_control"):
        return seq > ack_floor
    if seq <= ack_floor:
        return False
    return seq >= consumer.next_stream_sequence or seq in consumer.pending


def _partition_unique(stream: Stream, name: str, filters: list[str]) -> bool:
    """No other consumer of a work-queue stream may see the same subjects."""
    for other in consumers_of(stream).values():
        if other.name == name:
            continue
        other_filters = other.filters
        if not other_filters or not filters:
            return False
        for mine in filters:
            for theirs in other_filters:
                if overlap(mine, theirs):
                    return False
    return True


def _check_room(stream: Stream, name: str, config: ConsumerConfig, account: JetStreamLimits) -> None:
    """The consumer limit (the stream's, or the account's when smaller) and the work-queue rules."""
    if not config["direct"]:
        counted = sum(1 for c in stream.consumers.values() if not c.config["direct"])
        limits.consumer_room(account, stream.config["max_consumers"], counted)
    if stream.config["retention"] == "workqueue" and not config["direct"]:
        if config["ack_policy"] not in ("explicit", "flow_control"):
            raise api_error("JSConsumerWQRequiresExplicitAckErr")
        if config["deliver_policy"] != "all":
            raise api_error("JSConsumerWQConsumerNotDeliverAllErr")
        if stream.consumers:
            filters = consumerconfig.filters(config)
            if not filters:
                raise api_error("JSConsumerWQMultipleUnfilteredErr")
            if not _partition_unique(stream, name, filters):
                raise api_error("JSConsumerWQConsumerNotUniqueErr")
