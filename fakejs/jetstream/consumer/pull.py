"""The pull half of a consumer: requests, the waiting queue, heartbeats, expiry.

A pull request (``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>``) is
checked against the consumer's limits (``max_batch``, ``max_expires``,
``max_bytes``, priority groups) in nats-server's order, answered at once
when it cannot wait (no-wait with nothing pending), or queued.  Queued
requests take messages in turn; :meth:`PullHandling.process_waiting` ends
those that expired or were satisfied and sends their idle heartbeats, with
one timer on the server clock for the earliest thing due.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fakejs.jetstream import status
from fakejs.jetstream.consumer.waiting import BadPullRequest, WaitingRequest, parse_request

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer

NS = 1_000_000_000


class PullHandling:
    """Mixed into :class:`~fakejs.jetstream.consumer.consumer.Consumer`."""

    def pull_request(self: Consumer, reply: str, payload: bytes, hdr: bytes | None) -> None:
        """``processNextMsgRequest``: validate, queue, then try to deliver."""
        if self.is_push:
            self.js.reply(reply, b"", status.consumer_is_push_based())
            return
        faults = self.js.broker.faults
        if faults:
            hit = faults.fire("pull.request", stream=self.stream.name, consumer=self.name, reply=reply)
            if hit is not None:
                if hit.change == "reply_status":
                    self.js.reply(
                        reply, b"", status.custom(int(hit.args.get("code", 503)), str(hit.args.get("text", "")))
                    )
                return
        cfg = self.config
        try:
            request = parse_request(payload)
        except BadPullRequest as exc:
            self.js.reply(reply, b"", status.bad_request(str(exc)))
            return
        now = self.clock.monotonic()
        if cfg["max_batch"] > 0 and request.batch > cfg["max_batch"]:
            self.js.reply(reply, b"", status.exceeded_max_request_batch(cfg["max_batch"]))
            return
        if request.expires and cfg["max_expires"] > 0 and request.expires > cfg["max_expires"]:
            self.js.reply(reply, b"", status.exceeded_max_request_expires(cfg["max_expires"]))
            return
        if request.max_bytes > 0 and cfg["max_bytes"] > 0 and request.max_bytes > cfg["max_bytes"]:
            self.js.reply(reply, b"", status.exceeded_max_request_max_bytes(cfg["max_bytes"]))
            return
        problem = self._check_priority_request(request)
        if problem is not None:
            self.js.reply(reply, b"", problem)
            return
        self._touch()
        if self.waiting.is_full():
            self.process_waiting(eos=False)
        if request.no_wait:
            available = max(self.npc, 0) + len(self.rdq)
            if available == 0 and not request.expires:
                self.js.reply(reply, b"", status.no_messages())
                return
            if available > 0:
                blocked = self.process_waiting(eos=False)
                if available < blocked:
                    self.js.reply(reply, b"", status.requests_pending())
                    return
        waiting = WaitingRequest(
            reply=reply,
            n=request.batch,
            b=request.max_bytes,
            expires=now + request.expires / NS if request.expires else None,
            received=now,
            heartbeat=request.heartbeat / NS,
            next_heartbeat=now + request.heartbeat / NS if request.heartbeat else None,
            no_wait=request.no_wait,
            group=request.group,
        )
        if not self.waiting.add(waiting):
            if not request.heartbeat:
                self.js.reply(reply, b"", status.exceeded_max_waiting())
            return
        self.kick()

    def _check_priority_request(self: Consumer, request: Any) -> bytes | None:
        group = request.group
        policy = self.config["priority_policy"]
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
            if group["group"] not in self.config["priority_groups"]:
                return status.bad_request("Invalid Priority Group")
            if self.priority is not None:
                return self.priority.check_pin(group)
        return None

    def _next_waiting(self: Consumer, size: int) -> WaitingRequest | None:
        """``nextWaiting``: the request that takes the next message, if any."""
        router = self.js.router
        now = self.clock.monotonic()
        cycled = 0
        while len(self.waiting):
            request = self.waiting.peek()
            assert request is not None
            if request.expires is not None and now >= request.expires:
                self.js.reply(request.reply, b"", status.request_timeout(request.n, request.b))
                self.waiting.remove(request)
                continue
            if self.priority is not None:
                verdict = self.priority.admit(request)
                if verdict == "skip":
                    self.waiting.cycle()
                    cycled += 1
                    if cycled >= len(self.waiting):
                        return None
                    continue
                if verdict == "drop":
                    continue
            if request.b > 0:
                if size <= request.b:
                    request.b -= size
                    if request.b == 0:
                        request.n = 1
                else:
                    self.js.reply(request.reply, b"", status.message_size_exceeds_max_bytes(request.n, request.b))
                    if self.priority is not None:
                        self.priority.request_dropped(request)
                    self.waiting.remove(request)
                    continue
            if router.has_interest(request.reply):
                return self.waiting.pop()
            self.waiting.remove(request)
        return None

    def process_waiting(self: Consumer, eos: bool) -> int:
        """``processWaiting``: expire, answer finished no-wait requests, send heartbeats."""
        now = self.clock.monotonic()
        router = self.js.router
        next_due: float | None = None
        blocked = 0
        for request in self.waiting:
            expired = request.expires is not None and now >= request.expires
            if (eos and request.no_wait) or expired:
                if expired:
                    self.js.reply(request.reply, b"", status.request_timeout(request.n, request.b))
                    self._drop_request(request)
                    continue
                if request.expires is None or request.d > 0:
                    self.js.reply(request.reply, b"", status.no_messages())
                    self._drop_request(request)
                    continue
            if not router.has_interest(request.reply):
                self._drop_request(request)
                continue
            blocked += request.n
            if request.next_heartbeat is not None:
                if now >= request.next_heartbeat:
                    self.send_heartbeat(request.reply)
                    request.next_heartbeat = now + request.heartbeat
                next_due = request.next_heartbeat if next_due is None else min(next_due, request.next_heartbeat)
            if request.expires is not None:
                next_due = request.expires if next_due is None else min(next_due, request.expires)
        self._arm_wait_timer(next_due)
        return blocked

    def _drop_request(self: Consumer, request: WaitingRequest) -> None:
        self.waiting.remove(request)
        if self.priority is not None:
            self.priority.request_dropped(request)

    def _arm_wait_timer(self: Consumer, due: float | None) -> None:
        if due is None:
            if self._wait_timer is not None:
                self._wait_timer.cancel()
                self._wait_timer = None
                self._wait_deadline = None
            return
        if self._wait_timer is not None and self._wait_deadline == due:
            return
        if self._wait_timer is not None:
            self._wait_timer.cancel()
        self._wait_deadline = due
        self._wait_timer = self.clock.call_at(due, self._wait_timer_fired)

    def _wait_timer_fired(self: Consumer) -> None:
        self._wait_timer = None
        self._wait_deadline = None
        if not self.closed:
            self.process_waiting(eos=True)
            self.kick()

    def send_heartbeat(self: Consumer, subject: str) -> None:
        faults = self.js.broker.faults
        if faults and faults.fire("consumer.heartbeat", stream=self.stream.name, consumer=self.name):
            return
        self.js.reply(subject, b"", status.idle_heartbeat(self.dseq - 1, self.sseq - 1))
