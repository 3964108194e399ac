"""Priority groups (ADR-42): overflow, pinned_client and prioritized policies.

:class:`PriorityGroups` is consulted by the pull dispatch for every waiting
request that could take the next message (:meth:`PriorityGroups.admit`),
stamps ``Nats-Pin-Id`` on deliveries of a pinned consumer, and checks pin
ids when pulls arrive (:func:`check_pull`).  The pin is dropped when the
pinned client pulls nothing for ``priority_timeout`` (reason ``timeout``)
or on ``$JS.API.CONSUMER.UNPIN`` (reason ``admin``); the next eligible
request then gets a fresh pin.  The timeline hears of each pin and unpin
(and of a fresh pin taken back from a request refused at once: ``refused``).  ``prioritized`` needs nothing here beyond
the wait queue's ordering.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.gocompat import gotime
from fakejs.gocompat.gotime import NS
from fakejs.jetstream import status
from fakejs.jetstream.config.consumer import ConsumerConfig
from fakejs.jetstream.consumer.pull_requests import PullGroup, WaitingRequest
from fakejs.jetstream.consumer.view import ConsumerName, ConsumerView
from fakejs.protocol import headers as hdrs

PIN_ID = "Nats-Pin-Id"

# What the dispatch does with a waiting request: give it the message, try the
# next request, or refuse it ("409 Wrong Pin ID") and drop it.
Admission = Literal["serve", "skip", "refuse"]


def wanted(config: ConsumerConfig, pinned: bool) -> bool:
    """Whether a consumer with ``config`` keeps priority-group state (a pin outlives a switch to no policy)."""
    return config["priority_policy"] != "none" or bool(config["priority_groups"]) or pinned


def check_pull(config: ConsumerConfig, group: PullGroup | None, groups: PriorityGroups | None) -> bytes | None:
    """The status refusing a pull's priority-group fields, or None when they are acceptable."""
    policy = config["priority_policy"]
    if group is not None:
        if (group["min_pending"] or group["min_ack_pending"]) and policy != "overflow":
            return status.bad_request("Not a Overflow Priority consumer")
        if group["id"] and policy != "pinned_client":
            return status.bad_request("Not a Pinned Client Priority consumer")
        if not 0 <= group["priority"] <= 9:
            return status.bad_request("Priority must be between 0 and 9")
    if group is not None and policy != "none":
        if not group["group"]:
            return status.bad_request("Priority Group missing")
        if group["group"] not in config["priority_groups"]:
            return status.bad_request("Invalid Priority Group")
        if groups is not None:
            return groups.check_pin(group)
    return None


