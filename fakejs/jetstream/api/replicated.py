"""``$JS.API`` of a JetStream replicated across a cluster's servers: each request answered by the server that leads.

Every server of the cluster subscribes to ``$JS.API.>`` in the account, so
each one hears every request (as nats-server's servers do) and answers only
what it leads, as nats-server does:

- the **meta leader**: ``$JS.API.INFO`` (usage summed over the servers), ``STREAM.CREATE``/``UPDATE``/``DELETE``
  (checked as a single server checks them, then proposed through
  :class:`~fakejs.jetstream.cluster.MetaLeader`), ``STREAM.NAMES``, a
  ``STREAM.LIST`` (each stream's info asked of its leader), a request about a stream that does not exist, and the refusal of what is not
  built yet in this mode (snapshots and restores:
  :func:`~fakejs.jetstream.service.replicated.not_built`);
- the **stream's leader**: ``STREAM.INFO`` (the stream and its mirrors as ``alternates``), ``PURGE``, ``MSG.GET``, ``MSG.DELETE``
  (purges and deletes proposed to the stream's group), and the answer to a
  create or update once the stream runs under its new assignment;
- every replica with ``allow_direct``: ``DIRECT.GET``, on the stream's own
  subscription, as on a single server;
- consumer requests: :mod:`fakejs.jetstream.api.replicated_consumers`;
  step-downs: :mod:`fakejs.jetstream.api.replicated_leaders`; evacuations and move cancels:
  :mod:`fakejs.jetstream.api.replicated_moves`.

Handlers decode, call the domain (:mod:`fakejs.jetstream.service.replicated`)
and encode; replies have the bytes of :mod:`fakejs.jetstream.api.streams`'.

The server that answers sends the ``$JS.EVENT.ADVISORY.API`` audit after its
reply (:func:`audit`), naming itself; a request carried out as a proposal
is audited without its body, as nats-server audits it.  The stream's leader
sends ``STREAM.CREATED`` after its answer to a create and ``STREAM.UPDATED``
before its answer to an update; leaders announce themselves and deleted
assets in :mod:`fakejs.jetstream.service.replicated_advisories` and
:mod:`fakejs.jetstream.service.replicated_streams`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.subjects import overlap
from fakejs.jetstream import advisories
from fakejs.jetstream.api import streams
from fakejs.jetstream.api.dispatch import encode, error_doc
from fakejs.jetstream.api.late_answers import answer_once_heard
from fakejs.jetstream.api.replicated_audit import API_PREFIX, audit, client_info, request_info
from fakejs.jetstream.api.replicated_consumers import ConsumerRequests
from fakejs.jetstream.api.replicated_leaders import LeaderRequests
from fakejs.jetstream.api.replicated_moves import META_ANSWERED as MOVES_ANSWERED
from fakejs.jetstream.api.replicated_moves import MoveRequests, peer_named
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.api.routes import ROUTES
from fakejs.jetstream.api.table import Route, Uncounted
from fakejs.jetstream.errors import API_FAILURES, ApiError, api_error
from fakejs.jetstream.replication import ProposalFailed
from fakejs.jetstream.service.replicated import ReplicatedJetStream, not_built, with_consumer_count
from fakejs.jetstream.service.replicated_meta import MetaMember
from fakejs.jetstream.service.replicated_moves import CANCEL_MOVE_PREFIX
from fakejs.jetstream.service.replicated_peers import Asked
from fakejs.jetstream.stream import info as stream_info

if TYPE_CHECKING:
    from fakejs.core.replicated_jetstream import ReplicatedJetStream as ReplicatedOptions
    from fakejs.core.router import Subscription
    from fakejs.jetstream.cluster import StreamAssignment
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated_streams import StreamReplica

__all__ = ["ReplicatedApi"]

STREAM_PEER_REMOVE = "$JS.API.STREAM.PEER.REMOVE.{stream}"
CONSUMER_PEER_REMOVE = "$JS.API.CONSUMER.PEER.REMOVE.{stream}.{consumer}"
# the meta leader answers their errors
META_ANSWERED = frozenset((STREAM_PEER_REMOVE, CONSUMER_PEER_REMOVE)) | MOVES_ANSWERED


def _advertised_subjects() -> tuple[str, ...]:
    """What a server tells the others it answers: every route's subject but those an asset answers on its own
    subscription (a consumer's ``MSG.NEXT``, a stream's ``DIRECT.GET``), so that a request to a consumer or
    stream whose server is down finds no responders, as nats-server's does."""
    return tuple(dict.fromkeys(route.subject for route in ROUTES.routes if not route.declined_prefix))


