"""The acknowledgement half of a consumer: ack payloads, floors, redelivery.

nats-server keeps two views of acknowledgement state: the consumer's
working state (``pending``, ``adflr``/``asflr``) and the persisted consumer
store (delivered and ack-floor counters that ConsumerInfo reports).  Both
are kept here with nats-server's rules so the numbers a client reads after
any mix of acks, naks, terms and redeliveries are the same.

Ack payloads (on ``$JS.ACK.<stream>.<consumer>.<dc>.<sseq>.<dseq>.<ts>.<pending>``):
empty, ``+ACK`` or ``+OK`` ack; ``-NAK`` [JSON ``{"delay":ns}`` or a Go
duration] redelivers; ``+WPI`` restarts the ack timer; ``+NXT`` acks and
requests more; ``+TERM`` [reason] stops redelivery.  An ack with a reply
subject gets an empty message back, except for ``+NXT``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fakejs.gocompat import gotime
from fakejs.jetstream import advisories

if TYPE_CHECKING:
    from fakejs.jetstream.consumer.consumer import Consumer

ACK_WAIT_DELAY = 1_000_000
NS = 1_000_000_000


def _number(token: str) -> int:
    """``parseAckReplyNum``: decimal digits, else -1."""
    if token and token.isdigit() and token.isascii():
        return int(token)
    return -1


def ack_reply_info(subject: str) -> tuple[int, int, int]:
    """(stream seq, delivery seq, delivery count) from an ack subject; zeros when malformed."""
    tokens = subject.split(".")
    if (len(tokens) != 9 and len(tokens) < 11) or tokens[0] != "$JS" or tokens[1] != "ACK":
        return 0, 0, 0
    offset = 4 if len(tokens) >= 11 else 2
    as_uint = lambda value: value & (2**64 - 1)  # noqa: E731 - Go's uint64 cast
    dc = as_uint(_number(tokens[offset + 2]))
    sseq = as_uint(_number(tokens[offset + 3]))
    dseq = as_uint(_number(tokens[offset + 4]))
    return sseq, dseq, dc


class AckHandling:
    """Mixed into :class:`~fakejs.jetstream.consumer.consumer.Consumer`."""

    # -- pending bookkeeping ------------------------------------------------------------

    def track_pending(self: Consumer, sseq: int, dseq: int) -> None:
        now = self.clock.time_ns()
        entry = self.pending.get(sseq)
        if entry is not None:
            entry[1] = now
        else:
            self.pending[sseq] = [dseq, now]
        delay = self._ack_wait_ns()
        backoff = self.config["backoff"]
        if backoff:
            index = min(max(self.rdc.get(sseq, 0), 0), len(backoff) - 1)
            delay = backoff[index] + ACK_WAIT_DELAY
        deadline = self.clock.monotonic() + delay / NS
        if self._ack_timer is None or (self._ack_deadline is not None and self._ack_deadline > deadline):
            self._arm_ack_timer(delay / NS)

    def _ack_wait_ns(self: Consumer) -> int:
        return int(self.config["ack_wait"]) + ACK_WAIT_DELAY

    def delivery_count(self: Consumer, seq: int) -> int:
        """nats-server's ``deliveryCount``: the redelivery counter, at least 1."""
        count = self.rdc.get(seq, 0)
        return count if count >= 1 else 1

    def move_ack_floor(self: Consumer, dseq: int, sseq: int) -> None:
        """``moveAckFloor`` on the working state."""
        if not self.pending:
            self.adflr, self.asflr = self.dseq - 1, self.sseq - 1
        elif dseq == self.adflr + 1:
            self.adflr, self.asflr = dseq, sseq
            for ss in range(sseq + 1, self.sseq):
                entry = self.pending.get(ss)
                if entry is not None:
                    if entry[0] > 0:
                        self.adflr, self.asflr = entry[0] - 1, ss - 1
                    break

    # -- incoming acks -----------------------------------------------------------------

    def process_ack(self: Consumer, subject: str, reply: str, payload: bytes) -> None:
        """Handle one message on the consumer's ack subject."""
        if self.closed:
            return
        if self.dthresh > 0 and (not self.is_push or self._inactive_timer is not None):
            self._touch()  # ack activity holds off the inactivity deletion
        sseq, dseq, dc = ack_reply_info(subject)
        skip_reply = sseq == 0
        if not payload or payload in (b"+ACK", b"+OK"):
            if not self._ack(sseq, dseq, dc, reply):
                skip_reply = True
        elif payload.startswith(b"+NXT"):
            self._ack(sseq, dseq, dc, "")
            self.pull_request(reply, payload[4:], None)
            skip_reply = True
        elif payload.startswith(b"-NAK"):
            self.nak(sseq, dseq, dc, payload)
        elif payload == b"+WPI":
            self.progress(sseq)
        elif payload.startswith(b"+TERM"):
            reason = payload[5:].strip().decode("utf-8", "replace")
            if not self.terminate(sseq, dseq, dc, reason, reply):
                skip_reply = True
        if reply and not skip_reply:
            self.js.reply(reply, b"")
        self.kick()

    def _ack(self: Consumer, sseq: int, dseq: int, dc: int, reply: str) -> bool:
        """``processAckMsg``; returns whether the ack was applied "in place" (it answered)."""
        if sseq >= self.sseq:
            return False
        in_place = self.stream.config["retention"] != "limits"
        policy = self.config["ack_policy"]
        acked: list[int] = []
        if policy == "explicit":
            entry = self.pending.pop(sseq, None)
            if entry is not None:
                dseq = entry[0]
                self.move_ack_floor(dseq, sseq)
                acked.append(sseq)
            self.rdc.pop(sseq, None)
            if sseq in self.rdq:
                self.rdq.remove(sseq)
        elif policy in ("all", "flow_control"):
            if dseq <= self.adflr or sseq <= self.asflr:
                return True
            self.adflr, self.asflr = dseq, sseq
            for seq in [s for s in self.pending if s <= sseq]:
                del self.pending[seq]
                self.rdc.pop(seq, None)
                if seq in self.rdq:
                    self.rdq.remove(seq)
                acked.append(seq)
        else:
            return in_place
        self.rdc.pop(sseq, None)
        self.state.update_acks(dseq, sseq)
        self.last_ack_ns = self.clock.time_ns()
        if reply and not in_place:
            self.js.reply(reply, b"")
        if in_place:
            for seq in acked:
                self.stream.acked(self, seq)
        return in_place

    def nak(self: Consumer, sseq: int, dseq: int, dc: int, payload: bytes) -> None:
        if dseq <= self.adflr or dseq > self.dseq or sseq not in self.pending:
            return
        advisories.nak(self, sseq, dseq, dc)
        arg = payload[4:].strip()
        if arg:
            delay: int | None = None
            try:
                if arg[:1] == b"{":
                    options = json.loads(arg)
                    value = options.get("delay", 0) if isinstance(options, dict) else 0
                    delay = int(value) if isinstance(value, int) and not isinstance(value, bool) else None
                else:
                    delay = gotime.parse_duration(arg.decode("utf-8", "replace"))
            except (ValueError, TypeError):
                delay = None
            if delay is not None:
                if sseq in self.rdq:
                    self.rdq.remove(sseq)
                entry = self.pending.get(sseq)
                if entry is not None:
                    entry[1] = self.clock.time_ns() - self.config["ack_wait"] + delay
                    if self._ack_timer is not None:
                        self._arm_ack_timer(0.010)
                return
        if sseq not in self.rdq:
            self.rdq.append(sseq)

    def progress(self: Consumer, seq: int) -> None:
        entry = self.pending.get(seq)
        if entry is not None:
            entry[1] = self.clock.time_ns()

    def terminate(self: Consumer, sseq: int, dseq: int, dc: int, reason: str, reply: str) -> bool:
        """``processTerm``: an ack that stops redelivery, with an advisory."""
        in_place = self._ack(sseq, dseq, dc, reply)
        advisories.terminated(self, sseq, dseq, dc, reason)
        return in_place

    def delivery_exceeded(self: Consumer, sseq: int, deliveries: int) -> None:
        advisories.max_deliveries(self, sseq, deliveries)

    # -- the redelivery timer --------------------------------------------------------------

    def _arm_ack_timer(self: Consumer, delay: float) -> None:
        if self._ack_timer is not None:
            self._ack_timer.cancel()
        self._ack_deadline = self.clock.monotonic() + delay
        self._ack_timer = self.clock.call_later(delay, self.check_pending)

    def _stop_ack_timer(self: Consumer) -> None:
        if self._ack_timer is not None:
            self._ack_timer.cancel()
        self._ack_timer = None
        self._ack_deadline = None

    def check_pending(self: Consumer) -> None:
        """``checkPending``: queue expired deliveries for redelivery."""
        self._ack_timer = None
        self._ack_deadline = None
        ttl = self.config["ack_wait"]
        if self.closed or ttl == 0:
            return
        first = self.stream.store.first_seq
        now = self.clock.time_ns()
        backoff = self.config["backoff"]
        next_due = backoff[-1] if backoff else self._ack_wait_ns()
        expired: list[int] = []
        for seq in list(self.pending):
            entry = self.pending[seq]
            if seq < first or seq <= self.asflr:
                del self.pending[seq]
                self.rdc.pop(seq, None)
                if seq in self.rdq:
                    self.rdq.remove(seq)
                self.asflr = max(self.asflr, seq)
                self.adflr = max(self.adflr, entry[0])
                continue
            elapsed, deadline = now - entry[1], ttl
            if backoff:
                count = max(self.rdc.get(seq, 0), 0)
                following = count + 1
                if count + 1 >= len(backoff):
                    count = len(backoff) - 1
                    following = count
                deadline = backoff[count]
                next_due = min(next_due, backoff[following])
            if elapsed >= deadline:
                if seq not in self.rdq and not self._has_max_deliveries(seq):
                    expired.append(seq)
            elif deadline - elapsed < next_due:
                next_due = deadline - elapsed
        if expired:
            expired.sort()
            self.rdq.extend(expired)
            offset = now - self.pending[expired[0]][1]
            for seq in expired:
                entry = self.pending.get(seq)
                if entry is not None:
                    entry[1] += offset
        if self.pending:
            self._arm_ack_timer(max(next_due, 0) / NS)
        else:
            self.rdq = []
            self.adflr, self.asflr = self.dseq - 1, self.sseq - 1
        if expired:
            self.kick()

    def _has_max_deliveries(self: Consumer, seq: int) -> bool:
        limit = self.max_deliver
        if not limit:
            return False
        count = self.delivery_count(seq)
        if count < limit:
            return False
        if count == limit:
            self.delivery_exceeded(seq, count)
        entry = self.pending.pop(seq, None)
        if entry is not None:
            self._store_delivered(entry[0], seq, count + 1, entry[1])
            self.move_ack_floor(entry[0], seq)
        self.rdc[seq] = count
        if self.max_ack_pending:
            self.kick()
        return True
