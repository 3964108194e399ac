"""``$JS.API.SERVER.REMOVE`` and ``offline`` in a JetStream replicated across servers: what the meta leader
hears of the servers and what it takes out of ``_meta_``.

**Offline.**  nats-server marks a server offline when it hears its
``$SYS.SERVER.<id>.SHUTDOWN`` event (an orderly stop), or when no event of it
came for five event heartbeats (``orphMax``, 150 s); a crash is shown as not
``current`` until then.  Here the meta leader, hearing a server's shutdown
event in the system account, proposes the server's record with ``offline``
set; every server notes the servers it heard shut down, so that a new meta
leader proposes it for those it has no route to (the one that shut down may
have led); the server asks for its record without it when it runs again.  Stream
infos show ``"offline": true`` for such a replica, as nats-server's do.

**SERVER.REMOVE** (system account only; the meta leader answers, as in
nats-server, where only it listens): an empty request is 10003 ``bad
request``, one that is not JSON 10025, a server that is not a member (by
``peer_id``, else by the server name in ``peer``) 10044, a membership change
already under way 10202; otherwise the server is marked removed in the meta
state, the leader takes it out of the Raft membership of ``_meta_``, and
answers ``{"success": true}`` once that is applied.  The removed server stops
asking to join.

**META.LEADER.STEPDOWN** (system account only; the meta leader answers):
a body that is not JSON 10025, a ``placement`` checked as a stream's
step-down checks it (:mod:`fakejs.jetstream.service.replicated_leaders`),
then the leader hands ``_meta_`` over and answers ``{"success": true}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from fakejs.gocompat.gojson import Field, GoJSONError, Struct, decode_request, dumps
from fakejs.jetstream import advisories
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.replication import ProposalFailed, peer_id, system_router
from fakejs.jetstream.service.replicated_leaders import STEPDOWN_REQUEST, step_down_target

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.core.router import Subscription
    from fakejs.jetstream.cluster import MetaLeader, MetaStateMachine
    from fakejs.jetstream.replication import ReplicatedGroup


class MetaShare(Protocol):
    """What these requests need of a server's share of the replicated JetStream (``ReplicatedJetStream``)."""

    broker: Broker
    peer: str
    machine: MetaStateMachine
    group: ReplicatedGroup | None
    leader: MetaLeader | None
    changing: bool

    @property
    def js(self) -> advisories.Publisher: ...

    @property
    def is_meta_leader(self) -> bool: ...

    def spawn(self, work: Any) -> object: ...

    async def membership_settled(self, peer: str) -> None: ...


__all__ = ["REMOVE_SUBJECT", "SHUTDOWN_SUBJECT", "MetaShare", "ServerEvents", "system_answer"]

REMOVE_SUBJECT = "$JS.API.SERVER.REMOVE"
STEPDOWN_SUBJECT = "$JS.API.META.LEADER.STEPDOWN"
STEPDOWN_TYPE = "io.nats.jetstream.api.v1.meta_leader_stepdown_response"
SHUTDOWN_SUBJECT = "$SYS.SERVER.*.SHUTDOWN"
REMOVE_TYPE = "io.nats.jetstream.api.v1.meta_server_remove_response"
REMOVE_REQUEST = Struct("JSApiMetaServerRemoveRequest", (Field("peer", "string"), Field("peer_id", "string")))


def system_answer(share: MetaShare, reply: str, subject: str, request: bytes) -> Callable[[dict[str, Any]], None]:
    """The answer to a system account's request, then its audit in the system account (nats-server's)."""
    broker = share.broker
    router = system_router(broker)

    def answer(document: dict[str, Any]) -> None:
        response = dumps(document).encode()
        if reply:
            router.publish(reply, "", None, response, None)
        advisories.system_api_audit(share.js, router, broker.name, subject, request, response)

    return answer


