"""Priority groups (ADR-42): overflow, pinned_client and prioritized policies.

:class:`PriorityGroups` is consulted by the consumer's delivery loop for
every waiting request that could take the next message
(:meth:`PriorityGroups.admit`), stamps ``Nats-Pin-Id`` on deliveries of a
pinned consumer, and checks pin ids when pulls arrive.  The pin is dropped
when the pinned client pulls nothing for ``priority_timeout`` (reason
``timeout``) or on ``$JS.API.CONSUMER.UNPIN`` (reason ``admin``); the next
eligible request then gets a fresh pin.  ``prioritized`` needs nothing here
beyond the wait queue's ordering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.gocompat import gotime
from fakejs.jetstream import advisories, status
from fakejs.protocol import headers as hdrs

if TYPE_CHECKING:
    from fakejs.core.clock import TimerHandle
    from fakejs.jetstream.consumer.consumer import Consumer
    from fakejs.jetstream.consumer.waiting import WaitingRequest

PIN_ID = "Nats-Pin-Id"
NS = 1_000_000_000


class PriorityGroups:
    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.pin_id = ""
        self.pinned_ns = 0
        self._timer: TimerHandle | None = None
        self._assigned_now = False

    @property
    def policy(self) -> str:
        return str(self.consumer.config["priority_policy"])

    @property
    def groups(self) -> list[str]:
        return list(self.consumer.config["priority_groups"])

    # -- pulls arriving --------------------------------------------------------------

    def check_pin(self, group: dict[str, Any]) -> bytes | None:
        """A pull naming the current pin keeps it alive; any other id is refused."""
        if self.policy != "pinned_client" or not self.pin_id:
            return None
        if group["id"] == self.pin_id:
            self._arm(group["group"])
        elif group["id"]:
            return status.pin_id_mismatch()
        return None

    # -- delivery ------------------------------------------------------------------------

    def admit(self, request: WaitingRequest) -> str:
        """ "serve", "skip" (try the next request) or "drop" (request was answered and removed).

        A pin, once given, binds whatever the policy later becomes: requests
        without an id wait and requests with another id are refused.
        """
        self._assigned_now = False
        group = request.group
        request_id = group["id"] if group is not None else ""
        if not self.pin_id and self.policy == "pinned_client":
            if request_id:
                self._wrong_pin(request)
                return "drop"
            if group is not None and group["group"]:
                self._assign(group)
                self._assigned_now = True
        elif self.pin_id and request_id != self.pin_id:
            if not request_id:
                return "skip"
            self._wrong_pin(request)
            return "drop"
        if (
            self.policy == "overflow"
            and group is not None
            and (group["min_pending"] > 0 or group["min_ack_pending"] > 0)
        ):
            consumer = self.consumer
            pending_ok = group["min_pending"] > 0 and group["min_pending"] <= consumer.npc + 1
            ack_ok = group["min_ack_pending"] > 0 and group["min_ack_pending"] <= len(consumer.pending)
            if not (pending_ok or ack_ok):
                return "skip"
        return "serve"

    def request_dropped(self, request: WaitingRequest) -> None:
        """A request was refused after a pin was handed to it: take the pin back."""
        if self._assigned_now:
            self._unassign()
            self._assigned_now = False

    def stamp(self, hdr: bytes | None) -> bytes | None:
        """Pinned-client deliveries always carry ``Nats-Pin-Id`` (empty when nobody is pinned)."""
        if self.policy != "pinned_client":
            return hdr
        return hdrs.add(hdr, PIN_ID, self.pin_id)

    def _wrong_pin(self, request: WaitingRequest) -> None:
        consumer = self.consumer
        consumer.js.reply(request.reply, b"", status.wrong_pin_id(request.n, request.b))
        consumer.waiting.remove(request)

    # -- the pin ---------------------------------------------------------------------------

    def _assign(self, group: dict[str, Any]) -> None:
        self.pin_id = self.consumer.js.nuid()
        self.pinned_ns = self.consumer.clock.time_ns()
        group["id"] = self.pin_id
        self._arm(group["group"])
        advisories.pinned(self.consumer, group["group"], self.pin_id)

    def _unassign(self) -> None:
        self.pin_id = ""
        self.pinned_ns = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, group: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        ttl = self.consumer.config["priority_timeout"]
        self._timer = self.consumer.clock.call_later(ttl / NS, self._expired, group)

    def _expired(self, group: str) -> None:
        self._timer = None
        if not self.pin_id or self.consumer.closed:
            return
        self._unassign()
        advisories.unpinned(self.consumer, group, "timeout")
        self.consumer.kick()

    def expire(self, group: str) -> None:
        """The pin's timeout, now (a fault): the ``timeout`` advisory, then the next pull is pinned."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.pin_id:
            self._unassign()
            advisories.unpinned(self.consumer, group, "timeout")
            self.consumer.kick()

    def unpin(self, group: str) -> None:
        """``$JS.API.CONSUMER.UNPIN``: drop the pin (an advisory even when nobody was pinned)."""
        self._unassign()
        advisories.unpinned(self.consumer, group, "admin")
        self.consumer.kick()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def state(self) -> list[dict[str, Any]]:
        """ConsumerInfo ``priority_groups``: only the first group is reported."""
        if not self.groups:
            return []
        entry: dict[str, Any] = {"group": self.groups[0]}
        if self.pin_id:
            entry["pinned_client_id"] = self.pin_id
        entry["pinned_ts"] = gotime.rfc3339(self.pinned_ns)
        return [entry]
