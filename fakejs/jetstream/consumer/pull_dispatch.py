"""The pull side of a consumer: admitting pull requests and handing deliveries to them.

A pull request (``$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>``) is
checked against the consumer's limits (``max_batch``, ``max_expires``,
``max_bytes``, priority groups) in nats-server's order, answered at once
when it cannot wait (no-wait with nothing pending), or queued.  Queued
requests take messages in turn (:meth:`PullDispatch.next_waiting`);
:meth:`PullDispatch.process` ends those that expired or were satisfied and
sends their idle heartbeats, with one timer on the server clock for the
earliest thing due (a punctual one: a client measures a pull's expiry).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.hooks import Hooks
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.gocompat.gotime import NS
from fakejs.jetstream import status
from fakejs.jetstream.consumer import priority_groups
from fakejs.jetstream.consumer.priority_groups import PriorityGroups
from fakejs.jetstream.consumer.pull_requests import (
    BadPullRequest,
    PullRequest,
    WaitingRequest,
    WaitQueue,
    parse_request,
)
from fakejs.jetstream.consumer.view import ConsumerName, ConsumerView, Reply

if TYPE_CHECKING:
    from fakejs.core.router import Router


class PullDispatch:
    """The waiting pull requests of one consumer and the timer that expires them.

    ``name`` identifies the consumer to faults; ``touch`` counts a pull as activity; ``available`` tells how many
    messages a no-wait pull could get now; ``priority`` gives the consumer's
    priority groups, if it has any; ``track_interest`` tells where a reply's
    interest is watched (another account's subject for a request that came
    through a service import); ``before_serving(batch)`` lets the consumer's acks still waiting for the read's
    end be applied first when what the pull gets could depend on them.
    """

    def __init__(
        self,
        consumer: ConsumerView,
        clock: Clock,
        hooks: Hooks,
        name: ConsumerName,
        reply: Reply,
        has_interest: Callable[[str], bool],
        touch: Callable[[], None],
        available: Callable[[], int],
        priority: Callable[[], PriorityGroups | None],
        track_interest: Callable[[str], tuple[Router, str]] | None = None,
        recorder: Recorder = NO_RECORDER,
        before_serving: Callable[[int], None] | None = None,
    ) -> None:
        self._consumer = consumer
        self._clock = clock
        self._hooks = hooks
        self._name = name
        self._reply = reply
        self._has_interest = has_interest
        self._touch = touch
        self._available = available
        self._priority = priority
        self._track_interest = track_interest
        self._recorder = recorder  # the server's timeline (see fakejs.core.recorder)
        self._before_serving = before_serving
        config = consumer.config
        self.queue = WaitQueue(config["max_waiting"], config["priority_policy"] == "prioritized")
        self._timer: TimerHandle | None = None
        self._deadline: float | None = None
        self._kick_due = False

    def reconfigure(self) -> None:
        """The ``prioritized`` ordering follows the config (the policy may change on update)."""
        self.queue.prioritized = self._consumer.config["priority_policy"] == "prioritized"

    # -- requests arriving -------------------------------------------------------------

    def request(self, reply: str, payload: bytes, client: int | None = None, client_node: str = "") -> None:
        """``processNextMsgRequest``: validate, queue, then let the consumer deliver (``client``: who asked, for
        the timeline; None when unknown; ``client_node``: the server of a client of another one)."""
        if self._hooks:
            hit = self._hooks.fire("pull.request", stream=self._name.stream, consumer=self._name.consumer, reply=reply)
            if hit is not None:
                if hit.change == "reply_status":
                    code, text = int(hit.args.get("code", 503)), str(hit.args.get("text", ""))
                    self._end(reply, status.custom(code, text))
                return
        try:
            request = parse_request(payload)
        except BadPullRequest as exc:
            self._end(reply, status.bad_request(str(exc)))
            return
        if self._recorder:
            self._record_request(reply, request, client, client_node)
        now = self._clock.monotonic()
        problem = self._refusal(request)
        if problem is not None:
            self._end(reply, problem)
            return
        self._touch()
        if self._before_serving is not None:
            self._before_serving(request.batch)
        if self.queue.is_full():
            self.process(eos=False)
        if request.no_wait and self._answered_no_wait(reply, request):
            return
        waiting = WaitingRequest(
            reply=reply,
            batch_left=request.batch,
            bytes_left=request.max_bytes,
            expires=now + request.expires / NS if request.expires else None,
            heartbeat=request.heartbeat / NS,
            next_heartbeat=now + request.heartbeat / NS if request.heartbeat else None,
            no_wait=request.no_wait,
            group=request.group,
            interest=self._interest_of(reply),
        )
        if not self.queue.add(waiting):
            if not request.heartbeat:
                self._end(reply, status.exceeded_max_waiting())
            return
        if self.queue.prioritized:
            self._kick_after_read()
        else:
            self._consumer.kick()

    def _interest_of(self, reply: str) -> Callable[[], bool] | None:
        """The interest a request with ``reply`` waits on, when not the reply's own (``trackDownAccountAndInterest``)."""
        if self._track_interest is None:
            return None
        router, subject = self._track_interest(reply)
        return None if subject == reply else partial(router.has_interest, subject)

    def _interested(self, request: WaitingRequest) -> bool:
        """Whether anyone still listens for the request's deliveries."""
        if request.interest is not None:
            return request.interest()
        return self._has_interest(request.reply)

    def _kick_after_read(self) -> None:
        """Deliver once the pulls that came in the same read are queued too.

        nats-server queues a read's pull requests before its delivery loop
        runs, so with the ``prioritized`` policy the best priority among them
        gets the messages already pending, not the first to arrive.
        """
        if not self._kick_due:
            self._kick_due = True
            self._clock.call_soon(self._deferred_kick)

    def _deferred_kick(self) -> None:
        self._kick_due = False
        if not self._consumer.closed:
            self._consumer.kick()

    def _refusal(self, request: PullRequest) -> bytes | None:
        """The status refusing ``request`` for the consumer's limits, in nats-server's order."""
        cfg = self._consumer.config
        if cfg["max_batch"] > 0 and request.batch > cfg["max_batch"]:
            return status.exceeded_max_request_batch(cfg["max_batch"])
        if request.expires and cfg["max_expires"] > 0 and request.expires > cfg["max_expires"]:
            return status.exceeded_max_request_expires(cfg["max_expires"])
        if request.max_bytes > 0 and cfg["max_bytes"] > 0 and request.max_bytes > cfg["max_bytes"]:
            return status.exceeded_max_request_max_bytes(cfg["max_bytes"])
        return priority_groups.check_pull(cfg, request.group, self._priority())

    def _answered_no_wait(self, reply: str, request: PullRequest) -> bool:
        """A no-wait pull that cannot be served is answered at once; whether it was."""
        available = self._available()
        if available == 0 and not request.expires:
            self._end(reply, status.no_messages())
            return True
        if available > 0:
            blocked = self.process(eos=False)
            if available < blocked:
                self._end(reply, status.requests_pending())
                return True
        return False

    # -- handing out deliveries -----------------------------------------------------------

    def next_waiting(self, size: int) -> WaitingRequest | None:
        """``nextWaiting``: the request that takes the next message (of ``size`` bytes), if any."""
        priority = self._priority()
        now = self._clock.monotonic()
        cycled = 0
        while self.queue.waiting:
            request = self.queue.peek()
            assert request is not None
            if request.expires is not None and now >= request.expires:
                self._end(request.reply, status.request_timeout(request.batch_left, request.bytes_left))
                self.queue.remove(request)
                continue
            if priority is not None:
                verdict = priority.admit(request)
                if verdict == "skip":
                    self.queue.cycle()
                    cycled += 1
                    if cycled >= self.queue.waiting:
                        return None
                    continue
                if verdict == "refuse":
                    self._end(request.reply, status.wrong_pin_id(request.batch_left, request.bytes_left))
                    self.queue.remove(request)
                    continue
            if request.bytes_left > 0 and not self._fits(request, size, priority):
                continue
            interest = request.interest  # _interested(request), without its call on every delivery
            if interest() if interest is not None else self._has_interest(request.reply):
                taken = self.queue.pop()
                return self._take(taken) if request.heartbeat else taken  # a heartbeat countdown starts over
            if request.interest is not None:
                self._end(request.reply, status.interest_expired(request.batch_left, request.bytes_left))
            self.queue.remove(request)
        return None

    def _fits(self, request: WaitingRequest, size: int, priority: PriorityGroups | None) -> bool:
        """Charge ``size`` to a request's byte budget; a request it exceeds is ended and removed."""
        if size <= request.bytes_left:
            request.bytes_left -= size
            if request.bytes_left == 0:
                request.batch_left = 1
            return True
        self._end(request.reply, status.message_size_exceeds_max_bytes(request.batch_left, request.bytes_left))
        if priority is not None:
            priority.request_dropped(request)
        self.queue.remove(request)
        return False

    def _take(self, request: WaitingRequest | None) -> WaitingRequest | None:
        """A request took a delivery: its idle-heartbeat countdown starts over."""
        if request is not None and request.batch_left > 0 and request.heartbeat:
            request.next_heartbeat = self._clock.monotonic() + request.heartbeat
        return request

    def not_received(self, reply: str) -> None:
        """A delivery to ``reply`` reached nobody: the request it counted against may take one more."""
        for request in self.queue.unordered():
            if request.reply == reply:
                request.batch_left += 1
                request.delivered -= 1
                break

    # -- expiry and heartbeats ------------------------------------------------------------

    def process(self, eos: bool) -> int:
        """``processWaiting``: expire, answer finished no-wait requests, send heartbeats.

        ``eos``: the stream has nothing more for now, so no-wait requests end.
        Returns how many messages the remaining requests still want.
        """
        now = self._clock.monotonic()
        next_due: float | None = None
        blocked = 0
        actions: list[tuple[WaitingRequest, bytes | None]] = []  # (request, status ending it | None: heartbeat)
        for request in self.queue.unordered():
            ending = self._ending(request, now, eos)
            if ending is not None:
                actions.append((request, ending))
                continue
            if not self._interested(request):
                actions.append((request, b""))
                continue
            blocked += request.batch_left
            if request.next_heartbeat is not None:
                if now >= request.next_heartbeat:
                    actions.append((request, None))
                    request.next_heartbeat = now + request.heartbeat
                next_due = request.next_heartbeat if next_due is None else min(next_due, request.next_heartbeat)
            if request.expires is not None:
                next_due = request.expires if next_due is None else min(next_due, request.expires)
        self._act(actions)
        self._arm(next_due)
        return blocked

    def _act(self, actions: list[tuple[WaitingRequest, bytes | None]]) -> None:
        """Send heartbeats and end requests, in the order the queue serves them (as nats-server walks it)."""
        for request, ending in self.queue.in_order(actions):
            if ending is None:
                self._heartbeat(request.reply)
                continue
            if ending:
                self._end(request.reply, ending)
            self._drop(request)

    def still_waiting(self) -> bool:
        """End the requests that expired or are done; whether any still waits."""
        self.process(eos=True)
        return self.queue.waiting > 0

    def _ending(self, request: WaitingRequest, now: float, eos: bool) -> bytes | None:
        """The status ending a request that expired, or a no-wait request the stream has nothing more for."""
        if request.expires is not None and now >= request.expires:
            return status.request_timeout(request.batch_left, request.bytes_left)
        if eos and request.no_wait and (request.expires is None or request.delivered > 0):
            return status.no_messages()
        return None

    def _drop(self, request: WaitingRequest) -> None:
        """End a request; a pin it was given stays (only a max_bytes refusal takes a fresh pin back)."""
        self.queue.remove(request)

    # -- the timeline ---------------------------------------------------------------------

    def _end(self, reply: str, header: bytes) -> None:
        """Answer a request with a status line (that ends it, or refuses it)."""
        self._reply(reply, b"", header)
        if self._recorder:
            line = header.split(b"\r\n", 1)[0].decode("utf-8", "replace")  # NATS/1.0 408 Request Timeout
            code, _, text = line[len("NATS/1.0 ") :].partition(" ")
            self._record("pull.end", reply, code=int(code) if code.isdigit() else 0, text=text)

    def _record(self, kind: str, reply: str, **fields: object) -> None:
        self._recorder.record(kind, stream=self._name.stream, consumer=self._name.consumer, reply=reply, **fields)

    def _record_request(self, reply: str, request: PullRequest, client: int | None, client_node: str) -> None:
        group = request.group
        where = {"client_node": client_node} if client_node else {}
        self._record(
            "pull.request",
            reply,
            client=client,
            batch=request.batch,
            max_bytes=request.max_bytes,
            expires=request.expires,
            no_wait=request.no_wait,
            heartbeat=request.heartbeat,
            group=group["group"] if group is not None else "",
            priority=group["priority"] if group is not None else 0,
            pin_id=group["id"] if group is not None else "",
            **where,
        )

    def _heartbeat(self, subject: str) -> None:
        if self._hooks and self._hooks.fire(
            "consumer.heartbeat", stream=self._name.stream, consumer=self._name.consumer
        ):
            return
        if self._recorder:
            self._record("pull.heartbeat", subject)
        consumer = self._consumer
        self._reply(
            subject, b"", status.idle_heartbeat(consumer.next_consumer_sequence - 1, consumer.next_stream_sequence - 1)
        )

    def _arm(self, due: float | None) -> None:
        if due is None:
            self.stop()
            return
        if self._timer is not None and self._deadline == due:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._deadline = due
        self._timer = self._clock.call_punctually(due, self._timer_fired)

    def _timer_fired(self) -> None:
        self._timer = None
        self._deadline = None
        if not self._consumer.closed:
            self.process(eos=True)
            self._consumer.kick()

    def stop(self) -> None:
        """No more expiry checks (nothing waits, or the consumer is gone)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._deadline = None


def requester(origin: object) -> tuple[int | None, str]:
    """Who sent a pull, for the timeline: a client's id here, or no id and the server of another server's client."""
    node = getattr(origin, "remote_name", "") or ""
    return (None, node) if node else (getattr(origin, "cid", None), "")
