"""The system account's JetStream requests of a cluster: meta leader step-down, server removal, account purge.

nats-server answers them only for clients of the system account (others
get no reply at all):

* ``META.LEADER.STEPDOWN`` moves the meta leader to another running server
  (``placement.preferred`` if given: unknown is 10005 ``preferred server
  "n9" not known``) and answers ``{"success": true}``;
* ``SERVER.REMOVE`` (``{"peer": name or peer id}``) takes a server out of
  the meta group: an empty request is 10003 ``bad request``, a server the
  cluster does not know 10044 ``server is not a member of the cluster``.
  The server's replicas move to servers that are free, as ``PEER.REMOVE``
  would move them, and the server leaves the meta group: its JetStream is
  disabled (its ``/jsz`` says so, its INFO offers no ``jetstream``, no asset or meta leader goes there again),
  while its clients' requests are still answered by the others;
* ``ACCOUNT.PURGE.<account>`` deletes every stream of the account (with
  its consumers: only the global account has JetStream in a fakejs
  cluster), logs ``Purge request for account <name> (streams: <n>,
  consumer: <n>, hasAccount: <true when it had streams>)`` on the meta
  leader and answers ``{"initiated": true}``; a name with a path separator
  is 10051 ``account name can not contain path separators``.

Each server of the in-process cluster answers what its own clients send
(the subscriptions are not announced over routes), from the shared meta
layer.  As nats-server, the meta leader then publishes the request's
``$JS.EVENT.ADVISORY.API`` audit in its system account (with an empty
client info), and a removed server that is running announces
``$JS.EVENT.ADVISORY.SERVER.REMOVED`` in its own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.router import Router, Subscription
from fakejs.gocompat import ids
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream import advisories
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.service.meta import Meta
from fakejs.server.server import Server

if TYPE_CHECKING:
    from fakejs.jetstream import JetStreamWithApi

__all__ = ["MetaRequests", "system_router"]

STEPDOWN = "$JS.API.META.LEADER.STEPDOWN"
REMOVE = "$JS.API.SERVER.REMOVE"
PURGE = "$JS.API.ACCOUNT.PURGE.*"
TYPE = "io.nats.jetstream.api.v1."


def system_router(server: Server) -> Router | None:
    """The router of a server's system account (``None`` if it has none)."""
    account = server.broker.accounts.get(server.options.system_account or SYSTEM_ACCOUNT)
    return account.router if account is not None else None


class MetaRequests:
    """The three requests, answered on every running server's system account.

    ``js`` is the cluster's shared JetStream: the advisories are built through it (ids, clock, domain).
    """

    def __init__(self, meta: Meta, js: JetStreamWithApi) -> None:
        self.meta = meta
        self.js = js
        self._subscriptions: dict[int, tuple[Router, list[Subscription]]] = {}
        self._servers: dict[str, Server] = {}

    def serve(self, server: Server) -> None:
        router = system_router(server)
        self._servers[server.broker.name] = server
        if router is None or id(server) in self._subscriptions:
            return

        def answer(kind: str, handler: Any) -> Any:
            def on_request(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
                if not reply:
                    return
                leader = self.meta.leader
                try:
                    doc: dict[str, Any] = {"type": TYPE + kind, **handler(subject, payload)}
                except ApiError as error:
                    doc = {"type": TYPE + kind, "error": error.to_dict()}
                response = dumps(doc).encode()
                router.publish(reply, "", None, response, None)
                self._audit(leader, subject, payload, response)

            return on_request

        subscriptions = [
            router.subscribe_internal(
                STEPDOWN, answer("meta_leader_stepdown_response", self._step_down), local_only=True
            ),
            router.subscribe_internal(REMOVE, answer("meta_server_remove_response", self._remove), local_only=True),
            router.subscribe_internal(PURGE, answer("account_purge_response", self._purge), local_only=True),
        ]
        self._subscriptions[id(server)] = (router, subscriptions)

    def _system_of(self, name: str) -> Router | None:
        """The system account router of the running server ``name``."""
        server = self._servers.get(name)
        return system_router(server) if server is not None and self.meta.is_running(name) else None

    def _audit(self, leader: str, subject: str, request: bytes, response: bytes) -> None:
        """The meta leader that answered audits the request in its system account."""
        system = self._system_of(leader)
        if system is not None:
            advisories.system_api_audit(self.js, system, leader, subject, request, response)

    def stop(self) -> None:
        for router, subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                router.unsubscribe(subscription)
        self._subscriptions.clear()

    # -- the requests --------------------------------------------------------------------------

    def _body(self, payload: bytes) -> dict[str, Any]:
        if not payload.strip():
            return {}
        try:
            body = json.loads(payload)
        except ValueError:
            raise api_error("JSInvalidJSONErr", err="invalid request body") from None
        return body if isinstance(body, dict) else {}

    def _step_down(self, subject: str, payload: bytes) -> dict[str, Any]:
        placement = self._body(payload).get("placement") or {}
        preferred = str(placement.get("preferred") or "") if isinstance(placement, dict) else ""
        meta = self.meta
        if preferred and preferred not in meta.nodes:
            raise api_error("JSClusterNoPeersErrF", err=f'preferred server "{preferred}" not known')
        if preferred and preferred == meta.leader:
            raise api_error("JSClusterNoPeersErrF", err=f'preferred server "{preferred}" is already leader')
        candidates = [name for name in meta.running() if name != meta.leader]
        if preferred and meta.is_running(preferred):
            meta.elect_meta_leader(preferred)
        elif candidates:
            meta.elect_meta_leader(meta.rng.choice(candidates))
        return {"success": True}

    def _remove(self, subject: str, payload: bytes) -> dict[str, Any]:
        if not payload.strip():
            raise api_error("JSBadRequestErr")
        peer = str(self._body(payload).get("peer") or "")
        meta = self.meta
        name = next((n for n in meta.nodes if peer in (n, ids.get_hash(n))), "")
        if not name:
            raise api_error("JSClusterServerNotMemberErr")
        for group in list(meta.groups.values()):
            if name in group.replicas:
                meta.remove_peer(group, name)
        system = self._system_of(name)
        if system is not None:
            broker = self._servers[name].broker
            advisories.server_removed(self.js, system, name, broker.server_id, broker.cluster_name)
        meta.remove_server(name)
        removed = self._servers.get(name)
        if removed is not None:
            removed.broker.jetstream_enabled = False
        return {"success": True}

    def _purge(self, subject: str, payload: bytes) -> dict[str, Any]:
        """nats-server's ``jsLeaderAccountPurgeRequest`` in a cluster: the account's streams go, then the answer."""
        name = subject.split(".")[4]
        if "/" in name or "\\" in name:
            raise api_error("JSStreamGeneralErrorF", err="account name can not contain path separators")
        js = self.js
        streams = list(js.streams.values()) if name == js.account.name else []
        consumers = sum(len(stream.consumers) for stream in streams)
        for stream in streams:
            js.delete_stream(stream, "account_purge")
        leader = self._servers.get(self.meta.leader)
        if leader is not None:
            has_account = "true" if streams else "false"
            leader.broker.log.info(
                "Purge request for account %s (streams: %d, consumer: %d, hasAccount: %s)",
                name,
                len(streams),
                consumers,
                has_account,
            )
        return {"initiated": True}