ADVERTISED = _advertised_subjects()


def _taken_above(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
    """An advertised subject's message: the server's ``$JS.API.>`` subscription takes it (this one declines)."""
    return False


class ReplicatedApi:
    """The account's ``$JS.API`` on one server of a replicated JetStream (see the module docstring)."""

    def __init__(self, js: JetStream, options: ReplicatedOptions, member: MetaMember | None = None) -> None:
        self.js = js
        self._own_member = member is None  # none given: the account's JetStream is the server's only one
        self.member = MetaMember(js.broker, options, js.store_dir) if member is None else member
        self.domain = ReplicatedJetStream(js, self.member)
        self.domain.answer = self._answer_assignment
        self._subscription: Subscription | None = None
        self._advertised: list[Subscription] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: dict[str, Callable[..., Awaitable[Any]]] = {
            "$JS.API.INFO": self._account_info,
            "$JS.API.STREAM.CREATE.{stream}": self._create,
            "$JS.API.STREAM.UPDATE.{stream}": self._update,
            "$JS.API.STREAM.DELETE.{stream}": self._delete,
            "$JS.API.STREAM.INFO.{stream}": self._info,
            "$JS.API.STREAM.NAMES": self._names,
            "$JS.API.STREAM.LIST": self._list,
            "$JS.API.STREAM.PURGE.{stream}": self._purge,
            "$JS.API.STREAM.MSG.DELETE.{stream}": self._delete_message,
            "$JS.API.STREAM.MSG.GET.{stream}": self._get_message,
            STREAM_PEER_REMOVE: self._remove_stream_peer,
            CONSUMER_PEER_REMOVE: self._remove_consumer_peer,
        }
        self.consumers = ConsumerRequests(js, self.domain)
        self._handlers.update(self.consumers.handlers())
        self._handlers.update(LeaderRequests(js, self.domain).handlers())
        self._handlers.update(MoveRequests(self.domain).handlers())

    def start(self) -> None:
        self.domain.start()
        if self._own_member:
            self.member.start()
        router = self.js.router
        router.request_info = request_info(self.js)
        self._subscription = router.subscribe_internal("$JS.API.>", self.dispatch, local_only=True)
        self._advertised = [router.subscribe_internal(subject, _taken_above) for subject in ADVERTISED]

    def stop(self) -> None:
        self.js.router.request_info = None
        if self._subscription is not None:
            self.js.router.unsubscribe(self._subscription)
            self._subscription = None
        for subscription in self._advertised:
            self.js.router.unsubscribe(subscription)
        self._advertised = []
        for task in self._tasks:
            task.cancel()
        self.domain.stop()
        if self._own_member:
            self.member.stop()

    # -- dispatch ---------------------------------------------------------------------------------------

    def dispatch(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool:
        if ROUTES.declines(subject):
            return False  # Direct Get: the stream's replicas answer on their own subscriptions
        route = ROUTES.find(subject)
        if route is None or route.served_by != "api":
            return True
        request = Request(subject, reply, hdr, payload, origin=origin)
        task = asyncio.get_running_loop().create_task(self._handle(route, request))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _handle(self, route: Route, request: Request) -> None:
        handler = self._handlers.get(route.pattern)
        tokens = route.bind(request.subject)
        try:
            if route.level_first:
                request.check_level()
            if route.offline_answer and self._offline(tokens):
                feature = "JSConsumerOfflineErr" if tokens.get("consumer") else "JSStreamOfflineErr"
                self._reply(request, error_doc(route, api_error(feature)), error=True, route=route)
                return
            if self.js.broker.faults and self._answers_errors(route, tokens) and self._fault_ignores(request):
                return
            if handler is None:  # the meta leader refuses what is not built yet
                if self.domain.is_meta_leader:
                    feature = route.pattern.removeprefix(API_PREFIX).split(".{")[0]
                    self._reply(request, error_doc(route, not_built(feature)), error=True, route=route)
                return
            body = await handler(request, **tokens)
        except ApiError as error:
            if self._answers_errors(route, tokens):
                self._reply(request, error_doc(route, error), error=True, route=route)
            return
        except ProposalFailed:
            return  # leadership moved meanwhile: nats-server's client times out and asks again
        except Exception as exc:  # noqa: BLE001 - a fakejs bug: answered at once, and recorded on the server
            if request.reply:
                failure = {"code": 500, "description": f"fakejs internal error: {exc!r}"}
                self.js.reply(request.reply, encode({"type": route.response, "error": failure}))
            self.js.broker.record_error(f"$JS.API request {request.subject}", exc)
            return
        if body is None:
            return
        if isinstance(body, Uncounted):
            self.js.reply(request.reply, encode({"type": route.response, **body.fields}))
        else:
            self._reply(request, {"type": route.response, **body}, error=False, route=route)

    def _fault_ignores(self, request: Request) -> bool:
        """The ``api.request`` hook point, fired by the server that answers (once per request) for the node the
        request arrived on: an injected fault may drop the request or fail it (raising the error it names)."""
        hit = self.js.broker.faults.fire("api.request", subject=request.subject, node=_arrival(self.js, request))
        if hit is None:
            return False
        if hit.change == "ignore":
            return True
        raise api_error(API_FAILURES[hit.args.get("error", "unavailable")])

    def _offline(self, tokens: dict[str, str]) -> bool:
        """On the meta leader: whether every server of the stream's (or consumer's) group is offline (shut down:
        nats-server's meta leader answers 10118 or 10119 for it)."""
        return self.domain.is_meta_leader and self.domain.all_offline(
            tokens.get("stream", ""), tokens.get("consumer", "")
        )

    def _answers_errors(self, route: Route, tokens: dict[str, str]) -> bool:
        """A refusal of a create, update or delete is the meta leader's; of another request, the consumer's or
        stream's leader's (the meta leader's when it has none)."""
        if route.proposed == "always" or route.pattern in META_ANSWERED:
            return self.domain.is_meta_leader
        stream = tokens.get("stream", "")
        if "consumer" in tokens:
            return self.consumers.answers_errors(stream, tokens["consumer"])
        replica = self.domain.replicas.replicas.get(stream)
        if replica is not None and replica.group is not None and replica.group.leader is not None:
            return replica.is_leader
        return self.domain.is_meta_leader

    def _reply(self, request: Request, doc: dict[str, Any], error: bool, route: Route) -> None:
        faults = self.js.broker.faults
        if faults:
            hit = faults.fire("api.reply", subject=request.subject, node=_arrival(self.js, request))
            if hit is not None:  # "rewrite": set top-level fields of the reply
                doc = {**doc, **hit.args.get("set", {})}
        self.js.record_api_call(error)
        payload = encode(doc)
        if request.reply:
            self.js.reply(request.reply, payload, request.reply_headers)
        shown = b"" if not error and self._proposed(route, request) else request.payload
        audit(self.js, request.subject, shown, payload, lambda: client_info(self.js, request.origin))

    def _proposed(self, route: Route, request: Request) -> bool:
        """Whether the request was carried out as a proposal (the route's ``proposed``; a purge of an R1 stream
        is not: nats-server's R1 streams have no group)."""
        if route.proposed != "replicated":
            return route.proposed == "always"
        assigned = self.domain.assigned(route.bind(request.subject).get("stream", ""))
        return assigned is not None and len(assigned.group.peers) > 1

    def _leading(self, stream: str) -> StreamReplica | None:
        replica = self.domain.replicas.replicas.get(stream)
        return replica if replica is not None and replica.is_leader else None

    def _stream_led_elsewhere(self, stream: str) -> bool:
        """Whether another server answers about ``stream`` (its leader); raises 10059 on the meta leader when the
        stream does not exist."""
        if self._leading(stream) is not None:
            return False
        if self.domain.assigned(stream) is None and self.domain.is_meta_leader:
            raise api_error("JSStreamNotFoundErr")
        return True

    # -- the meta leader's ----------------------------------------------------------------------------

    async def _account_info(self, request: Request) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        memory, storage = await self.domain.usage()
        info = self.js.account_info()
        info["memory"], info["storage"] = memory, storage
        info["streams"] = len(self.domain.assignments())
        return info

    async def _create(self, request: Request, stream: str) -> dict[str, Any] | None:
        config, pedantic = streams.create_request(request, stream)
        checked = self.domain.check_create(config, pedantic)
        existing = self.domain.assigned(stream)
        if existing is not None:
            if dict(existing.config) != checked:
                raise api_error("JSStreamNameExistErr")
            return self._created_before(existing)
        leader = self.domain.leader
        if leader is None or not self.domain.is_meta_leader:
            return None
        client = client_info(self.js, request.origin)
        await leader.create_stream(self.js.account_name, checked, request.reply, client, request.subject)
        return None  # the stream's leader answers once it runs

    def _created_before(self, existing: StreamAssignment) -> dict[str, Any] | None:
        """A create of the same configuration: the meta leader answers with its replica's info (its cluster
        section as a replica sees it), else the stream's leader does."""
        domain = self.domain
        meta_leader = domain.group.leader if domain.group is not None else None
        replica = domain.replicas.replicas.get(existing.name)
        if domain.is_meta_leader:
            return None if replica is None else replica.stream.info(cluster=True, domain=False)
        if replica is None or not replica.is_leader or meta_leader in existing.group.peers:
            return None
        return replica.stream.info(cluster=True, domain=False)

    async def _update(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        config, pedantic = streams.update_request(request, stream, self.domain.stream_config)
        checked = self.domain.check_update(config, pedantic)
        assert self.domain.leader is not None
        client = client_info(self.js, request.origin)
        if await self.domain.moves.move_by_placement(checked, Asked(request.reply, client, request.subject)):
            return None  # the stream's leader answers once it runs under the new configuration
        if not await self.domain.peer_changes.rescale(checked, request.reply, client, request.subject):
            await self.domain.leader.update_stream(
                self.js.account_name, checked, request.reply, client, request.subject
            )
        return None  # the stream's leader answers once it runs under the new configuration

    async def _remove_stream_peer(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        await self.domain.peer_changes.remove_stream_peer(stream, peer_named(request))
        return {"success": True}

    async def _remove_consumer_peer(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        request.check_level()
        await self.domain.peer_changes.remove_consumer_peer(stream, consumer, peer_named(request))
        return {"success": True}

    async def _delete(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        if not request.is_empty():
            raise api_error("JSNotEmptyRequestErr")
        assert self.domain.leader is not None
        await self.domain.leader.delete_stream(self.js.account_name, stream)
        return {"success": True}

    def _listed(self, request: Request, schema: Any, limit: int) -> tuple[list[str], int, int]:
        """The names of the page asked for (streams whose subjects overlap the request's ``subject``), the
        total, and the offset."""
        body = request.decode_if_json(schema)
        subject_filter = body.get("subject", "")
        found = [sa.name for sa in self.domain.assignments() if _matches(sa.config, subject_filter)]
        total = len(found)
        offset = min(max(body.get("offset", 0), 0), total)
        return found[offset : offset + limit], total, offset

    async def _names(self, request: Request) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        page, total, offset = self._listed(request, streams.STREAM_NAMES_REQUEST, streams.NAMES_LIMIT)
        return {"total": total, "offset": offset, "limit": streams.NAMES_LIMIT, "streams": page or None}

    async def _list(self, request: Request) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        page, total, offset = self._listed(request, streams.STREAM_LIST_REQUEST, streams.LIST_LIMIT)
        infos = await self.domain.stream_infos(page)
        listed: dict[str, Any] = {"total": total, "offset": offset, "limit": streams.LIST_LIMIT}
        listed["streams"] = [infos[name] for name in page if name in infos]
        missing = [name for name in page if name not in infos]
        if missing:
            listed["missing"] = missing
        return listed

    # -- the stream leader's --------------------------------------------------------------------------

    async def _info(self, request: Request, stream: str) -> Any:
        if self._stream_led_elsewhere(stream):
            return None
        info = streams.info(self.js, request, stream)
        assigned = [
            (sa.name, (sa.config.get("mirror") or {}).get("name", ""), sa.group.cluster)
            for sa in self.domain.assignments()
        ]
        if isinstance(info, dict):
            stream_info.with_alternates(info, stream_info.alternates(assigned, stream, self.js.domain))
            with_consumer_count(info, self.domain.consumer_count(stream))
        return info

    async def _get_message(self, request: Request, stream: str) -> Any:
        if self._stream_led_elsewhere(stream):
            return None
        return streams.get_message(self.js, request, stream)

    async def _purge(self, request: Request, stream: str) -> dict[str, Any] | None:
        if self._stream_led_elsewhere(stream):
            return None
        body: dict[str, Any] = {}
        if request.is_json_object_or_array():
            body = request.decode(streams.STREAM_PURGE_REQUEST)
            if body.get("seq", 0) > 0 and body.get("keep", 0) > 0:
                raise api_error("JSBadRequestErr")
        replica = self._leading(stream)
        assert replica is not None
        config = replica.stream.config
        if config["sealed"]:
            raise api_error("JSStreamSealedErr")
        if config["deny_purge"]:
            raise api_error("JSStreamPurgeFailedF", err="stream purge not permitted")
        before = replica.stream.store.msgs
        await replica.replicated.purge(body.get("filter", ""), body.get("seq", 0), body.get("keep", 0))
        return {"success": True, "purged": before - replica.stream.store.msgs}

    async def _delete_message(self, request: Request, stream: str) -> dict[str, Any] | None:
        if self._stream_led_elsewhere(stream):
            return None
        if request.is_empty():
            raise api_error("JSBadRequestErr")
        body = request.decode(streams.MSG_DELETE_REQUEST)
        replica = self._leading(stream)
        assert replica is not None
        config, seq = replica.stream.config, body.get("seq", 0)
        if config["sealed"]:
            raise api_error("JSStreamSealedErr")
        if config["deny_delete"]:
            raise api_error("JSStreamMsgDeleteFailedF", err="message delete not permitted")
        if replica.stream.store.get(seq) is None:
            missing = stream_info.missing_message(replica.stream.store, seq)
            return {"error": missing.to_dict()}
        await replica.replicated.delete_message(seq)
        return {"success": True}

    # -- answers to assignments ------------------------------------------------------------------------

    def _answer_assignment(self, replica: StreamReplica, kind: str) -> None:
        """The stream's new leader answers the create or update request its assignment carries."""
        stream, assignment = replica.stream, replica.assignment
        if self.js.recorder:  # the timeline's create or update: on the stream leader's server
            self.js.recorder.record(f"stream.{kind}", stream=stream.name)
        if kind == "create":
            doc: dict[str, Any] = {"type": "io.nats.jetstream.api.v1.stream_create_response"}
            doc.update(stream.info(cluster=True, domain=False))
            doc["did_create"] = True
        else:
            advisories.stream_action(self.js, stream.name, "modify")
            kind_of_reply = "cancel_move" if assignment.subject.startswith(CANCEL_MOVE_PREFIX) else "update"
            doc = {"type": f"io.nats.jetstream.api.v1.stream_{kind_of_reply}_response", **stream.info(cluster=True)}
        self.js.record_api_call(False)
        payload = encode(doc)
        verb = "CREATE" if kind == "create" else "UPDATE"
        subject = assignment.subject or f"{API_PREFIX}STREAM.{verb}.{stream.name}"

        def after_the_answer() -> None:
            audit(self.js, subject, b"", payload, lambda: assignment.client)
            if kind == "create":
                advisories.stream_action(self.js, stream.name, "create")

        answer_once_heard(self.js, assignment.reply, payload, after_the_answer)


def _arrival(js: JetStream, request: Request) -> str:
    """The name of the server the request arrived on: the other end of the route it came over, else this one."""
    remote = getattr(request.origin, "remote_name", None)
    return remote if isinstance(remote, str) and remote else js.broker.name


def _matches(config: Any, subject_filter: str) -> bool:
    if not subject_filter:
        return True
    subjects = config.get("subjects") or [config.get("name", "")]
    return any(overlap(subject_filter, subject) for subject in subjects)
