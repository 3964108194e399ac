"""``$JS.API.CONSUMER.*`` of a JetStream replicated across a cluster's servers: answered by the server that leads.

As nats-server's servers do, each server hears every request and answers
what it leads:

- the **meta leader**: the creates (``CONSUMER.CREATE``, named or not, and
  ``CONSUMER.DURABLE.CREATE``: checked as a single server checks them, then
  proposed through :class:`~fakejs.jetstream.cluster.MetaLeader`),
  ``CONSUMER.DELETE``, ``CONSUMER.NAMES``, ``CONSUMER.LIST`` (each consumer's
  info asked of its leader), and a request about a stream or consumer that
  does not exist;
- the **stream's leader**: a mirror's or source's consumer (``direct``) of a
  limits stream, made there alone and unreplicated, as nats-server makes it;
- the **consumer's leader**: ``CONSUMER.INFO``, and the answer to a create
  once the consumer runs under its assignment; its own subscriptions take
  the pull requests (``CONSUMER.MSG.NEXT``) and acks, from any server.

``CONSUMER.RESET`` reaches the consumer's leader on its own subscription and
is answered there as on a single server (the reset of its stored state
proposed to the group, applied by every replica); ``CONSUMER.PAUSE`` is the
meta leader's (the assignment proposed again), ``CONSUMER.UNPIN`` the
consumer leader's (its pins are its own); step-downs are
:mod:`fakejs.jetstream.api.replicated_leaders`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from fakejs.jetstream import advisories
from fakejs.jetstream.api import consumers
from fakejs.jetstream.api.dispatch import asset_answer, encode
from fakejs.jetstream.api.late_answers import answer_once_heard
from fakejs.jetstream.api.replicated_audit import audit, client_info
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.routes import ROUTES
from fakejs.jetstream.config import consumer as consumerconfig
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.service.replicated import ReplicatedJetStream
from fakejs.jetstream.service.replicated_consumer_rules import config_document, config_from_document
from fakejs.jetstream.service.replicated_peers import Asked

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_consumers import ConsumerReplica

__all__ = ["ConsumerRequests"]

RESET_PATTERN = "$JS.API.CONSUMER.RESET.{stream}.{consumer}"


class ConsumerRequests:
    """The consumer requests of one server's ``$JS.API`` in a replicated JetStream (see the module docstring)."""

    def __init__(self, js: JetStream, domain: ReplicatedJetStream) -> None:
        self.js = js
        self.domain = domain
        domain.answer_consumer = self._answer_create
        reset = ROUTES.find("$JS.API.CONSUMER.RESET.S.C")
        assert reset is not None and reset.pattern == RESET_PATTERN
        js.serve_asset("consumer.reset", asset_answer(js, reset))  # the leader's consumer resets, its state proposed

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        return {
            "$JS.API.CONSUMER.CREATE.{stream}": self._create_ephemeral,
            "$JS.API.CONSUMER.CREATE.{stream}.{consumer}": self._create_named,
            "$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{filter...}": self._create_named,
            "$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{consumer}": self._create_durable,
            "$JS.API.CONSUMER.INFO.{stream}.{consumer}": self._info,
            "$JS.API.CONSUMER.DELETE.{stream}.{consumer}": self._delete,
            "$JS.API.CONSUMER.NAMES.{stream}": self._names,
            "$JS.API.CONSUMER.LIST.{stream}": self._list,
            "$JS.API.CONSUMER.PAUSE.{stream}.{consumer}": self._pause,
            "$JS.API.CONSUMER.UNPIN.{stream}.{consumer}": self._unpin,
        }

    def answers_errors(self, stream: str, consumer: str) -> bool:
        """A refusal about a consumer is its leader's; the meta leader's while it has none this server knows of
        (and the consumer is not placed elsewhere)."""
        held = self.domain.consumers.replicas.get((stream, consumer))
        if held is not None and held.group is not None and held.group.leader is not None:
            return held.is_leader
        assigned = self.domain.consumer_assignment(stream, consumer)
        if assigned is not None and self.domain.peer not in assigned.group.peers:
            return False
        return self.domain.is_meta_leader

    # -- the meta leader's -------------------------------------------------------------------------

    async def _create_ephemeral(self, request: Request, stream: str) -> dict[str, Any] | None:
        direct = self._direct(request, stream)
        if direct is not None:
            return (
                self._create_direct(partial(consumers.create_ephemeral, self.js, request, stream)) if direct else None
            )
        if self.domain.is_meta_leader:
            await self._create(request, stream, *consumers.ephemeral_request(request, stream))
        return None

    async def _create_named(self, request: Request, stream: str, consumer: str, filter: str = "") -> Any:
        direct = self._direct(request, stream)
        if direct is not None:
            create = partial(consumers.create_named, self.js, request, stream, consumer, filter)
            return self._create_direct(create) if direct else None
        if self.domain.is_meta_leader:
            await self._create(request, stream, *consumers.named_request(request, stream, consumer, filter))
        return None

    async def _create_durable(self, request: Request, stream: str, consumer: str) -> None:
        if self.domain.is_meta_leader:
            await self._create(request, stream, *consumers.durable_request(request, stream, consumer))

    # -- a mirror's or source's consumer: the stream leader's --------------------------------------

    def _direct(self, request: Request, stream: str) -> bool | None:
        """A direct consumer (a mirror's or source's) of a limits stream is made on the stream's leader
        alone, unreplicated, as nats-server makes it: whether this server makes it, None when the request
        is the meta leader's (not a direct consumer, a stream that does not exist, a sourcing consumer of a
        work-queue or interest stream: refused by name)."""
        try:
            body = json.loads(request.payload) if request.payload else {}
        except ValueError:
            return None
        config = body.get("config") if isinstance(body, dict) else None
        if not isinstance(config, dict) or not config.get("direct"):
            return None
        assigned = self.domain.assigned(stream)
        if assigned is None:
            return None
        if config.get("sourcing") and assigned.config.get("retention", "limits") != "limits":
            return None
        replica = self.domain.replicas.replicas.get(stream)
        return replica is not None and replica.is_leader

    def _create_direct(self, create: Callable[[], Any]) -> Any:
        try:
            return create()
        except ApiError as error:  # answered here: the meta leader does not answer for direct consumers
            return {"error": error.to_dict()}

    async def _create(self, request: Request, stream: str, body: dict[str, Any], config: ConsumerConfig) -> None:
        """Checked against the assignments and proposed; the consumer's leader answers once it runs."""
        action, pedantic = body.get("action", ""), bool(body.get("pedantic", False))
        name, checked, new = self.domain.check_consumer(stream, config, action, pedantic)
        leader = self.domain.leader
        assert leader is not None
        assigned = self.domain.consumer_assignment(stream, name)
        stream_config = self.domain.stream_config(stream)
        retention = "" if stream_config is None else stream_config["retention"]
        # nats-server: an ephemeral of a limits stream has one replica unless it asks for more.
        one = new and not checked["durable_name"] and retention == "limits"
        replicas = 1 if one and checked["num_replicas"] <= 1 else None
        document = config_document(checked)
        if assigned is not None and document == config_document(config_from_document(assigned.config)):
            document = assigned.config  # unchanged: the assignment is proposed again as it is
        client = client_info(self.js, request.origin)
        asked = Asked(request.reply, client, request.subject)
        if assigned is not None and await self.domain.peer_changes.rescale_consumer(assigned, document, asked):
            return
        await leader.create_consumer(
            self.js.account_name, stream, name, document, request.reply, client, replicas, request.subject
        )

    async def _pause(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        """nats-server's meta leader: the consumer's assignment proposed again with ``pause_until`` (or without),
        each replica pausing the consumer it runs; answered as a single server answers."""
        if not self.domain.is_meta_leader:
            return None
        body = request.decode_if_json(consumers.PAUSE_REQUEST)
        if self.domain.assigned(stream) is None:
            raise api_error("JSStreamNotFoundErr")
        assigned = self.domain.consumer_assignment(stream, consumer)
        if assigned is None:
            raise api_error("JSConsumerNotFoundErr")
        asked = body.get("pause_until")
        until = None if asked is None or asked.is_zero else asked.utc()
        config = config_from_document(assigned.config)
        config["pause_until"] = until
        consumerconfig.set_static_metadata(config)
        assert self.domain.leader is not None
        await self.domain.leader.create_consumer(self.js.account_name, stream, consumer, config_document(config))
        return consumers.pause_answer(until, self.js.clock.time_ns())

    async def _delete(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        if not request.is_empty():
            raise api_error("JSNotEmptyRequestErr")
        if self.domain.assigned(stream) is None:
            raise api_error("JSStreamNotFoundErr")
        assert self.domain.leader is not None
        await self.domain.leader.delete_consumer(self.js.account_name, stream, consumer)
        return {"success": True}

    def _listed(self, request: Request, stream: str, limit: int) -> tuple[list[str], int, int]:
        if self.domain.assigned(stream) is None:
            raise api_error("JSStreamNotFoundErr")
        body = request.decode_if_json(consumers.PAGED_REQUEST)
        names = [ca.name for ca in self.domain.consumer_assignments(stream)]
        total = len(names)
        offset = min(max(body.get("offset", 0), 0), total)
        return names[offset : offset + limit], total, offset

    async def _names(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        page, total, offset = self._listed(request, stream, consumers.NAMES_LIMIT)
        return {"total": total, "offset": offset, "limit": consumers.NAMES_LIMIT, "consumers": page}

    async def _list(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        page, total, offset = self._listed(request, stream, consumers.LIST_LIMIT)
        infos = await self.domain.consumer_infos(stream, page)
        listed: dict[str, Any] = {"total": total, "offset": offset, "limit": consumers.LIST_LIMIT}
        listed["consumers"] = [infos[name] for name in page if name in infos]
        missing = [name for name in page if name not in infos]
        if missing:
            listed["missing"] = missing
        return listed

    # -- the consumer leader's -----------------------------------------------------------------------

    def _leading(self, stream: str, consumer: str) -> Consumer | None:
        held = self.domain.consumers.replicas.get((stream, consumer))
        return held.consumer if held is not None and held.is_leader else None

    async def _info(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        led = self._leading(stream, consumer)
        if led is not None:
            if not request.is_empty():
                raise api_error("JSNotEmptyRequestErr")
            return led.info()
        self.domain.refuse_missing_consumer(stream, consumer)
        return None  # its leader answers (while it has none, nobody: the client asks again)

    async def _unpin(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        """The consumer's leader drops the group's pin (its pins are its own, as nats-server's leader's)."""
        led = self._leading(stream, consumer)
        if led is None:
            self.domain.refuse_missing_consumer(stream, consumer)
            return None
        self.js.consumer_admin.unpin(led, consumers.unpin_group(request))
        return {}

    def _answer_create(self, replica: ConsumerReplica) -> None:
        """The consumer's leader answers the create its assignment carries."""
        consumer = replica.consumer
        if consumer is None:
            return
        if self.js.recorder and not replica.announced:  # the timeline's create: on the consumer leader's server
            self.js.recorder.record("consumer.create", stream=replica.assignment.stream, consumer=consumer.name)
        doc = {"type": "io.nats.jetstream.api.v1.consumer_create_response", **consumer.info()}
        self.js.record_api_call(False)
        payload = encode(doc)
        assignment = replica.assignment
        subject = assignment.subject or f"$JS.API.CONSUMER.CREATE.{assignment.stream}.{assignment.name}"

        def after_the_answer() -> None:
            audit(self.js, subject, b"", payload, lambda: assignment.client)
            if not replica.announced:
                replica.announced = True
                advisories.named_consumer_action(self.js, assignment.stream, assignment.name, "create")

        answer_once_heard(self.js, assignment.reply, payload, after_the_answer)