class PriorityGroups:
    """The pin of a ``pinned_client`` consumer and the ``overflow`` thresholds.

    ``new_pin_id`` makes a pin id (a NUID); ``on_pinned(group, pin_id)`` and
    ``on_unpinned(group, reason)`` announce pin changes (advisories);
    ``recorder`` is the server's timeline, ``name`` the consumer's there.
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        new_pin_id: Callable[[], str],
        on_pinned: Callable[[str, str], None],
        on_unpinned: Callable[[str, str], None],
        recorder: Recorder = NO_RECORDER,
        name: ConsumerName | None = None,
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._new_pin_id = new_pin_id
        self._on_pinned = on_pinned
        self._on_unpinned = on_unpinned
        self._recorder = recorder
        self._name = name if name is not None else ConsumerName("", "")
        self.pin_id = ""
        self.pinned_ns = 0
        self._timer: TimerHandle | None = None
        self._assigned_now = False

    @property
    def policy(self) -> str:
        return str(self._consumer.config["priority_policy"])

    @property
    def groups(self) -> list[str]:
        return list(self._consumer.config["priority_groups"])

    # -- pulls arriving --------------------------------------------------------------

    def check_pin(self, group: PullGroup) -> bytes | None:
        """A pull naming the current pin keeps it alive; any other id is refused."""
        if self.policy != "pinned_client" or not self.pin_id:
            return None
        if group["id"] == self.pin_id:
            self._arm(group["group"])
        elif group["id"]:
            return status.pin_id_mismatch()
        return None

    # -- delivery ------------------------------------------------------------------------

    def admit(self, request: WaitingRequest) -> Admission:
        """Whether ``request`` may take the next message.

        A pin, once given, binds whatever the policy later becomes: requests
        without an id wait and requests with another id are refused.
        """
        self._assigned_now = False
        group = request.group
        request_id = group["id"] if group is not None else ""
        if not self.pin_id and self.policy == "pinned_client":
            if request_id:
                return "refuse"
            if group is not None and group["group"]:
                self._assign(group, request.reply)
                self._assigned_now = True
        elif self.pin_id and request_id != self.pin_id:
            return "skip" if not request_id else "refuse"
        if (
            self.policy == "overflow"
            and group is not None
            and (group["min_pending"] > 0 or group["min_ack_pending"] > 0)
        ):
            consumer = self._consumer
            pending_ok = group["min_pending"] > 0 and group["min_pending"] <= consumer.num_pending + 1
            ack_ok = group["min_ack_pending"] > 0 and group["min_ack_pending"] <= consumer.num_ack_pending
            if not (pending_ok or ack_ok):
                return "skip"
        return "serve"

    def request_dropped(self, request: WaitingRequest) -> None:
        """A request was refused after a pin was handed to it: take the pin back."""
        if self._assigned_now:
            group = request.group
            self._unassign(group["group"] if group is not None else "", "refused")
            self._assigned_now = False

    def stamp(self, hdr: bytes | None) -> bytes | None:
        """Pinned-client deliveries always carry ``Nats-Pin-Id`` (empty when nobody is pinned)."""
        if self.policy != "pinned_client":
            return hdr
        return hdrs.add(hdr, PIN_ID, self.pin_id)

    # -- the pin ---------------------------------------------------------------------------

    def _assign(self, group: PullGroup, reply: str) -> None:
        self.pin_id = self._new_pin_id()
        self.pinned_ns = self._clock.time_ns()
        group["id"] = self.pin_id
        self._arm(group["group"])
        if self._recorder:
            self._record("pin", group["group"], reply=reply)
        self._on_pinned(group["group"], self.pin_id)

    def _unassign(self, group: str, reason: str) -> None:
        """Drop the pin (``reason``, for the timeline: ``timeout``, ``admin``, ``refused``)."""
        if self._recorder:
            self._record("unpin", group, reason=reason)
        self.pin_id = ""
        self.pinned_ns = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, group: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
        ttl = self._consumer.config["priority_timeout"]
        self._timer = self._clock.call_later(ttl / NS, self._expired, group)

    def _expired(self, group: str) -> None:
        self._timer = None
        if not self.pin_id or self._consumer.closed:
            return
        self._unassign(group, "timeout")
        self._on_unpinned(group, "timeout")
        self._consumer.kick()

    def expire(self, group: str) -> None:
        """The pin's timeout, now (a fault): the ``timeout`` advisory, then the next pull is pinned."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.pin_id:
            self._unassign(group, "timeout")
            self._on_unpinned(group, "timeout")
            self._consumer.kick()

    def unpin(self, group: str) -> None:
        """``$JS.API.CONSUMER.UNPIN``: drop the pin (an advisory even when nobody was pinned)."""
        self._unassign(group, "admin")
        self._on_unpinned(group, "admin")
        self._consumer.kick()

    def _record(self, kind: str, group: str, **fields: str) -> None:
        name = self._name
        self._recorder.record(
            kind, stream=name.stream, consumer=name.consumer, group=group, pin_id=self.pin_id, **fields
        )

    def close(self) -> None:
        """Stop the pin's timer (the consumer is deleted or no longer has priority groups)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def state(self) -> list[dict[str, str]]:
        """ConsumerInfo ``priority_groups``: only the first group is reported."""
        if not self.groups:
            return []
        entry: dict[str, str] = {"group": self.groups[0]}
        if self.pin_id:
            entry["pinned_client_id"] = self.pin_id
        entry["pinned_ts"] = gotime.rfc3339(self.pinned_ns)
        return [entry]
