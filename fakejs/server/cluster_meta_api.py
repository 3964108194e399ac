"""The system account's JetStream requests of a cluster: ``$JS.API.META.LEADER.STEPDOWN`` and ``$JS.API.SERVER.REMOVE``.

nats-server answers them only for clients of the system account (others
get no reply at all):

* ``META.LEADER.STEPDOWN`` moves the meta leader to another running server
  (``placement.preferred`` if given: unknown is 10005 ``preferred server
  "n9" not known``) and answers ``{"success": true}``;
* ``SERVER.REMOVE`` (``{"peer": name or peer id}``) takes a server out of
  the meta group: an empty request is 10003 ``bad request``, a server the
  cluster does not know 10044 ``server is not a member of the cluster``.
  The server's replicas move to servers that are free, as ``PEER.REMOVE``
  would move them.

Each server of the in-process cluster answers what its own clients send
(the subscriptions are not announced over routes), from the shared meta
layer.
"""

from __future__ import annotations

import json
from typing import Any

from fakejs.core.options import SYSTEM_ACCOUNT
from fakejs.core.router import Router, Subscription
from fakejs.gocompat import ids
from fakejs.gocompat.gojson import dumps
from fakejs.jetstream.errors import ApiError, api_error
from fakejs.jetstream.service.meta import Meta
from fakejs.server.server import Server

__all__ = ["MetaRequests"]

STEPDOWN = "$JS.API.META.LEADER.STEPDOWN"
REMOVE = "$JS.API.SERVER.REMOVE"
TYPE = "io.nats.jetstream.api.v1."


class MetaRequests:
    """The two requests, answered on every running server's system account."""

    def __init__(self, meta: Meta) -> None:
        self.meta = meta
        self._subscriptions: dict[int, tuple[Router, list[Subscription]]] = {}

    def serve(self, server: Server) -> None:
        account = server.broker.accounts.get(server.options.system_account or SYSTEM_ACCOUNT)
        if account is None or id(server) in self._subscriptions:
            return
        router = account.router

        def answer(kind: str, handler: Any) -> Any:
            def on_request(subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> None:
                if not reply:
                    return
                try:
                    doc: dict[str, Any] = {"type": TYPE + kind, **handler(payload)}
                except ApiError as error:
                    doc = {"type": TYPE + kind, "error": error.to_dict()}
                router.publish(reply, "", None, dumps(doc).encode(), None)

            return on_request

        subscriptions = [
            router.subscribe_internal(
                STEPDOWN, answer("meta_leader_stepdown_response", self._step_down), local_only=True
            ),
            router.subscribe_internal(REMOVE, answer("meta_server_remove_response", self._remove), local_only=True),
        ]
        self._subscriptions[id(server)] = (router, subscriptions)

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

    def _step_down(self, payload: bytes) -> dict[str, Any]:
        placement = self._body(payload).get("placement") or {}
        preferred = str(placement.get("preferred") or "") if isinstance(placement, dict) else ""
        meta = self.meta
        if preferred and preferred not in meta.nodes:
            raise api_error("JSClusterNoPeersErrF", err=f'preferred server "{preferred}" not known')
        if preferred and preferred == meta.leader:
            raise api_error("JSClusterNoPeersErrF", err=f'preferred server "{preferred}" is already leader')
        candidates = [name for name in meta.running() if name != meta.leader]
        if preferred and meta.is_running(preferred):
            meta.leader = preferred
        elif candidates:
            meta.leader = meta.rng.choice(candidates)
        return {"success": True}

    def _remove(self, payload: bytes) -> dict[str, Any]:
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
        return {"success": True}
