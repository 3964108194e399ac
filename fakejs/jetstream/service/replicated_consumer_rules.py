"""A consumer create in a JetStream replicated across servers: the meta leader's checks against the assignments.

These are :class:`~fakejs.jetstream.service.consumers.ConsumerAdmin`'s rules
(nats-server's ``addConsumerWithAction``), asked of the meta group's
assignments instead of a server's local streams: the defaults and checks of
the configuration, the ``action`` (create, update), what an update may not
change (``checkNewConsumerConfig``), the stream's consumer limit, the
work-queue rules and the name (a generated one for a consumer without).  What
a replicated consumer does not run yet is refused by name.

An assignment carries its configuration as the JSON document the API shows
(:func:`config_document`), and a replica reads it back with
:func:`config_from_document`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from typing import Any

from fakejs.core.jetstream_limits import JetStreamLimits
from fakejs.core.subjects import overlap
from fakejs.gocompat.gojson import decode_request, dumps
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config import consumer_rules
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.config.consumer_rules import EPHEMERAL_INACTIVE_THRESHOLD
from fakejs.jetstream.config.stream import StreamConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.service import limits

__all__ = ["check_consumer", "config_document", "config_from_document"]


def config_document(config: ConsumerConfig) -> dict[str, Any]:
    """The configuration as a plain JSON document (what an assignment carries)."""
    document: dict[str, Any] = json.loads(dumps(consumerconfig.to_json(config, dynamic_metadata=False)))
    return document


def config_from_document(document: dict[str, Any]) -> ConsumerConfig:
    """The configuration an assignment's document holds."""
    body = decode_request(consumerconfig.CREATE_REQUEST, dumps({"config": document}).encode())
    return consumerconfig.from_request(body.get("config"))


def check_consumer(
    stream_config: StreamConfig,
    config: ConsumerConfig,
    action: str,
    pedantic: bool,
    existing: Callable[[str], ConsumerConfig | None],
    others: Mapping[str, ConsumerConfig],
    account_limits: JetStreamLimits,
    rng: random.Random,
    not_built: Callable[[str], ApiError],
    deliver_has_interest: Callable[[str], bool],
) -> tuple[str, ConsumerConfig, bool]:
    """``CONSUMER.CREATE``'s checks; the consumer's name, its configuration (an existing consumer's own when
    unchanged, its new one for an update) and whether it is new.

    ``existing(name)`` is the configuration of the stream's consumer of that
    name, if any; ``others`` the configurations of the stream's consumers by
    name; ``deliver_has_interest(subject)`` whether a push consumer's deliver
    subject has a subscriber in the cluster.
    """
    _refuse_unbuilt(config, not_built)
    consumerconfig.set_static_metadata(config)
    consumer_rules.apply_defaults(config, stream_config, pedantic, account_limits.max_ack_pending)
    consumer_rules.check(config, stream_config, account_limits.max_ack_pending)
    name = config["durable_name"] or config["name"]
    before = existing(name) if name else None
    if before is not None:
        consumerconfig.copy_static_metadata(config, before)
        if config_document(config) == config_document(before):
            return name, before, False
        if action == "create":
            raise api_error("JSConsumerAlreadyExists")
        return name, _checked_update(stream_config, name, before, config, others, deliver_has_interest), False
    if action == "update":
        raise api_error("JSConsumerDoesNotExist")
    _check_room(stream_config, config, others, account_limits)
    name = consumer_rules.new_consumer_name(name, config, lambda taken: existing(taken) is not None, rng)
    if not config["durable_name"] and not config["inactive_threshold"]:
        config["inactive_threshold"] = EPHEMERAL_INACTIVE_THRESHOLD
    return name, config, True


def _checked_update(
    stream_config: StreamConfig,
    name: str,
    before: ConsumerConfig,
    config: ConsumerConfig,
    others: Mapping[str, ConsumerConfig],
    deliver_has_interest: Callable[[str], bool],
) -> ConsumerConfig:
    """An update's checks (a single server's ``updateConfig``): the work-queue partition, then what may not
    change; an ephemeral keeps its default inactivity threshold."""
    if stream_config["retention"] == "workqueue":
        filters = consumerconfig.filters(config)
        for other_name, other in others.items():
            theirs = consumerconfig.filters(other)
            if other_name != name and (
                not theirs or not filters or any(overlap(mine, their) for mine in filters for their in theirs)
            ):
                raise api_error("JSConsumerWQConsumerNotUniqueErr")
    interest = bool(before["deliver_subject"]) and deliver_has_interest(before["deliver_subject"])
    consumer_rules.check_update(before, config, interest)
    if not before["durable_name"] and config["inactive_threshold"] <= 0:
        config["inactive_threshold"] = EPHEMERAL_INACTIVE_THRESHOLD
    return config


def _refuse_unbuilt(config: ConsumerConfig, not_built: Callable[[str], ApiError]) -> None:
    if config["direct"] or config["sourcing"]:
        raise not_built("a mirror's or source's consumer of a work-queue or interest stream")


def _check_room(
    stream_config: StreamConfig, config: ConsumerConfig, others: Mapping[str, ConsumerConfig], account: JetStreamLimits
) -> None:
    """The consumer limit (the stream's, or the account's when smaller) and the work-queue rules."""
    limits.consumer_room(account, stream_config["max_consumers"], len(others))
    if stream_config["retention"] != "workqueue":
        return
    if config["ack_policy"] not in ("explicit", "flow_control"):
        raise api_error("JSConsumerWQRequiresExplicitAckErr")
    if config["deliver_policy"] != "all":
        raise api_error("JSConsumerWQConsumerNotDeliverAllErr")
    if not others:
        return
    filters = consumerconfig.filters(config)
    if not filters:
        raise api_error("JSConsumerWQMultipleUnfilteredErr")
    for other in others.values():
        theirs = consumerconfig.filters(other)
        if not theirs or any(overlap(mine, their) for mine in filters for their in theirs):
            raise api_error("JSConsumerWQConsumerNotUniqueErr")
