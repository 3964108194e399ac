"""The subject index and match cursors against a brute-force scan of the same store.

Random stores (subjects from a small token alphabet, so filters match often),
random removals, purges and compactions, random filters with ``*`` and ``>``
(several at a time): every answer the indexes give must be what looking at
every stored message gives.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.core.subjects import matches
from fakejs.jetstream.storage.cursor import MatchCursor
from fakejs.jetstream.storage.store import MessageStore, StoredMessage
from fakejs.jetstream.storage.subject_index import SubjectIndex, filter_matcher

TOKENS = ("a", "b", "c")
subjects = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3).map(".".join)
filter_tokens = st.lists(st.sampled_from((*TOKENS, "*")), min_size=1, max_size=3)
single_filters = st.one_of(
    filter_tokens.map(".".join),
    filter_tokens.map(lambda toks: ".".join([*toks[:-1], ">"])),
    st.just(">"),
)
filter_sets = st.lists(single_filters, min_size=0, max_size=3)

operations = st.one_of(
    st.tuples(st.just("store"), subjects),
    st.tuples(st.just("store"), subjects),
    st.tuples(st.just("store"), subjects),
    st.tuples(st.just("remove"), st.integers(0, 40)),
    st.tuples(st.just("purge"), st.one_of(st.just(""), single_filters), st.integers(0, 40), st.integers(0, 3)),
    st.tuples(st.just("skip"), st.integers(1, 5)),
)


def wanted(filters: list[str], subject: str) -> bool:
    return not filters or any(matches(f, subject) for f in filters)


def brute_next(store: MessageStore, start: int, filters: list[str]) -> StoredMessage | None:
    return next((m for m in store if m.seq >= start and wanted(filters, m.subject)), None)


def apply(store: MessageStore, op: tuple[object, ...]) -> None:
    kind = op[0]
    if kind == "store":
        store.store(str(op[1]), None, b"x", 0)
    elif kind == "remove":
        store.remove(int(str(op[1])))
    elif kind == "purge":
        store.purge(str(op[1]), int(str(op[2])), int(str(op[3])))
    else:
        store.skip_to(store.last_seq + 1 + int(str(op[1])))


def check_queries(store: MessageStore, filters: list[str], start: int) -> None:
    msgs = list(store)
    assert store.next_matching(start, filters) is brute_next(store, start, filters)
    for f in filters:
        assert store.next_message(start, f) is brute_next(store, start, [f])
        assert store.subject_counts(f) == brute_counts(msgs, [f])
        assert store.index.total(f) == sum(brute_counts(msgs, [f]).values())
        assert store.filtered_count(0, [f]) == sum(brute_counts(msgs, [f]).values())
        last = [m for m in msgs if matches(f, m.subject)]
        if f != ">":
            assert store.last_message(f) is (last[-1] if last else None)
    counts = brute_counts(msgs, filters)
    assert store.filtered_count(start, filters) == sum(1 for m in msgs if m.seq >= start and wanted(filters, m.subject))
    assert store.num_subjects == len(brute_counts(msgs, []))
    for up_to in (None, start):
        lasts = {m.subject: m for m in msgs if wanted(filters, m.subject) and (up_to is None or m.seq <= up_to)}
        assert store.last_for_subjects(filters, up_to) == sorted(lasts.values(), key=lambda m: m.seq)
    for subject, n in counts.items():
        assert store.count_for(subject) == n


def brute_counts(msgs: list[StoredMessage], filters: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in msgs:
        if wanted(filters, m.subject):
            counts[m.subject] = counts.get(m.subject, 0) + 1
    return counts


@settings(max_examples=300, deadline=None)
@given(st.lists(operations, max_size=40), filter_sets, st.integers(0, 45))
def test_every_query_matches_a_brute_force_scan(ops: list[tuple[object, ...]], filters: list[str], start: int) -> None:
    store = MessageStore()
    for op in ops:
        apply(store, op)
    check_queries(store, filters, start)


@settings(max_examples=300, deadline=None)
@given(st.data(), filter_sets)
def test_a_cursor_follows_a_changing_store(data: st.DataObject, filters: list[str]) -> None:
    """A consumer's walk: mostly forward, sometimes back, with the store changing between steps.

    The budget decides when the cursor leaves its step-by-step scan for the
    heap (0: the heap from the start), so both ways and the switch are covered.
    """
    store = MessageStore()
    for op in data.draw(st.lists(operations, max_size=20)):
        apply(store, op)
    cursor = MatchCursor(store, filters, dense_budget=data.draw(st.sampled_from((0, 1, 3, 64))))
    position = 0
    for _ in range(data.draw(st.integers(1, 30))):
        for op in data.draw(st.lists(operations, max_size=3)):
            apply(store, op)
        step = data.draw(st.sampled_from(("next", "next", "next", "back", "jump")))
        if step == "back":
            position = max(0, position - data.draw(st.integers(1, 80)))
        elif step == "jump":
            position = data.draw(st.integers(0, store.last_seq + 2))
        found = cursor.next(position)
        assert found is brute_next(store, position, filters)
        assert store.next_matching(position, filters) is found  # the store's shared cursors
        if found is not None:
            position = found.seq + 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(subjects, st.booleans())), single_filters)
def test_the_trie_matches_what_matches_says(changes: list[tuple[str, bool]], f: str) -> None:
    """Adding and removing subjects keeps the trie's wildcard walk equal to testing every subject."""
    index = SubjectIndex()
    model: dict[str, list[int]] = {}
    for seq, (subject, remove) in enumerate(changes, 1):
        if remove and model.get(subject):
            index.discard(subject, model[subject].pop(0))
            if not model[subject]:
                del model[subject]
        else:
            index.add(subject, seq)
            model.setdefault(subject, []).append(seq)
    got = {subject: list(seqs) for subject, seqs in index.match(f)}
    assert got == {s: seqs for s, seqs in model.items() if matches(f, s)}
    assert index.seqs_matching(f) == sorted(seq for s, seqs in model.items() if matches(f, s) for seq in seqs)
    assert set(index) == set(model)


