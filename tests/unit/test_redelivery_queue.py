"""The redelivery queue against a plain list (nats-server's ``rdq`` semantics)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fakejs.jetstream.consumer.redelivery_queue import RedeliveryQueue

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 30)),
        st.tuples(st.just("remove"), st.integers(0, 30)),
        st.tuples(st.just("pop"), st.just(0)),
        st.tuples(st.just("keep_above"), st.integers(0, 30)),
    ),
    max_size=300,
)


@given(OPS)
def test_behaves_like_a_deduplicated_list(ops: list[tuple[str, int]]) -> None:
    queue, model = RedeliveryQueue(), []
    for op, seq in ops:
        if op == "append":
            queue.append(seq)
            if seq not in model:
                model.append(seq)
        elif op == "remove":
            queue.remove(seq)
            if seq in model:
                model.remove(seq)
        elif op == "pop":
            if model:
                assert queue.popleft() == model.pop(0)
        else:
            queue.keep(lambda s, floor=seq: s >= floor)
            model = [s for s in model if s >= seq]
        assert list(queue) == model
        assert len(queue) == len(model) and bool(queue) == bool(model)
        assert all((s in queue) == (s in model) for s in range(31))


def test_many_removals_then_reuse() -> None:
    queue = RedeliveryQueue()
    for seq in range(100_000):
        queue.append(seq)
        queue.remove(seq)
    queue.append(7)
    assert list(queue) == [7] and queue.popleft() == 7 and not queue
