"""Subject validation, matching and the subscription index."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.core.subjects import (
    InvalidSubject,
    SubscriptionIndex,
    is_reserved_reply,
    is_subset,
    is_valid_literal_subject,
    is_valid_subject,
    matches,
    overlap,
)


@dataclass(eq=False)
class S:
    subject: str
    queue: str = ""


@pytest.mark.parametrize(
    "subject,valid",
    [
        ("a", True),
        ("a.b", True),
        ("a.*", True),
        ("a.>", True),
        (">", True),
        ("*.*", True),
        ("", False),
        ("a.", False),
        (".a", False),
        ("a..b", False),
        (">.a", False),
        ("a b", False),
        ("a.b c", False),
        ("a*b", True),
        ("a.>b", True),
    ],
)
def test_is_valid_subject(subject: str, valid: bool) -> None:
    assert is_valid_subject(subject) is valid


@pytest.mark.parametrize(
    "subject,literal", [("a.b", True), ("a.*", False), ("a.>", False), ("a*", True), ("a..b", False)]
)
def test_is_valid_literal_subject(subject: str, literal: bool) -> None:
    assert is_valid_literal_subject(subject) is literal


@pytest.mark.parametrize(
    "pattern,subject,expected",
    [
        ("a.b", "a.b", True),
        ("a.*", "a.b", True),
        ("a.*", "a.b.c", False),
        ("a.>", "a.b.c", True),
        ("a.>", "a", False),
        (">", "x", True),
        ("*.b", "a.b", True),
        ("*", "a.b", False),
        ("a.*.c", "a.b.c", True),
    ],
)
def test_matches(pattern: str, subject: str, expected: bool) -> None:
    assert matches(pattern, subject) is expected


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("a.b", "a.*", True),
        ("a.>", "b.>", False),
        ("a.*", "*.b", True),
        ("a", "a.>", False),
        (">", "a", True),
        ("a.*.c", "a.b.*", True),
        ("a.b", "a.c", False),
        ("a.*", "a.*.c", False),
    ],
)
def test_overlap(a: str, b: str, expected: bool) -> None:
    assert overlap(a, b) is expected
    assert overlap(b, a) is expected


@pytest.mark.parametrize(
    "subject,test,expected",
    [("a.b", "a.*", True), ("a.*", "a.>", True), ("a.>", "a.*", False), ("a.*", "a.b", False), ("a.b", ">", True)],
)
def test_is_subset(subject: str, test: str, expected: bool) -> None:
    assert is_subset(subject, test) is expected


def test_index_rejects_invalid_subjects() -> None:
    index = SubscriptionIndex()
    for bad in ("", "a.", "a..b", ">.a"):
        with pytest.raises(InvalidSubject):
            index.insert(S(bad))
    assert index.count == 0


def test_index_queue_groups_merge_by_name() -> None:
    index = SubscriptionIndex()
    a, b, c = S("a.b", "q"), S("a.*", "q"), S("a.>", "other")
    for sub in (a, b, c):
        index.insert(sub)
    result = index.match("a.b")
    assert sorted(result.qsubs) == ["other", "q"]
    assert set(map(id, result.qsubs["q"])) == {id(a), id(b)}


def test_index_cache_sees_changes() -> None:
    index = SubscriptionIndex()
    assert not index.match("a.b")
    sub = S("a.*")
    index.insert(sub)
    assert index.match("a.b").psubs == [sub]
    index.remove(sub)
    assert not index.match("a.b")
    assert index.count == 0


def test_index_fresh_last_tokens_share_a_result_that_sees_changes() -> None:
    index = SubscriptionIndex()
    inbox = S("_INBOX.x.*")
    index.insert(inbox)
    assert index.match("_INBOX.x.1") is index.match("_INBOX.x.2")
    exact = S("_INBOX.x.3")
    index.insert(exact)
    assert index.match("_INBOX.x.3").psubs == [exact, inbox]
    assert index.match("_INBOX.x.4").psubs == [inbox]
    index.remove(inbox)
    assert index.match("_INBOX.x.3").psubs == [exact]
    assert not index.match("_INBOX.x.4")
    index.remove(exact)
    assert not index.match("_INBOX.x.3")


def test_index_a_last_token_a_subscription_names_is_not_taken_for_a_fresh_one() -> None:
    """Replies that differ only in their last token share one result, unless a subscription names that token."""
    index = SubscriptionIndex()
    inbox, exact = S("_INBOX.>"), S("_INBOX.r.5")
    index.insert(inbox)
    index.insert(exact)
    assert index.match("_INBOX.r.1").psubs == [inbox]
    assert index.match("_INBOX.r.2").psubs == [inbox]
    assert sorted(sub.subject for sub in index.match("_INBOX.r.5").psubs) == ["_INBOX.>", "_INBOX.r.5"]
    assert index.match("_INBOX.r.5.6").psubs == [inbox]
    later = S("_INBOX.r.7")
    index.insert(later)
    assert sorted(sub.subject for sub in index.match("_INBOX.r.7").psubs) == ["_INBOX.>", "_INBOX.r.7"]
    assert index.match("_INBOX.r.8").psubs == [inbox]
    assert not index.match("_INBOX.r.")


def test_index_tokens_no_subscription_names_anywhere_share_a_result() -> None:
    index = SubscriptionIndex()
    acks = S("$JS.ACK.S.C.>")
    index.insert(acks)
    first = index.match("$JS.ACK.S.C.1.1.1.100.9")
    assert first.psubs == [acks]
    assert index.match("$JS.ACK.S.C.1.2.2.101.8") is first
    seventh = S("$JS.ACK.S.C.1.7.*.*.*")
    index.insert(seventh)
    assert index.match("$JS.ACK.S.C.1.7.7.106.3").psubs == [acks, seventh]
    assert index.match("$JS.ACK.S.C.1.8.8.107.2").psubs == [acks]
    assert not index.match("$JS.ACK.S.D.1.1.1.100.9")


TOKENS = st.sampled_from(["a", "b", "c", "*", ">"])
PATTERNS = st.lists(TOKENS, min_size=1, max_size=4).map(".".join).filter(is_valid_subject)
LITERALS = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4).map(".".join)


@settings(max_examples=300)
@given(
    patterns=st.lists(PATTERNS, max_size=12),
    removed=st.sets(st.integers(0, 11)),
    subjects=st.lists(LITERALS, max_size=8),
)
def test_index_agrees_with_brute_force(patterns: list[str], removed: set[int], subjects: list[str]) -> None:
    index = SubscriptionIndex()
    subs = [S(p) for p in patterns]
    for sub in subs:
        index.insert(sub)
    for subject in subjects:  # warm the cache before removing
        index.match(subject)
    live = []
    for i, sub in enumerate(subs):
        if i in removed:
            assert index.remove(sub)
        else:
            live.append(sub)
    for subject in subjects:
        got = {id(s) for s in index.match(subject).psubs}
        assert got == {id(s) for s in live if matches(s.subject, subject)}


@pytest.mark.parametrize(
    ("reply", "reserved"),
    [
        ("_R_.abc", True),
        ("_R_.", True),
        ("$JS.ACK.S.C.1.1.1.0.0", True),
        ("$JS.ACK.", False),  # the prefix alone is an ordinary reply
        ("_GR_.x", True),
        ("_GR_.", False),
        ("_INBOX.x", False),
        ("$JS.ACK", False),
        ("", False),
    ],
)
def test_reserved_replies(reply: str, reserved: bool) -> None:
    assert is_reserved_reply(reply) is reserved


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), PATTERNS),
        st.tuples(st.just("remove"), st.integers(0, 20)),
        st.tuples(st.just("match"), LITERALS),
    ),
    max_size=40,
)


@settings(max_examples=300)
@given(operations=OPERATIONS)
def test_index_agrees_with_brute_force_whatever_the_order_of_changes_and_matches(
    operations: list[tuple[str, Any]],
) -> None:
    play(operations)


def play(operations: list[tuple[str, Any]]) -> None:
    """Insert into, remove from and match on an index as ``operations`` say, each match checked against a
    brute-force scan (a match's argument: a subject, or a list of subjects matched in turn)."""
    index = SubscriptionIndex()
    live: list[S] = []
    for operation, argument in operations:
        if operation == "insert":
            live.append(S(argument))
            index.insert(live[-1])
        elif operation == "remove" and live:
            assert index.remove(live.pop(argument % len(live)))
        elif operation == "match":
            for subject in [argument] if isinstance(argument, str) else argument:
                valid = is_valid_subject(subject)
                expected = {id(s) for s in live if valid and matches(s.subject, subject)}
                assert {id(s) for s in index.match(subject).psubs} == expected, subject


ACK_TOKENS = st.sampled_from(["1", "2", "*", ">"])
ACK_PATTERNS = st.tuples(
    st.sampled_from(["$JS", "*"]),
    st.sampled_from(["ACK", "*"]),
    st.sampled_from(["S", "T", "*"]),
    st.sampled_from(["C", "*"]),
    st.lists(ACK_TOKENS, max_size=3),
).map(lambda parts: ".".join([*parts[:4], *parts[4]]))
# Every ack subject of streams S and T past consumer C with up to three numbers 1 or 2, and malformed ones
ACK_SUBJECTS = [
    ".".join(["$JS.ACK", stream, "C", *numbers])
    for stream in ("S", "T")
    for count in range(4)
    for numbers in itertools.product("12", repeat=count)
] + ["$JS.ACK.S.C..1", "$JS.ACK.S.C.1.", "$JS.ACK.S.C.1..2", "$JS.ACK.S.C.x.1", "$JS.ACK.S..1.1"]


@settings(max_examples=200)
@given(
    operations=st.lists(
        st.one_of(
            st.tuples(st.just("insert"), ACK_PATTERNS.filter(is_valid_subject)),
            st.tuples(st.just("remove"), st.integers(0, 20)),
            st.tuples(st.just("match"), st.permutations(ACK_SUBJECTS)),
        ),
        max_size=12,
    )
)
def test_ack_subjects_remembered_by_their_consumer_agree_with_brute_force(operations: list[tuple[str, Any]]) -> None:
    """An ack subject's result is remembered by stream, consumer and length only while nothing names its numbers
    (each match: every ack subject, in an order of the example's)."""
    play(operations)