def test_deep_and_wide_subjects_walk_only_matching_branches() -> None:
    index = SubjectIndex()
    for i in range(200):
        index.add(f"many.{i}.x", i + 1)
        index.add(f"many.{i}.y", 1000 + i)
    index.add(".".join(["d"] * 2000), 5000)  # deeper than the recursion limit allows for recursion
    assert len(dict(index.match("many.*.x"))) == 200
    assert index.first_from(["many.*.y"], 1100) == 1100
    assert len(dict(index.match("d.>"))) == 1
    assert index.last_of("many.>") == 1199


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(("append", "insert", "remove", "trim", "read")), st.integers(0, 10**6)), max_size=60
    )
)
def test_one_subject_with_many_sequences_stays_sorted(ops: list[tuple[str, int]]) -> None:
    """Appends past several sublist splits, with inserts below the top, removals, trims to the newest few (the
    oldest first, as limits remove them) and positional reads between."""
    index = SubjectIndex()
    model: list[int] = []
    top = 0
    for op, value in ops:
        if op == "append":
            for _ in range(value % 1500 + 1):
                top += 1 + value % 3
                index.add("s", top)
                model.append(top)
        elif op == "insert" and value % (top + 1) not in model:
            index.add("s", value % (top + 1))
            model.append(value % (top + 1))
            model.sort()
        elif op == "remove" and model:
            seq = model.pop(value % len(model))
            index.discard("s", seq)
        elif op == "trim":
            keep = value % 3000
            oldest = index.oldest("s", keep)
            assert oldest == model[: max(len(model) - keep, 0)]
            for seq in oldest:
                index.discard("s", seq)
            del model[: len(oldest)]
        elif op == "read" and model:
            position = value % len(model)
            seqs = index.get("s")
            assert seqs is not None and seqs[position] == model[position]  # builds the positional index
    seqs = index.get("s")
    assert list(seqs or []) == model
    assert index.count("s") == len(model)
    if seqs is not None:
        seqs._check()  # the SortedList's own invariants: sublist sizes, maxes, positional index
        assert [seqs[i] for i in range(len(model))] == model


def test_appends_after_a_positional_read_keep_positions_right() -> None:
    index = SubjectIndex()
    for seq in range(1, 5001):  # past two sublist splits
        index.add("s", seq)
    seqs = index.get("s")
    assert seqs is not None and seqs[4500] == 4501  # builds the positional index
    for seq in range(5001, 5011):
        index.add("s", seq)
    assert [seqs[i] for i in range(4990, 5010)] == list(range(4991, 5011))
    seqs._check()


odd_tokens = st.sampled_from(("a", "b", "", "*", ">", "a+b", "(", "\\"))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(odd_tokens, min_size=1, max_size=3).map(".".join), max_size=3),
    st.lists(odd_tokens, min_size=1, max_size=4).map(".".join),
)
def test_the_compiled_filter_matcher_agrees_with_matches(filters: list[str], subject: str) -> None:
    """Empty tokens, literal wildcard tokens and regex characters in subjects are compared as matches() does."""
    filters = [f for f in filters if ">" not in f.split(".")[:-1]]  # ">" only last, as filters are validated
    assert (filter_matcher(filters)(subject) is not None) == any(matches(f, subject) for f in filters)


def test_a_cursor_serves_its_own_store_and_filters_whichever_list_holds_them() -> None:
    store, other = MessageStore(), MessageStore()
    filters = ["a.*", "b.>"]
    cursor = MatchCursor(store, filters)
    assert cursor.serves(store, filters)
    assert cursor.serves(store, ["a.*", "b.>"])  # an equal list, then taken as the one asked with
    assert cursor.serves(store, filters)
    assert not cursor.serves(other, filters)
    assert not cursor.serves(store, ["a.*"])
    assert not cursor.serves(store, ["b.>", "a.*"])
    assert not cursor.serves(store, [])


def test_a_sparse_scan_hands_over_to_the_heap_where_it_stopped() -> None:
    """Past its budget the step-by-step scan gives up; the heap then answers from where the scan got to."""
    store = MessageStore()
    for i in range(10):
        store.store(f"miss.{i}", None, b"", 0)
    hit = store.store("hit.1", None, b"", 0)
    for i in range(3):
        store.store(f"miss.x{i}", None, b"", 0)
    later = store.store("hit.2", None, b"", 0)
    cursor = MatchCursor(store, ["hit.*"], dense_budget=4)
    assert cursor.next(1) is hit
    assert cursor.next(hit.seq + 1) is later
    assert cursor.next(later.seq + 1) is None
    dense = MatchCursor(store, ["hit.*"], dense_budget=64)  # never gives up over 15 messages
    assert dense.next(1) is hit and dense.next(hit.seq + 1) is later and dense.next(later.seq + 1) is None
