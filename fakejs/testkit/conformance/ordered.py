"""``ordered-reset``: an ordered consumer that sees a gap must start again after the last message it got.

ADR-17's ordered consumer is an ephemeral consumer without acks that the
client recreates, from the stream sequence after the last one it
processed, whenever a delivery is missing (or heartbeats stop).  The watch
follows each such consumer's delivery sequence from its ack subjects; a gap
opens an expectation that a ``CONSUMER.CREATE`` with ``by_start_sequence``
from the right sequence comes within the window.

A consumer counts as ordered when its configuration is what ordered
consumers use (no acks, memory storage, no durable name).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from fakejs.testkit.conformance.report import Client, ClientRef
from fakejs.testkit.conformance.rules import Settings
from fakejs.testkit.conformance.wire import AckSubject


class Judge(Protocol):
    """What the ordered watch needs of the watch it is part of."""

    settings: Settings

    def consumer_config(self, owner: Client, stream: str, consumer: str) -> Mapping[str, Any] | None: ...

    def schedule(self, deadline: float, kind: str, subject: Any) -> None: ...

    def exercise(self, rule: str) -> None: ...

    def violate(
        self, rule: str, owner: Client, stream: str, consumer: str, detail: str, evidence: bytes, at: float
    ) -> None: ...


@dataclass
class Gap:
    """A missing delivery: the reset expected by ``deadline``, from ``start`` (0: any)."""

    start: int
    deadline: float
    detail: str
    evidence: bytes


@dataclass
class OrderedState:
    """One consumer's delivery sequence as its client saw it."""

    account: str
    stream: str
    consumer: str
    ordered: bool
    client_id: int = 0
    client_name: str = ""
    last_dseq: int = 0
    last_sseq: int = 0
    gap: Gap | None = None


def is_ordered(config: Mapping[str, Any] | None) -> bool:
    return (
        config is not None
        and config.get("ack_policy") == "none"
        and bool(config.get("mem_storage"))
        and not config.get("durable_name")
    )


class OrderedWatch:
    """Delivery sequences of ordered consumers, and the resets their gaps call for."""

    def __init__(self, watch: Judge) -> None:
        self._watch = watch
        self._states: dict[tuple[str, str, str], OrderedState] = {}
        # Open gaps by (account, stream, client id): where a CONSUMER.CREATE looks.
        self._gaps: dict[tuple[str, str, int], list[OrderedState]] = {}

    def clear(self) -> None:
        self._states.clear()
        self._gaps.clear()

    def delivered(self, owner: Client, ack: AckSubject, now: float, evidence: Callable[[], bytes]) -> None:
        """A message of a consumer (``evidence`` builds its frame, only needed for a gap)."""
        key = (owner.account.name, ack.stream, ack.consumer)
        state = self._states.get(key)
        if state is None:
            config = self._watch.consumer_config(owner, ack.stream, ack.consumer)
            state = self._states[key] = OrderedState(*key, ordered=is_ordered(config))
        if not state.ordered or state.gap is not None:
            return
        state.client_id, state.client_name = owner.cid, owner.name
        if ack.consumer_seq != state.last_dseq + 1:
            self._watch.exercise("ordered-reset")
            start = state.last_sseq + 1 if state.last_dseq else 0
            detail = f"delivery {ack.consumer_seq} after {state.last_dseq}: no reset"
            if start:
                detail += f" from stream sequence {start}"
            state.gap = Gap(start, now + self._watch.settings.window, detail, evidence())
            self._gaps.setdefault((state.account, state.stream, state.client_id), []).append(state)
            self._watch.schedule(state.gap.deadline, "ordered", state)
            return
        state.last_dseq, state.last_sseq = ack.consumer_seq, ack.stream_seq

    def created(self, owner: Client, stream: str, payload: bytes, evidence: bytes, now: float) -> None:
        """A ``CONSUMER.CREATE``: the reset of a gap on that stream, if one is open."""
        try:
            doc = json.loads(payload)
        except ValueError:
            return
        config = doc.get("config") if isinstance(doc, dict) else None
        if not isinstance(config, dict) or config.get("deliver_policy") != "by_start_sequence":
            return
        start = config.get("opt_start_seq", 0)
        for state in self._gaps.pop((owner.account.name, stream, owner.cid), []):
            gap = state.gap
            if gap is None:
                continue
            state.gap = None
            if gap.start and start != gap.start:
                detail = f"reset from stream sequence {start}, not {gap.start}"
                self._watch.violate("ordered-reset", owner, stream, state.consumer, detail, evidence, now)

    def expired(self, state: OrderedState, deadline: float) -> None:
        gap = state.gap
        if gap is None or gap.deadline != deadline:
            return
        state.gap = None
        gaps = self._gaps.get((state.account, state.stream, state.client_id), [])
        if state in gaps:
            gaps.remove(state)
        client = ClientRef(state.client_id, state.client_name)
        detail = f"{gap.detail} within {self._watch.settings.window:g} s"
        self._watch.violate("ordered-reset", client, state.stream, state.consumer, detail, gap.evidence, deadline)
