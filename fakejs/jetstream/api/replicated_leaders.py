"""``$JS.API.STREAM.LEADER.STEPDOWN`` and ``CONSUMER.LEADER.STEPDOWN`` in a JetStream replicated across servers.

As nats-server's, the stream's (or consumer's) leader answers: it checks the
request's ``placement`` (see
:mod:`fakejs.jetstream.service.replicated_leaders`), hands its group's
leadership over (a Raft leadership transfer) and replies ``{"success":
true}``; the meta leader answers about a stream or consumer that does not
exist.  A consumer's new leader answers the pulls waiting on the old one with
``409 Leadership Change``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from fakejs.jetstream.api.request import Request
from fakejs.jetstream.errors import api_error
from fakejs.jetstream.service.replicated_leaders import STEPDOWN_REQUEST, step_down_target

if TYPE_CHECKING:
    from fakejs.jetstream.replication import ReplicatedGroup
    from fakejs.jetstream.service.jetstream import JetStream
    from fakejs.jetstream.service.replicated import ReplicatedJetStream

__all__ = ["LeaderRequests"]


class LeaderRequests:
    """The step-down requests of one server's ``$JS.API`` in a replicated JetStream (see the module docstring)."""

    def __init__(self, js: JetStream, domain: ReplicatedJetStream) -> None:
        self.js = js
        self.domain = domain

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        return {
            "$JS.API.STREAM.LEADER.STEPDOWN.{stream}": self._stream,
            "$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}": self._consumer,
        }

    async def _stream(self, request: Request, stream: str) -> dict[str, Any] | None:
        replica = self.domain.replicas.replicas.get(stream)
        if replica is None or not replica.is_leader or replica.group is None:
            if self.domain.is_meta_leader and self.domain.assigned(stream) is None:
                raise api_error("JSStreamNotFoundErr")
            return None
        return self._step_down(request, replica.group)

    async def _consumer(self, request: Request, stream: str, consumer: str) -> dict[str, Any] | None:
        held = self.domain.consumers.replicas.get((stream, consumer))
        if held is None or not held.is_leader or held.group is None:
            self.domain.refuse_missing_consumer(stream, consumer)
            return None
        return self._step_down(request, held.group)

    def _step_down(self, request: Request, group: ReplicatedGroup) -> dict[str, Any] | None:
        if not group.first_to_act(request.reply):  # acted on already, by the leader that handed over to this one
            return None
        placement = None
        if request.is_json_object_or_array():
            placement = request.decode(STEPDOWN_REQUEST).get("placement")
        target = step_down_target(self.domain.machine.state, group, placement, self.js.rng)
        if len(group.members) > 1:  # a group of one elects its only member again: it keeps leading
            group.step_down(target)
        return {"success": True}
