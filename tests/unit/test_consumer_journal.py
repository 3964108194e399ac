"""A consumer's journal replays to the state it recorded, however its records were gathered.

An ack-none consumer's deliveries are gathered as one record per run (the
newest, while both sequences only move up); random runs of deliveries, acks,
resets and turn ends must replay to exactly the live state, and the log must
hold fewer records than changes when deliveries come in runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.jetstream.storage.consumer_state import ConsumerState
from fakejs.jetstream.storage.files import StreamFiles
from fakejs.jetstream.storage.journal import read_log

T0 = 1_700_000_000_000_000_000

steps = st.lists(
    st.one_of(
        st.tuples(st.just("deliver"), st.integers(1, 3)),  # the stream sequence moves by this
        st.tuples(st.just("deliver"), st.integers(-3, 0)),  # or back (a reset, a sequence put back)
        st.tuples(st.just("ack"), st.integers(0, 3)),
        st.tuples(st.just("reset"), st.integers(0, 5)),
        st.tuples(st.just("turn"), st.just(0)),
    ),
    max_size=40,
)


def state_of(state: ConsumerState) -> tuple[object, ...]:
    return (state.delivered, state.ack_floor, state.pending, state.redelivered)


def open_journal(directory: str, policy: str) -> tuple[ConsumerState, list[Callable[[], None]]]:
    turn_ends: list[Callable[[], None]] = []
    state = ConsumerState(policy, -1)
    StreamFiles(directory).consumer_journal("C", state, turn_ends.append).open()
    return state, turn_ends


def replayed(directory: str, policy: str) -> ConsumerState:
    again = ConsumerState(policy, -1)
    StreamFiles(directory).consumer_journal("C", again).replay()
    return again


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["none", "explicit"]), steps)
def test_a_journal_replays_to_the_live_state(
    tmp_path_factory: pytest.TempPathFactory, policy: str, changes: list[tuple[str, int]]
) -> None:
    directory = os.path.join(tmp_path_factory.mktemp("S"), "S")
    state, turn_ends = open_journal(directory, policy)
    consumer_sequence = stream_sequence = 0
    for kind, value in changes:
        if kind == "deliver":
            consumer_sequence += 1
            stream_sequence = max(stream_sequence + value, 1)
            state.update_delivered(consumer_sequence, stream_sequence, 1, T0 + consumer_sequence)
        elif kind == "ack":
            state.update_acks(max(consumer_sequence - value, 1), max(stream_sequence - value, 1))
        elif kind == "reset":
            state.reset(value)
        elif turn_ends:
            turn_ends.pop()()
    assert state.journal is not None
    state.journal.close()
    assert state_of(replayed(directory, policy)) == state_of(state)


def test_an_ack_none_run_of_deliveries_is_one_record(tmp_path: os.PathLike[str]) -> None:
    directory = os.path.join(tmp_path, "S")
    state, turn_ends = open_journal(directory, "none")
    for seq in range(1, 101):
        state.update_delivered(seq, seq + 10, 1, T0 + seq)
    turn_ends.pop()()
    state.update_acks(100, 110)
    state.update_delivered(101, 115, 1, T0)
    state.update_delivered(102, 105, 1, T0)  # a lower stream sequence than the one held: both are written
    journal = state.journal
    assert journal is not None
    journal.close()
    records = read_log(journal.path)[0]
    assert [r[0] for r in records] == ["snap", "d", "a", "d", "d"]
    assert records[1] == ["d", 100, 110, 1, T0 + 100]
    again = replayed(directory, "none")
    assert records[3:] == [["d", 101, 115, 1, T0], ["d", 102, 105, 1, T0]]
    assert state_of(again) == state_of(state) == ([102, 115], [102, 115], {}, {})


def test_deliveries_awaiting_acks_are_each_recorded(tmp_path: os.PathLike[str]) -> None:
    directory = os.path.join(tmp_path, "S")
    state, _ = open_journal(directory, "explicit")
    for seq in range(1, 6):
        state.update_delivered(seq, seq, 1, T0 + seq)
    journal = state.journal
    assert journal is not None
    journal.close()
    assert [r[0] for r in read_log(journal.path)[0]] == ["snap", "d", "d", "d", "d", "d"]
