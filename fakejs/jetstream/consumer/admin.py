"""Creating, updating and removing a stream's consumers, and the retention they drive.

These are nats-server's ``addConsumerWithAction`` rules: defaults and
validation, the create/update ``action`` semantics, the work-queue
partitioning rules and the stream's consumer limit -- plus what acks mean
for work-queue and interest streams (a message leaves when no consumer
needs it any more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import overlap
from fakejs.gocompat import ids
from fakejs.jetstream import advisories
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.stream import MAX_NAME_LEN, is_valid_name
from fakejs.jetstream.consumer.consumer import Consumer
from fakejs.jetstream.errors import api_error

if TYPE_CHECKING:
    from fakejs.jetstream.stream.stream import Stream


def _partition_unique(stream: Stream, name: str, filters: list[str]) -> bool:
    """No other consumer of a work-queue stream may see the same subjects."""
    for other in stream.consumers.values():
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


def add_consumer(stream: Stream, config: dict[str, Any], action: str, pedantic: bool) -> Consumer:
    consumerconfig.apply_defaults(config, stream.config, pedantic)
    consumerconfig.check(config, stream.config)
    retention = stream.config["retention"]
    name = config["durable_name"] or config["name"]
    if name:
        existing = stream.consumers.get(name)
        if existing is not None:
            if action == "create":
                consumerconfig.copy_static_metadata(config, existing.config)
                if config != existing.config:
                    raise api_error("JSConsumerAlreadyExists")
            if retention == "workqueue" and not _partition_unique(stream, name, consumerconfig.filters(config)):
                raise api_error("JSConsumerWQConsumerNotUniqueErr")
            update_consumer(existing, config)
            return existing
    if action == "update":
        raise api_error("JSConsumerDoesNotExist")
    max_consumers = stream.config["max_consumers"]
    counted = sum(1 for c in stream.consumers.values() if not c.config["direct"])
    if max_consumers > 0 and counted >= max_consumers and not config["direct"]:
        raise api_error("JSMaximumConsumersLimitErr")
    if retention == "workqueue" and not config["direct"]:
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
    if config["durable_name"]:
        if len(config["durable_name"]) > MAX_NAME_LEN:
            raise api_error("JSConsumerNameTooLongErrF", max=MAX_NAME_LEN)
        name = config["durable_name"]
    elif not name:
        # A generated name is the consumer's name but does not enter its config.
        name = ids.consumer_name(stream.js.broker.random)
        while name in stream.consumers:
            name = ids.consumer_name(stream.js.broker.random)
    if not is_valid_name(name):
        raise api_error("JSConsumerBadDurableNameErr")
    if not config["durable_name"] and not config["inactive_threshold"]:
        # Ephemeral consumers go away after 5 seconds without activity.
        config["inactive_threshold"] = 5 * 1_000_000_000
    consumer = Consumer(stream, name, config, stream.clock.time_ns())
    consumer.select_start()
    try:
        stream.js.consumer_added(stream, consumer)
    except OSError:
        raise api_error("JSConsumerCreateErrF", err="error creating store for consumer") from None
    stream.consumers[name] = consumer
    consumer.start()
    advisories.consumer_action(consumer, "create")
    return consumer


def update_consumer(consumer: Consumer, config: dict[str, Any]) -> None:
    """``updateConfig``: apply what may change in place."""
    interest = consumer.js.router.has_exact_interest(consumer.config["deliver_subject"]) if consumer.is_push else False
    consumerconfig.check_update(consumer.config, config, interest)
    old = consumer.config
    if not old["durable_name"] and config["inactive_threshold"] <= 0:
        # Still ephemeral while this update is applied: the default threshold is stamped once more.
        config["inactive_threshold"] = 5 * 1_000_000_000
    consumer.config = config
    consumer.filters = consumerconfig.filters(config)
    if consumer.filters != consumerconfig.filters(old):
        # nats-server re-registers the consumer for stream signals under its new
        # filters -- under none at all when the filters were removed, so such a
        # consumer is no longer told about new messages (its pending count and
        # waiting pulls only move on other events).
        consumer.signal_subjects = list(consumer.filters)
        consumer.recount_pending()
        if consumer.stream.config["retention"] == "interest":
            drop_unneeded(consumer.stream)  # ``cleanupNoInterestMessages``
    if config["deliver_subject"] != old["deliver_subject"]:
        router = consumer.js.router
        router.unwatch_interest(old["deliver_subject"], consumer.interest_changed)
        router.watch_interest(config["deliver_subject"], consumer.interest_changed)
        consumer.active = consumer.has_delivery_interest()
    consumer.configure_priority()
    if config["inactive_threshold"] != old["inactive_threshold"]:
        consumer.set_inactive_threshold()
        consumer.touch()
    consumer.stream.js.consumer_updated(consumer.stream, consumer)
    consumer.kick()


def remove_consumer(stream: Stream, consumer: Consumer) -> None:
    if stream.consumers.get(consumer.name) is consumer:
        del stream.consumers[consumer.name]
    consumer.delete()
    stream.js.consumer_removed(stream, consumer)
    if stream.config["retention"] == "interest":
        drop_unneeded(stream)


def needs_ack(consumer: Consumer, seq: int, subject: str) -> bool:
    """``needAck``: whether the consumer still has to see or acknowledge ``seq``."""
    if not consumer.wants(subject):
        return False
    policy = consumer.config["ack_policy"]
    if policy in ("none", "all", "flow_control"):
        return seq > consumer.asflr
    if seq <= consumer.asflr:
        return False
    return seq >= consumer.sseq or seq in consumer.pending


def message_acked(stream: Stream, consumer: Consumer, seq: int) -> None:
    """A consumer is done with ``seq``: remove it if retention says so."""
    retention = stream.config["retention"]
    msg = stream.store.get(seq)
    if msg is None:
        return
    if retention == "workqueue":
        stream.remove_message(seq)
    elif retention == "interest":
        for other in stream.consumers.values():
            if other is not consumer and needs_ack(other, seq, msg.subject):
                return
        stream.remove_message(seq)


def drop_unneeded(stream: Stream) -> None:
    """Interest streams: remove every message no remaining consumer needs (all of them when none is left)."""
    if not stream.consumers:
        stream.purge()
        return
    for msg in list(stream.store):
        if not any(needs_ack(c, msg.seq, msg.subject) for c in stream.consumers.values()):
            stream.remove_message(msg.seq)
