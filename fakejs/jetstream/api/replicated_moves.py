"""``$JS.API.STREAM.PEER.EVACUATE``, ``STREAM.CANCEL_MOVE`` and ``CONSUMER.PEER.EVACUATE`` in a JetStream
replicated across servers.

As nats-server's, the meta leader answers them (their errors too, see
:data:`META_ANSWERED`): an evacuation is checked as a ``PEER.REMOVE`` is
(10003 for an empty request or ``peer``), then started and answered
``{"success": true}``; a move cancelled is answered by the stream's leader
once the stream is back where it was.  The moves themselves are
:mod:`fakejs.jetstream.service.replicated_moves`'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fakejs.jetstream.api import leaders
from fakejs.jetstream.api.replicated_audit import client_info
from fakejs.jetstream.api.request import Request
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service.replicated_peers import Asked

if TYPE_CHECKING:
    from fakejs.jetstream.service.replicated import ReplicatedJetStream

__all__ = ["META_ANSWERED", "MoveRequests", "peer_named"]

STREAM_EVACUATE = "$JS.API.STREAM.PEER.EVACUATE.{stream}"
CANCEL_MOVE = "$JS.API.STREAM.CANCEL_MOVE.{stream}"
CONSUMER_EVACUATE = "$JS.API.CONSUMER.PEER.EVACUATE.{stream}.{consumer}"
META_ANSWERED = frozenset((STREAM_EVACUATE, CANCEL_MOVE, CONSUMER_EVACUATE))  # the meta leader answers their errors


def peer_named(request: Request) -> str:
    """The server a ``PEER.REMOVE`` or ``PEER.EVACUATE`` names (10003 for an empty request or name, as
    nats-server)."""
    if request.is_empty():
        raise api_error("JSBadRequestErr")
    peer = str(request.decode(leaders.PEER_REMOVE_REQUEST).get("peer") or "")
    if not peer:
        raise api_error("JSBadRequestErr")
    return peer


class MoveRequests:
    """The evacuations and move cancels of one server's ``$JS.API`` in a replicated JetStream (see the module
    docstring)."""

    def __init__(self, domain: ReplicatedJetStream) -> None:
        self.domain = domain
        self.moves = domain.moves

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        return {
            STREAM_EVACUATE: self._evacuate_stream,
            CANCEL_MOVE: self._cancel_move,
            CONSUMER_EVACUATE: self._evacuate_consumer,
        }

    async def _evacuate_stream(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        await self.moves.evacuate_stream(stream, peer_named(request))
        return {"success": True}

    async def _cancel_move(self, request: Request, stream: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        client = client_info(self.domain.js, request.origin)
        await self.moves.cancel_move(stream, Asked(request.reply, client, request.subject))
        return None  # the stream's leader answers once the stream is back where it was

    async def _evacuate_consumer(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        if not self.domain.is_meta_leader:
            return None
        request.check_level()
        self.moves.evacuate_consumer(stream, consumer, peer_named(request))
        return {"success": True}
