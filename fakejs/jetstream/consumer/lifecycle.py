"""A consumer's life between deliveries: inactivity, pause, push interest, reset.

nats-server deletes an idle consumer after ``inactive_threshold`` (pull
consumers with 100ms-1s of jitter, and only once no pull waits and no ack
can still come), pauses delivery until ``pause_until``, starts and stops
push delivery as a subscription on exactly the deliver subject comes and
goes, and can restart delivery from a sequence (``CONSUMER.RESET``).  All of
it runs on the server clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakejs.gocompat import gotime
from fakejs.jetstream import advisories
from fakejs.jetstream.config import consumer as consumerconfig

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer

NS = 1_000_000_000
ACK_WAIT_DELAY = 1_000_000


class Lifecycle:
    """Mixed into :class:`~fakejs.jetstream.consumer.consumer.Consumer`."""

    def set_inactive_threshold(self: Consumer) -> None:
        """``updateInactiveThreshold``: pull consumers get 100ms to 1s of jitter, as in nats-server."""
        threshold = self.config["inactive_threshold"]
        if threshold > 0 and not self.is_push:
            threshold += 100_000_000 + self.js.broker.random.randrange(900) * 1_000_000
        self.dthresh = max(threshold, 0)

    def _touch(self: Consumer) -> None:
        """Activity: restart the inactivity countdown (pull consumers, push without interest)."""
        if self._inactive_timer is not None:
            self._inactive_timer.cancel()
            self._inactive_timer = None
        if self.dthresh > 0 and not self.closed and not (self.is_push and self.active):
            self._inactive_timer = self.clock.call_later(self.dthresh / NS, self._inactive)

    def _inactive(self: Consumer) -> None:
        """``deleteNotActive``: go, unless pulls wait, push interest is back or acks may still come."""
        self._inactive_timer = None
        if self.closed:
            return
        if self.is_push:
            if not self.active:
                self.stream.remove_consumer(self)
            return
        self.process_waiting(eos=True)
        if len(self.waiting):
            self._touch()
            return
        # Outstanding deliveries may still be acked: wait for the last ack deadline plus the threshold.
        now = self.clock.time_ns()
        backoff = self.config["backoff"]
        latest = 0
        for seq, (_, delivered_ns) in self.pending.items():
            wait = self._ack_wait_ns()
            if backoff:
                wait = backoff[min(max(self.rdc.get(seq, 0), 0), len(backoff) - 1)] + ACK_WAIT_DELAY
            latest = max(latest, delivered_ns + wait + self.dthresh - now)
        if latest > 0:
            self._inactive_timer = self.clock.call_later(latest / NS, self._inactive)
            return
        self.stream.remove_consumer(self)

    def _arm_pause_timer(self: Consumer) -> None:
        if self._pause_timer is not None:
            self._pause_timer.cancel()
            self._pause_timer = None
        until = self.config["pause_until"]
        if until is not None:
            remaining = until.ns - self.clock.time_ns()
            if remaining > 0:
                self._pause_timer = self.clock.call_later(remaining / NS, self._pause_ended)

    def _pause_ended(self: Consumer) -> None:
        self._pause_timer = None
        if not self.closed:
            advisories.pause(self, False, None)
            self.kick()

    def _has_delivery_interest(self: Consumer) -> bool:
        """Push delivery needs a subscription on exactly the deliver subject."""
        return self.js.router.has_exact_interest(self.config["deliver_subject"], self.config["deliver_group"])

    def _interest_changed(self: Consumer) -> None:
        if self.closed:
            return
        active = self._has_delivery_interest()
        if active != self.active:
            self.active = active
            self._touch()
            if active:
                self.kick()

    def is_paused(self: Consumer) -> bool:
        until = self.config["pause_until"]
        return until is not None and self.clock.time_ns() < until.ns

    def pause(self: Consumer, until: gotime.GoTime | None) -> None:
        self.config["pause_until"] = until
        consumerconfig.set_static_metadata(self.config)
        self._arm_pause_timer()
        paused = until is not None and until.ns > self.clock.time_ns()
        advisories.pause(self, paused, until)
        self.js.consumer_updated(self.stream, self)
        if not paused:
            self.kick()

    def reset_to(self: Consumer, seq: int) -> int:
        """``resetStartingSeq``: deliver again from ``seq`` (0: from the ack floor)."""
        from fakejs.jetstream.errors import api_error

        cfg = self.config
        policy = cfg["deliver_policy"]
        if seq == 0:
            seq = self.asflr + 1
        elif policy == "all":
            pass
        elif policy == "by_start_sequence":
            if seq < cfg["opt_start_seq"]:
                raise api_error("JSConsumerInvalidResetErr", err="below start seq")
        elif policy == "by_start_time":
            if seq < self.stream.store.seq_from_time(cfg["opt_start_time"].ns):
                raise api_error("JSConsumerInvalidResetErr", err="below start time")
        else:
            raise api_error("JSConsumerInvalidResetErr", err="not allowed")
        seq = max(seq, 1)
        self.pending.clear()
        self.rdc.clear()
        self.rdq = []
        self.sseq, self.dseq = seq, 1
        self.adflr, self.asflr = 0, seq - 1
        self.last_delivered_ns = self.last_ack_ns = 0
        self.state.reset(seq - 1)
        self.lss = None
        self._stop_ack_timer()
        self.recount_pending()
        self.kick()
        return seq
