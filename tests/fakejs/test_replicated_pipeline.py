"""A replicated stream's leader pipelines a fast batch (and a source's messages): each message is proposed without
waiting for the one before it to be applied, and what each brings is answered in order once it is.

The stream's group is a stand-in that leads and commits only when told, so what is in flight at each step is
exact: the messages of one turn of the loop are proposed together (``propose_soon``, one append, as
nats-server's leader sends its proposal queue in one append), decided at consecutive sequences; nothing is answered before
its message is applied; a message checked against the stream waits for those in flight; a proposal that fails
answers nothing and lets the leader's batches go; a source's failed proposal starts the sources over.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import cast

from fakejs.jetstream.raft import Entry, EntryKind
from fakejs.jetstream.replication import ProposalLost, ReplicatedGroup
from fakejs.jetstream.storage.store import MessageStore
from fakejs.jetstream.stream.entries import StreamFastMessage, StreamMessage, decode_entry
from fakejs.jetstream.stream.replica import StreamStateMachine
from fakejs.jetstream.stream.replicated import ReplicatedStream
from fakejs.jetstream.stream.replicated_feed import FeedProposals
from fakejs.jetstream.stream.stream import Stream
from fakejs.protocol import headers as hdrs
from tests.harness.replicated import wait
from tests.harness.stream_host import Host, config


class Group:
    """A member that leads, and commits its proposals (applying them to ``machine``) only when told."""

    def __init__(self, machine: StreamStateMachine) -> None:
        self.machine = machine
        self.is_leader = True
        self.leader = "L"
        self.proposals: list[int] = []  # how many entries each append carried
        self.waiting: deque[tuple[asyncio.Future[int], bytes]] = deque()
        self.gathered: list[tuple[asyncio.Future[int], bytes]] = []  # proposed soon, appended at the loop's turn
        self.index = 0

    def propose(self, data: bytes) -> asyncio.Future[int]:
        self.append()  # what was proposed before goes first
        future = asyncio.get_running_loop().create_future()
        self.proposals.append(1)
        self.waiting.append((future, data))
        return future

    def propose_soon(self, data: bytes) -> asyncio.Future[int]:
        loop = asyncio.get_running_loop()
        if not self.gathered:
            loop.call_soon(self.append)
        future = loop.create_future()
        self.gathered.append((future, data))
        return future

    def append(self) -> None:
        gathered, self.gathered = self.gathered, []
        if gathered:
            self.proposals.append(len(gathered))
            self.waiting.extend(gathered)

    def commit(self, count: int) -> None:
        for _ in range(count):
            future, data = self.waiting.popleft()
            self.index += 1
            self.machine.apply([Entry(self.index, 1, EntryKind.NORMAL, data)])
            future.set_result(self.index)

    def lose(self) -> None:
        """Another leader's entries took the places of those waiting."""
        while self.waiting:
            future, _ = self.waiting.popleft()
            future.set_exception(ProposalLost("replaced"))

    def sequences(self) -> list[int]:
        """The stream sequences of the messages waiting."""
        decoded = [decode_entry(data) for _, data in self.waiting]
        return [
            entry.message.seq if isinstance(entry, StreamFastMessage) else entry.seq
            for entry in decoded
            if isinstance(entry, StreamFastMessage | StreamMessage)
        ]


class Leader:
    """A stream ``S`` (``allow_batched``) led through a :class:`Group`; ``sent`` is every reply, in order."""

    def __init__(self) -> None:
        host = Host()
        self.sent: list[tuple[str, bytes]] = []
        host.reply = lambda subject, payload, hdr=None, empty_reply=False: self.sent.append((subject, payload))  # type: ignore[method-assign]
        self.stream = Stream(host, config(allow_batched=True), host.clock.time_ns(), MessageStore())
        machine = StreamStateMachine(self.stream)
        self.group = Group(machine)
        self.replicated = ReplicatedStream(self.stream, machine, cast(ReplicatedGroup, self.group))
        self.tasks: list[asyncio.Task[object]] = []

    def publish(self, reply: str, payload: bytes, hdr: bytes | None = None) -> None:
        """Publish on ``s.a`` with ``reply`` (a fast batch's), as the server does: a task per message."""
        self.tasks.append(asyncio.ensure_future(self.replicated.answer("s.a", reply, hdr, payload)))


def fi(batch: str, seq: int, op: int, gap: str = "ok", flow: int = 2) -> str:
    return f"R.{batch}.{flow}.{gap}.{seq}.{op}.$FI"


def flow(seq: int, every: int) -> bytes:
    return b'{"type":"ack","seq":%d,"msgs":%d}' % (seq, every)