class ServerEvents:
    """A server's subscriptions for the meta leader's view of the servers (see the module docstring)."""

    def __init__(self, share: MetaShare) -> None:
        self.share = share
        self._subscriptions: list[Subscription] = []
        self.shut_down: set[str] = set()  # the servers heard shutting down (their SHUTDOWN event)

    def start(self) -> None:
        router = system_router(self.share.broker)
        self._subscriptions = [
            router.subscribe_internal(SHUTDOWN_SUBJECT, self._shutdown),
            router.subscribe_internal(REMOVE_SUBJECT, self._remove),
            router.subscribe_internal(STEPDOWN_SUBJECT, self._step_down),
        ]

    def stop(self) -> None:
        router = system_router(self.share.broker)
        for subscription in self._subscriptions:
            router.unsubscribe(subscription)
        self._subscriptions = []

    def removed(self) -> None:
        """This server's own removal applied: nats-server logs it and sends the ``SERVER.REMOVED`` advisory in its
        system account (then disables its JetStream, which is not done here)."""
        broker = self.share.broker
        broker.log.error("JetStream being DISABLED, our server was removed from the cluster")
        advisories.server_removed(
            self.share.js, system_router(broker), broker.name, broker.server_id, broker.cluster_name
        )

    # -- offline ------------------------------------------------------------------------------------

    def _shutdown(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        try:
            name = str(json.loads(payload)["name"])  # the event is the server's ServerInfo
        except (ValueError, KeyError, TypeError):
            return True
        self.shut_down.add(name)  # every server keeps it: the meta leader may be the one that shut down
        self._mark_offline(name)
        return True

    def now_leading(self) -> None:
        """This server now leads ``_meta_``: the servers it heard shut down and not back are marked offline."""
        routes = self.share.broker.cluster
        routed = set() if routes is None else {peer.name for peer in routes.peers.values()}
        for name in sorted(self.shut_down - routed):
            self._mark_offline(name)

    def _mark_offline(self, name: str) -> None:
        share = self.share
        if not share.is_meta_leader or share.leader is None:
            return
        record = share.machine.state.peers.get(peer_id(name))
        if record is None or record.offline or record.removed or record.peer == share.peer:
            return
        share.spawn(share.leader.add_peer(record.name, record.cluster, record.tags, offline=True))

    # -- META.LEADER.STEPDOWN ------------------------------------------------------------------------

    def _step_down(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        share = self.share
        if not reply or not share.is_meta_leader or share.group is None or not share.group.first_to_act(reply):
            return True
        answer = self._answer(reply, subject, payload)
        try:
            placement = None
            if payload.lstrip(b" \t\r\n")[:1] in (b"{", b"["):
                try:
                    placement = decode_request(STEPDOWN_REQUEST, payload).get("placement")
                except GoJSONError as error:
                    raise api_error("JSInvalidJSONErr", err=str(error)) from None
            target = step_down_target(share.machine.state, share.group, placement, share.broker.random)
            share.group.step_down(target)
        except ApiError as error:
            answer({"type": STEPDOWN_TYPE, "error": error.to_dict()})
            return True
        answer({"type": STEPDOWN_TYPE, "success": True})
        return True

    # -- SERVER.REMOVE -------------------------------------------------------------------------------

    def _remove(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: object) -> bool:
        share = self.share
        if not reply or not share.is_meta_leader:
            return True
        answer = self._answer(reply, subject, payload)
        try:
            peer = self._member(payload)
        except ApiError as error:
            answer({"type": REMOVE_TYPE, "error": error.to_dict()})
            return True
        share.spawn(self._removing(peer, answer))
        return True

    def _answer(self, reply: str, subject: str, request: bytes) -> Callable[[dict[str, Any]], None]:
        return system_answer(self.share, reply, subject, request)

    def _member(self, payload: bytes) -> str:
        """The peer id the request names, or the API error nats-server answers."""
        if not payload.strip():
            raise api_error("JSBadRequestErr")
        try:
            body = decode_request(REMOVE_REQUEST, payload)  # nats-server's unmarshalRequest, and its error texts
        except GoJSONError as error:
            raise api_error("JSInvalidJSONErr", err=str(error)) from None
        share = self.share
        assert share.group is not None
        wanted_peer, wanted_name = str(body.get("peer_id") or ""), str(body.get("peer") or "")
        for member in sorted(share.group.members):
            if wanted_peer:
                if member == wanted_peer:
                    return member
                continue
            record = share.machine.state.peers.get(member)
            if record is not None and record.name == wanted_name:
                return member
        raise api_error("JSClusterServerNotMemberErr")

    async def _removing(self, peer: str, answer: Callable[[dict[str, Any]], None]) -> None:
        share = self.share
        if share.changing or share.leader is None:
            answer({"type": REMOVE_TYPE, "error": api_error("JSClusterServerMemberChangeInflightErr").to_dict()})
            return
        try:
            await share.leader.remove_peer(peer)
            await share.membership_settled(peer)
        except ApiError as error:
            answer({"type": REMOVE_TYPE, "error": error.to_dict()})
            return
        except (TimeoutError, ProposalFailed):
            return  # the leader changed meanwhile: the client asks again, as it would of nats-server
        answer({"type": REMOVE_TYPE, "success": True})
        try:
            await share.leader.move_off(peer)  # its streams go to other servers (processRemovePeer)
        except (ApiError, ProposalFailed):
            pass  # the leader changed meanwhile: the streams keep the removed server
