"""The watch: client traffic in (as :class:`~fakejs.core.hooks.WireTap` calls), violations out.

Every event is judged when it happens, at the server clock's time; rules
that wait for something (a new pull within the window, an ordered
consumer's reset) keep a deadline in one heap, looked at before each event
and when the report is asked for, so an idle server costs nothing and no
event scans all loops.  Per delivered message the watch does a dictionary
lookup or two; it never walks every subject, message or client.
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter, OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.clock import Clock
from fakejs.core.recorder import NO_RECORDER, Recorder
from fakejs.core.subjects import matches
from fakejs.testkit.conformance import checks, wire
from fakejs.testkit.conformance.loops import Awaiting, Pull, PullLoop, Trigger
from fakejs.testkit.conformance.ordered import OrderedWatch
from fakejs.testkit.conformance.report import Client, ClientRef, ConformanceReport, Violation
from fakejs.testkit.conformance.rules import Settings

TERMINAL = ("Consumer Deleted", "Consumer is push based")
TERMED_KEPT = 100_000  # +TERM'd ack subjects remembered (oldest forgotten first)
KEPT_PER_CLIENT = 20  # violations kept per rule and client; the rest are only counted


@dataclass
class Expectations:
    """Which consumers the test says are consumed by a loop, acked with AckSync, or ordered."""

    consume: set[tuple[str, str]] = field(default_factory=set)
    ack_sync: set[tuple[str, str]] = field(default_factory=set)


class Conformance:
    """Judges every client of one server against :data:`~fakejs.testkit.conformance.rules.RULES`."""

    def __init__(self, clock: Clock, settings: Settings | None = None) -> None:
        self.clock = clock
        self.settings = settings or Settings()
        self.expectations = Expectations()
        self.violations: list[Violation] = []
        self._counts: Counter[tuple[str, int]] = Counter()
        self.suppressed: Counter[str] = Counter()  # violations counted but not kept, per rule
        self.exercised: Counter[str] = Counter()  # times each rule had something to judge
        self._loops: dict[tuple[str, str], PullLoop] = {}
        # Each connection's loops by (stream, consumer): where a delivered message finds its loop.
        self._by_client: dict[int, dict[tuple[str, str], list[PullLoop]]] = {}
        self._orphans: dict[tuple[str, str], PullLoop] = {}
        self._termed: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._deadlines: list[tuple[float, int, str, Any]] = []
        self._order = itertools.count()
        self.ordered = OrderedWatch(self)
        self.recorder: Recorder = NO_RECORDER  # the server's timeline (see fakejs.core.recorder)

    def __bool__(self) -> bool:
        return True

    # -- what tests declare -------------------------------------------------------------

    def expect(self, stream: str, consumer: str, *, consume: bool = False, ack_sync: bool = False) -> None:
        """Say how a consumer is used: by a ``Consume()`` loop, and/or acked with AckSync."""
        if consume:
            self.expectations.consume.add((stream, consumer))
        if ack_sync:
            self.expectations.ack_sync.add((stream, consumer))

    def report(self) -> ConformanceReport:
        self.settle(self.clock.monotonic())
        return ConformanceReport(
            list(self.violations),
            self.settings.describe(),
            suppressed=dict(self.suppressed),
            exercised=dict(self.exercised),
        )

    def clear(self) -> None:
        """Forget every violation and loop (a reset server)."""
        self.violations.clear()
        self._counts.clear()
        self.suppressed.clear()
        self.exercised.clear()
        self._loops.clear()
        self._by_client.clear()
        self._orphans.clear()
        self._termed.clear()
        self._deadlines.clear()
        self.ordered.clear()

    # -- WireTap --------------------------------------------------------------------------

    def published(self, owner: Client, subject: str, reply: str, headers: bytes | None, payload: bytes) -> None:
        now = self.clock.monotonic()
        self.settle(now)
        if subject.startswith("$JS.ACK."):
            self._on_ack(owner, subject, reply, headers, payload, now)
            return
        target = wire.pull_target(subject)
        if target is not None:
            if reply:
                evidence = wire.frame("PUB", subject, reply, headers, payload)
                self._on_pull(owner, reply, wire.pull_request(*target, payload), evidence, now)
            return
        deleted = wire.deleted_target(subject)
        if deleted is not None:
            self._retire(owner, *deleted)
            return
        created = wire.created_stream(subject)
        if created is not None:
            self.ordered.created(owner, created, payload, wire.frame("PUB", subject, reply, headers, payload), now)

    def subscribed(self, owner: Client, subject: str) -> None:
        now = self.clock.monotonic()
        self.settle(now)
        account = owner.account.name
        for key, loop in list(self._orphans.items()):
            if key[0] == account and _resubscribes(subject, loop.reply):
                del self._orphans[key]
                self._adopt(loop, owner)
                self.exercise("reconnect-repull")
                evidence = f"SUB {subject}".encode()
                self._await(loop, "reconnect-repull", now, "no pull after the reconnect", evidence)

    def delivered(
        self, owner: Client, pattern: str, subject: str, reply: str, headers: bytes | None, payload: bytes
    ) -> None:
        now = self.clock.monotonic()
        self.settle(now)
        status = wire.status(headers) if headers else None
        if status is not None:
            loop = self._loops.get((owner.account.name, subject))
            if loop is not None:
                self._on_status(loop, status, wire.frame("MSG", subject, reply, headers, payload), now)
            return
        ack = wire.ack_subject(reply) if reply else None
        if ack is None:
            return

        def frame() -> bytes:
            return wire.frame("MSG", subject, reply, headers, payload)

        self.ordered.delivered(owner, ack, now, frame)
        loop = self._loop_for(owner, pattern, ack)
        if loop is None:
            return
        loop.last_inbound = now
        loop.delivered(wire.message_size(subject, reply, headers, payload))
        pin = wire.pin_id(headers) if headers else ""
        if pin and (loop.pinned is None or loop.pinned.value != pin):
            loop.pinned = Trigger(now, frame(), value=pin)
            loop.unpinned = None

    def closed(self, owner: Client) -> None:
        now = self.clock.monotonic()
        self.settle(now)
        for loops in self._by_client.pop(owner.cid, {}).values():
            for loop in loops:
                loop.disconnected()
                self._loops.pop(loop.key, None)
                if loop.consuming and loop.terminal is None:
                    self._orphans[loop.key] = loop

    # -- pulls ---------------------------------------------------------------------------

    def _on_pull(self, owner: Client, reply: str, request: wire.PullRequest, evidence: bytes, now: float) -> None:
        loop = self._loop(owner, reply, request)
        config = self.consumer_config(owner, request.stream, request.consumer)
        if loop.silent_for(now):
            # ADR-37: after missed heartbeats a loop resets its pending counts and pulls afresh,
            # so the pulls the server still holds are no longer owed to it.
            if loop.consuming:
                self.exercise("heartbeat-missed")
            loop.forget()
        if loop.pulls:
            loop.consuming = True  # a top-up: only a loop keeps two pulls out
        self._exercise_pull(loop, request)
        found = checks.after_statuses(request, loop, now, self.settings)
        found += checks.limits(request, config)
        found += checks.expiry(request)
        found += checks.heartbeats(request, loop.consuming)
        found += checks.buffering(request, loop, self.settings)
        for rule, detail in found:
            self.violate(rule, owner, request.stream, request.consumer, detail, evidence, now)
        for trigger in (loop.terminal, loop.unpinned, loop.pinned):
            if trigger is not None:
                trigger.pulls_since += 1
        loop.awaiting = None
        loop.pending_status = None
        loop.max_waiting = None
        loop.absorbed = False
        owed_bytes = request.max_bytes
        if request.max_bytes:
            loop.buffer_bytes = max(loop.buffer_bytes, loop.owed_bytes + request.max_bytes)
        elif not loop.owed_messages:
            loop.buffer_messages = max(loop.buffer_messages, request.batch)
        loop.add(Pull(request, now, request.batch, owed_bytes, evidence))
        if request.heartbeat and not loop.heartbeat_scheduled:
            loop.heartbeat_scheduled = True
            self.schedule(now + 2 * request.heartbeat + self.settings.window, "heartbeat", loop)

    def _exercise_pull(self, loop: PullLoop, request: wire.PullRequest) -> None:
        """Count the rules a pull gives something to judge."""
        self.exercised.update(("pull-limits", "pull-expires", "heartbeat-configured"))
        if loop.pulls:
            self.exercised.update(("pull-buffer", "pull-threshold"))
        if loop.pinned is not None and request.group:
            self.exercise("pin-id-echoed")

    def exercise(self, rule: str) -> None:
        self.exercised[rule] += 1

    def _loop(self, owner: Client, reply: str, request: wire.PullRequest) -> PullLoop:
        key = (owner.account.name, reply)
        loop = self._loops.get(key)
        if loop is None or (loop.stream, loop.consumer) != (request.stream, request.consumer):
            if loop is not None:
                self._unindex(loop)
            loop = PullLoop(owner.account.name, reply, request.stream, request.consumer, owner.cid, owner.name)
            loop.consuming = (request.stream, request.consumer) in self.expectations.consume
            self._loops[key] = loop
            self._index(loop)
        elif loop.client_id != owner.cid:
            self._adopt(loop, owner)
        return loop

    def _adopt(self, loop: PullLoop, owner: Client) -> None:
        """A loop carried on by another connection (the same client, reconnected)."""
        self._unindex(loop)
        loop.client_id, loop.client_name, loop.connected = owner.cid, owner.name, True
        self._loops[loop.key] = loop
        self._index(loop)

    def _index(self, loop: PullLoop) -> None:
        self._by_client.setdefault(loop.client_id, {}).setdefault((loop.stream, loop.consumer), []).append(loop)

    def _retire(self, owner: Client, stream: str, consumer: str) -> None:
        """The client deletes a consumer it pulls from (an ordered consumer's reset): its loops end there."""
        for loop in self._by_client.get(owner.cid, {}).pop((stream, consumer), []):
            loop.awaiting = None
            if self._loops.get(loop.key) is loop:
                del self._loops[loop.key]

    def _unindex(self, loop: PullLoop) -> None:
        loops = self._by_client.get(loop.client_id, {}).get((loop.stream, loop.consumer), [])
        if loop in loops:
            loops.remove(loop)

    def _loop_for(self, owner: Client, pattern: str, ack: wire.AckSubject) -> PullLoop | None:
        """The loop a consumer's message went to: the oldest with a pull out, on this subscription."""
        best: PullLoop | None = None
        for loop in self._by_client.get(owner.cid, {}).get((ack.stream, ack.consumer), ()):
            on_sub = loop.pulls and (pattern == loop.reply or matches(pattern, loop.reply))
            if on_sub and (best is None or loop.pulls[0].at < best.pulls[0].at):
                best = loop
        return best

    # -- statuses ------------------------------------------------------------------------

    def _on_status(self, loop: PullLoop, status: wire.Status, evidence: bytes, now: float) -> None:
        loop.last_inbound = now
        if status.code == 100:
            return  # an idle heartbeat (or flow control): the loop is alive
        ended = loop.ended(status)
        text = f"{status.code} {status.description}".strip()
        if ended is not None and ended.delivered == 0 and status.code in (404, 408, 409, 503):
            self.exercise("no-pull-storm")
            self._count_empty(loop, ended, now, evidence)
        if status.code == 409 and status.description in TERMINAL:
            self.exercise("terminal-stops")
            loop.terminal = Trigger(now, evidence, value=text)
            loop.awaiting = None
            return
        if status.code == 423:
            self.exercise("pin-dropped-on-423")
            refused = ended.request.pin_id if ended is not None else ""
            loop.unpinned = Trigger(now, evidence, value=refused or (loop.pinned.value if loop.pinned else ""))
            loop.pinned = None
        if status.description == "Exceeded MaxWaiting":
            self.exercise("max-waiting-backoff")
            loop.max_waiting = Trigger(now, evidence, value=text)
            return
        if status.pending_messages is not None:
            self.exercise("pending-reconcile")
            loop.pending_status = Trigger(now, evidence, value=text)
        if not loop.consuming:
            return
        if status.description == "Leadership Change":
            self.exercise("leadership-repull")
            self._await(loop, "leadership-repull", now, "no pull after 409 Leadership Change", evidence)
        elif status.pending_messages is not None and self._wants_refill(loop):
            self._await(loop, "pending-reconcile", now, f"no pull after {text} left nothing owed", evidence)

    def _wants_refill(self, loop: PullLoop) -> bool:
        if loop.buffer_bytes and loop.pulls and loop.pulls[-1].request.max_bytes:
            return loop.owed_bytes <= loop.buffer_bytes * self.settings.threshold
        return loop.owed_messages <= loop.buffer_messages * self.settings.threshold

    def _count_empty(self, loop: PullLoop, ended: Pull, now: float, evidence: bytes) -> None:
        recent = loop.empty_pull(now)
        limit = self.settings.storm_limit
        if recent > limit and now - loop.storm_reported >= 1.0:
            loop.storm_reported = now
            detail = f"{recent} pulls ended empty within a second (limit {limit})"
            self.violate("no-pull-storm", self._client(loop), loop.stream, loop.consumer, detail, ended.evidence, now)

    # -- acknowledgements ----------------------------------------------------------------

    def _on_ack(
        self, owner: Client, subject: str, reply: str, headers: bytes | None, payload: bytes, now: float
    ) -> None:
        kind = wire.ack_kind(payload)
        key = (owner.account.name, subject)
        termed = key in self._termed
        sync_asked = kind != "+NXT" and bool(self.expectations.ack_sync)
        if not (termed or kind == "+TERM" or sync_asked):
            return  # the common ack: nothing to judge, nothing to parse
        ack = wire.ack_subject(subject)
        if ack is None:
            return
        if termed:
            detail = f"{kind} after +TERM"
            evidence = wire.frame("PUB", subject, reply, headers, payload)
            self.violate("no-ack-after-term", owner, ack.stream, ack.consumer, detail, evidence, now)
        elif kind == "+TERM":
            self.exercise("no-ack-after-term")
            self._termed[key] = now
            if len(self._termed) > TERMED_KEPT:
                self._termed.popitem(last=False)
        ack_sync = sync_asked and (ack.stream, ack.consumer) in self.expectations.ack_sync
        if ack_sync:
            self.exercise("ack-sync")
        if ack_sync and not reply:
            detail = f"{kind} without a reply subject where AckSync is asked for"
            evidence = wire.frame("PUB", subject, reply, headers, payload)
            self.violate("ack-sync", owner, ack.stream, ack.consumer, detail, evidence, now)

    # -- deadlines -----------------------------------------------------------------------

    def _await(self, loop: PullLoop, rule: str, now: float, detail: str, evidence: bytes) -> None:
        if loop.awaiting is not None:
            return  # the earlier expectation's deadline comes first, and one pull answers both
        loop.awaiting = Awaiting(rule, now + self.settings.window, detail, evidence)
        self.schedule(loop.awaiting.deadline, "awaiting", loop)

    def schedule(self, deadline: float, kind: str, subject: Any) -> None:
        heapq.heappush(self._deadlines, (deadline, next(self._order), kind, subject))

    def settle(self, now: float) -> None:
        """Judge every expectation whose deadline has passed."""
        deadlines = self._deadlines
        while deadlines and deadlines[0][0] <= now:
            deadline, _, kind, subject = heapq.heappop(deadlines)
            if kind == "awaiting":
                self._expired(subject, deadline)
            elif kind == "heartbeat":
                self._silence(subject, now)
            else:
                self.ordered.expired(subject, deadline)

    def _expired(self, loop: PullLoop, deadline: float) -> None:
        awaiting = loop.awaiting
        if awaiting is None or awaiting.deadline != deadline:
            return
        loop.awaiting = None
        detail = f"{awaiting.detail} within {self.settings.window:g} s"
        self.violate(awaiting.rule, self._client(loop), loop.stream, loop.consumer, detail, awaiting.evidence, deadline)

    def _silence(self, loop: PullLoop, now: float) -> None:
        """``heartbeat-missed``: two heartbeats missed, and no new pull within the window after."""
        loop.heartbeat_scheduled = False
        heartbeat = loop.heartbeat
        if not heartbeat or not loop.connected or loop.terminal is not None or self._loops.get(loop.key) is not loop:
            return  # a consumer gone (409 Consumer Deleted) calls for no more pulls, whatever the silence
        since = loop.silent_since
        deadline = since + 2 * heartbeat + self.settings.window
        if now < deadline:
            loop.heartbeat_scheduled = True
            self.schedule(deadline, "heartbeat", loop)
            return
        if loop.consuming and loop.silence_reported != since:
            loop.silence_reported = since
            detail = (
                f"no pull within {2 * heartbeat + self.settings.window:g} s of silence (idle_heartbeat {heartbeat:g} s)"
            )
            evidence = loop.pulls[-1].evidence
            self.violate("heartbeat-missed", self._client(loop), loop.stream, loop.consumer, detail, evidence, deadline)

    # -- helpers -------------------------------------------------------------------------

    def _client(self, loop: PullLoop) -> Client:
        return ClientRef(loop.client_id, loop.client_name)

    def consumer_config(self, owner: Client, stream: str, consumer: str) -> Mapping[str, Any] | None:
        js = getattr(owner.account, "jetstream", None)
        if js is None:
            return None
        found = js.streams.get(stream)
        found = found.consumers.get(consumer) if found is not None else None
        return found.config if found is not None else None

    def violate(
        self, rule: str, owner: Client, stream: str, consumer: str, detail: str, evidence: bytes, at: float
    ) -> None:
        self._counts[rule, owner.cid] += 1
        if self._counts[rule, owner.cid] > KEPT_PER_CLIENT:
            self.suppressed[rule] += 1  # a client that breaks a rule per message: keep the first ones
            return
        at_ns = self.clock.time_ns() - int((self.clock.monotonic() - at) * 1e9)
        self.violations.append(Violation(rule, owner.name, owner.cid, stream, consumer, detail, evidence, at, at_ns))
        if self.recorder:
            self.recorder.record(
                "conformance.violation", client=owner.cid, stream=stream, consumer=consumer, rule=rule, detail=detail
            )


def _resubscribes(pattern: str, reply: str) -> bool:
    """Whether a new subscription is a client's inbox again (``_INBOX.<id>.*``), not a catch-all like ``>``."""
    if pattern == reply:
        return True
    literal = []
    for token in pattern.split("."):
        if token in ("*", ">"):
            break
        literal.append(token)
    return len(literal) >= 2 and matches(pattern, reply)