async def test_a_fast_batch_is_proposed_without_waiting_and_answered_once_applied() -> None:
    leader = Leader()
    sent = [fi("B", 1, 0)] + [fi("B", seq, 1) for seq in (2, 3)] + [fi("B", 4, 2)]
    for seq, reply in enumerate(sent, start=1):
        leader.publish(reply, b"m%d" % seq)
    group = leader.group
    await wait(lambda: len(group.waiting) == 4)  # all in flight at once, none applied
    assert group.proposals == [4]  # decided in one turn of the loop: proposed together
    assert group.sequences() == [1, 2, 3, 4]
    assert leader.sent == []  # nothing answered before it is applied
    group.commit(1)
    await wait(lambda: leader.sent == [(sent[0], flow(0, 2))])
    group.commit(3)
    final = b'{"stream":"S","seq":4,"batch":"B","count":4}'
    await wait(lambda: leader.sent == [(sent[0], flow(0, 2)), (sent[1], flow(2, 2)), (sent[3], final)])
    assert leader.stream.store.last_seq == 4
    assert len(leader.replicated.batches.pipeline) == 0


async def test_a_message_checked_against_the_stream_waits_for_those_in_flight() -> None:
    leader = Leader()
    first, commit = fi("E", 1, 0), fi("E", 2, 2)
    leader.publish(first, b"one")
    leader.publish(commit, b"two", hdrs.build([("Nats-Expected-Last-Sequence", "1")]))
    group = leader.group
    await wait(lambda: len(group.waiting) == 1)
    group.commit(1)  # the second is decided once the first is stored: its expectation holds
    await wait(lambda: len(group.waiting) == 1 and group.sequences() == [2])
    group.commit(1)
    final = b'{"stream":"S","seq":2,"batch":"E","count":2}'
    await wait(lambda: leader.sent == [(first, flow(0, 2)), (commit, final)])


async def test_a_gap_behind_messages_in_flight_is_answered_after_them() -> None:
    leader = Leader()
    first, gap = fi("Q", 1, 0, "fail", flow=1), fi("Q", 3, 1, "fail", flow=1)
    leader.publish(first, b"q1")
    leader.publish(gap, b"q3")  # ends the batch at once, proposing nothing
    group = leader.group
    await wait(lambda: len(group.waiting) == 1 and len(leader.replicated.batches.pipeline) == 2)
    assert leader.sent == []
    group.commit(1)
    ended = b'{"stream":"S","seq":1,"batch":"Q","count":1}'
    expected = [(first, flow(0, 1)), (first, flow(1, 1)), (gap, b'{"type":"gap","last_seq":2,"seq":3}'), (gap, ended)]
    await wait(lambda: leader.sent == expected)
    assert leader.replicated.batches.tracks.tracks == {}  # the leader ended it: not tracked once its message applies


async def test_a_lost_proposal_answers_nothing_and_lets_the_batches_go() -> None:
    leader = Leader()
    leader.publish(fi("L", 1, 0), b"l1")
    leader.publish(fi("L", 2, 1), b"l2")
    group = leader.group
    await wait(lambda: len(group.waiting) == 2)
    group.lose()
    await wait(lambda: len(leader.replicated.batches.pipeline) == 0)
    assert leader.sent == []
    assert len(leader.replicated.batches.fast) == 0


def source_three(leader: Leader) -> list[str]:
    """Three sourced messages handed to the leader's feed; the restarts of the sources it asks for."""
    restarts: list[str] = []
    feed = FeedProposals(leader.replicated, lambda: restarts.append("restart"))
    for n in range(3):
        feed.store_sourced("s.a", None, b"%d" % n)
    return restarts


async def test_a_sources_messages_are_proposed_without_waiting() -> None:
    leader = Leader()
    restarts = source_three(leader)
    group = leader.group
    await wait(lambda: len(group.waiting) == 3)
    assert group.proposals == [3]
    assert group.sequences() == [1, 2, 3]
    group.commit(3)
    await wait(lambda: len(leader.replicated.pipeline) == 0)
    assert leader.stream.store.last_seq == 3
    assert restarts == []


async def test_a_sources_lost_proposal_starts_the_sources_over_once_the_rest_settled() -> None:
    leader = Leader()
    restarts = source_three(leader)
    group = leader.group
    await wait(lambda: len(group.waiting) == 3)
    group.commit(1)
    group.lose()
    await wait(lambda: restarts == ["restart"])
    assert len(leader.replicated.pipeline) == 0
    assert leader.stream.store.last_seq == 1


async def test_a_mirrors_messages_are_proposed_together() -> None:
    leader = Leader()
    feed = FeedProposals(leader.replicated, lambda: None)
    assert all(feed.store_mirrored("s.a", None, b"%d" % seq, seq, 1) for seq in (1, 2, 3))
    group = leader.group
    await wait(lambda: len(group.waiting) == 3)
    assert group.proposals == [3]
    assert group.sequences() == [1, 2, 3]
    group.commit(3)
    await wait(lambda: leader.stream.store.last_seq == 3)
