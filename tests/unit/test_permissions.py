"""The compiled permission checker against a brute-force model of nats-server's rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fakejs.core.permissions import PermissionChecker, queue_matches, split_subject_queue
from fakejs.core.subjects import has_wildcard, matches, overlap
from fakejs.core.users import Permissions, ResponsePermission, SubjectPermission

TOKENS = st.sampled_from(["a", "b", "c"])
RULE_TOKENS = st.sampled_from(["a", "b", "c", "*"])


@st.composite
def rule_subjects(draw: st.DrawFn) -> str:
    toks = draw(st.lists(RULE_TOKENS, min_size=1, max_size=3))
    if draw(st.booleans()):
        toks.append(">")
    return ".".join(toks)


@st.composite
def sub_subjects(draw: st.DrawFn) -> str:
    """Subscription subjects: literal tokens and wildcards (matched as literal tokens against the rules)."""
    return draw(rule_subjects())


literal_subjects = st.lists(TOKENS, min_size=1, max_size=4).map(".".join)
queues = st.sampled_from(["", "q", "r"])
rule_queues = st.sampled_from(["", "q", "r", "*"])


@st.composite
def entries(draw: st.DrawFn) -> str:
    subject = draw(rule_subjects())
    queue = draw(rule_queues)
    return f"{subject} {queue}" if queue else subject


def _rules(entries: tuple[str, ...]) -> list[tuple[str, str]]:
    return [parsed for e in entries if (parsed := split_subject_queue(e)) is not None]


def model_publish(perms: Permissions, subject: str) -> bool:
    """Allowed when no allow list (unless allow_responses) or one rule matches, and no deny rule matches."""
    pub = perms.publish
    allow = pub.allow if pub else ()
    if (allow or perms.response is not None) and not any(matches(rule, subject) for rule in allow):
        return False
    deny = [s for s, _ in _rules(pub.deny)] if pub else []
    return not any(matches(rule, subject) for rule in deny)


def model_subscribe(perms: Permissions, subject: str, queue: str) -> bool:
    """The subscription subject is matched token by token, its wildcards as literal tokens."""
    sub = perms.subscribe
    allow = _rules(sub.allow) if sub else []
    deny = _rules(sub.deny) if sub else []
    allowed = True
    if allow:
        hits = [(s, q) for s, q in allow if matches(s, subject)]
        allowed = any(not q for _, q in hits)
        queue_names = [q for _, q in hits if q]
        if queue and queue_names:
            allowed = queue_matches(queue, queue_names)
    if allowed and deny:
        hits = [(s, q) for s, q in deny if matches(s, subject)]
        allowed = not any(not q for _, q in hits)
        queue_names = [q for _, q in hits if q]
        if allowed and queue and queue_names:
            allowed = not queue_matches(queue, queue_names)
    return allowed


def model_delivery_denied(perms: Permissions, subject: str, queue: str) -> bool:
    deny = _rules(perms.subscribe.deny) if perms.subscribe else []
    hits = [(s, q) for s, q in deny if matches(s, subject)]
    if any(not q for _, q in hits):
        return True
    queue_names = [q for _, q in hits if q]
    return bool(queue and queue_names and queue_matches(queue, queue_names))


permission_sets = st.builds(
    Permissions,
    publish=st.none()
    | st.builds(
        SubjectPermission,
        allow=st.lists(rule_subjects(), max_size=3).map(tuple),
        deny=st.lists(rule_subjects(), max_size=3).map(tuple),
    ),
    subscribe=st.none()
    | st.builds(
        SubjectPermission,
        allow=st.lists(entries(), max_size=3).map(tuple),
        deny=st.lists(entries(), max_size=3).map(tuple),
    ),
    response=st.none() | st.just(ResponsePermission()),
)


@settings(max_examples=300, deadline=None)
@given(permission_sets, st.lists(literal_subjects, min_size=1, max_size=6))
def test_publish_matches_the_model(perms: Permissions, subjects: list[str]) -> None:
    checker = PermissionChecker(perms)
    for subject in subjects * 2:  # the second round is answered from the cache
        assert checker.can_publish(subject) == model_publish(perms, subject), subject


@settings(max_examples=300, deadline=None)
@given(permission_sets, st.lists(st.tuples(sub_subjects(), queues), min_size=1, max_size=6), literal_subjects)
def test_subscribe_and_delivery_match_the_model(perms: Permissions, subs: list[tuple[str, str]], message: str) -> None:
    checker = PermissionChecker(perms)
    deny = _rules(perms.subscribe.deny) if perms.subscribe else []
    filtering = False
    for subject, queue in subs:
        allowed = checker.can_subscribe(subject, queue)
        assert allowed == model_subscribe(perms, subject, queue), (subject, queue)
        if allowed and (queue or has_wildcard(subject)) and any(overlap(s, subject) for s, _ in deny):
            filtering = True
        assert checker.denies == filtering
        for _, queue_of_sub in subs:
            expected = filtering and model_delivery_denied(perms, message, queue_of_sub)
            assert checker.delivery_denied(message, queue_of_sub) == expected


def test_a_deny_does_not_refuse_a_wider_wildcard_but_filters_its_messages() -> None:
    checker = PermissionChecker(Permissions(subscribe=SubjectPermission(allow=("foo.>",), deny=("foo.bar",))))
    assert not checker.can_subscribe("foo.bar")
    assert not checker.denies
    assert checker.can_subscribe("foo.*")
    assert checker.denies
    assert checker.delivery_denied("foo.bar", "")
    assert not checker.delivery_denied("foo.baz", "")


def test_wildcard_subscriptions_need_a_wildcard_allow() -> None:
    checker = PermissionChecker(Permissions(subscribe=SubjectPermission(allow=("foo.bar", "baz.*"))))
    assert checker.can_subscribe("foo.bar")
    assert not checker.can_subscribe("foo.*")
    assert checker.can_subscribe("baz.*")
    assert checker.can_subscribe("baz.x")
    assert checker.can_subscribe("baz.>")  # the ">" token meets the "*" rule, as in nats-server
    assert not checker.can_subscribe("baz.x.y")


def test_queue_entries() -> None:
    checker = PermissionChecker(Permissions(subscribe=SubjectPermission(allow=("foo", "bar v1", "baz v.*"))))
    assert checker.can_subscribe("foo") and checker.can_subscribe("foo", "any")
    assert checker.can_subscribe("bar", "v1")
    assert not checker.can_subscribe("bar")
    assert not checker.can_subscribe("bar", "v2")
    assert checker.can_subscribe("baz", "v.x") and not checker.can_subscribe("baz", "w")
    denied = PermissionChecker(Permissions(subscribe=SubjectPermission(deny=("foo bad",))))
    assert denied.can_subscribe("foo") and denied.can_subscribe("foo", "good")
    assert not denied.can_subscribe("foo", "bad")


def test_responses_are_allowed_max_times_within_expiry() -> None:
    perms = Permissions(publish=SubjectPermission(allow=("ok",)), response=ResponsePermission(max_msgs=2, expires=10))
    checker = PermissionChecker(perms, now=0.0)
    assert checker.can_publish("ok") and not checker.can_publish("_INBOX.1")
    checker.received_reply("_INBOX.1", 1.0)
    checker.received_reply("ok", 1.0)  # already publishable: not tracked
    assert "ok" not in checker.replies
    assert checker.can_publish("_INBOX.1", 2.0)
    assert checker.can_publish("_INBOX.1", 2.0)
    assert not checker.can_publish("_INBOX.1", 2.0)
    checker.received_reply("_INBOX.2", 3.0)
    assert not checker.can_publish("_INBOX.2", 14.0)  # expired


def test_allow_responses_without_allow_list_allows_only_replies() -> None:
    checker = PermissionChecker(Permissions(response=ResponsePermission()))
    assert checker.checks_publish
    assert not checker.can_publish("anything")
    checker.received_reply("reply.1", 0.0)
    assert checker.can_publish("reply.1", 1.0)
    assert not checker.can_publish("reply.1", 1.0)  # one reply by default


def test_no_restrictions_means_no_checks() -> None:
    checker = PermissionChecker(Permissions())
    assert not checker.checks_publish and checker.can_publish("x") and checker.can_subscribe("x.>")
