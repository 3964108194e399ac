"""One client's permissions, compiled: may it publish here, subscribe there, receive this?

nats-server turns a user's ``permissions`` into subject indexes (its
sublists) and asks them, per message, what a subscription index would
answer: a publish is allowed when some allow rule would receive a message
on that subject and no deny rule would.  :class:`PermissionChecker` does the
same with :class:`~fakejs.core.subjects.SubscriptionIndex`, so a check costs
one walk of the subject's tokens (and usually a cache hit), however many
rules there are.

The rules, as nats-server's ``client.go`` applies them:

* publish: allowed when the allow list is absent or matches, and the deny
  list does not match.  With ``allow_responses`` an absent allow list means
  *nothing* (only replies), and the reply subjects of requests the client
  received become publishable, ``max_msgs`` times within ``expires``.
* subscribe: the subscription subject is matched *as if it were a
  published subject*, its ``*`` and ``>`` tokens only meeting wildcard rules
  (``SUB foo.*`` is allowed by ``foo.*`` or ``foo.>``, not by ``foo.bar``; a
  deny of ``foo.bar`` does not refuse ``SUB foo.*``).  An entry ``"subject
  queue"`` governs queue subscriptions: once a queue rule matches, the
  queue name decides (wildcards allowed in it).
* delivery: because a deny does not refuse a wider wildcard subscription,
  a client that subscribed (with a wildcard, or in a queue group) to
  something overlapping a subscribe deny has every message checked against
  the deny list before it is delivered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from fakejs.core.subjects import SubscriptionIndex, has_wildcard, is_subset, is_valid_subject, overlap

if TYPE_CHECKING:
    from fakejs.core.users import Permissions, ResponsePermission

# nats-server's defaults for ``allow_responses: true`` (and for zero values).
DEFAULT_RESPONSE_MAX_MSGS = 1
DEFAULT_RESPONSE_EXPIRES = 120.0
# Bounds of the per-client caches (cleared when full).
PUB_CACHE_LIMIT = 1024
DENY_CACHE_LIMIT = 1024
# Tracked reply subjects are pruned after this many new ones, or this often (seconds).
REPLY_PRUNE_COUNT = 4096
REPLY_PRUNE_INTERVAL = 1.0


class Rule:
    """One permission entry as the subject index stores it."""

    __slots__ = ("queue", "subject")

    def __init__(self, subject: str, queue: str = "") -> None:
        self.subject = subject
        self.queue = queue

    def __repr__(self) -> str:
        return f"Rule({self.subject!r}, {self.queue!r})"


def split_subject_queue(entry: str) -> tuple[str, str] | None:
    """nats-server's ``splitSubjectQueue``: ``"subject"`` or ``"subject queue"``; ``None`` when invalid."""
    fields = entry.split()
    if not fields or len(fields) > 2:
        return None
    subject = fields[0]
    queue = fields[1] if len(fields) == 2 else ""
    if not is_valid_subject(subject) or (queue and not is_valid_subject(queue)):
        return None
    return subject, queue


def _index(rules: Iterable[Rule]) -> SubscriptionIndex:
    index = SubscriptionIndex()
    for rule in rules:
        index.insert(rule)
    return index


def queue_matches(queue: str, groups: Iterable[str]) -> bool:
    """nats-server's ``queueMatches``: the queue is one of the rules' queue names (which may be wildcards)."""
    for name in groups:
        if queue == name or (has_wildcard(name) and is_subset(queue, name)):
            return True
    return False


def response_limits(response: ResponsePermission) -> tuple[int, float]:
    """``(max_msgs, expires)`` with nats-server's defaults for zero; negative means no limit."""
    max_msgs = response.max_msgs or DEFAULT_RESPONSE_MAX_MSGS
    expires = response.expires or DEFAULT_RESPONSE_EXPIRES
    return max_msgs, expires


class PermissionChecker:
    """The compiled permissions of one logged-in client.

    ``checks_publish`` is false when publishing is unrestricted (nothing to
    ask per message); :attr:`denies` is ``None`` until a subscription made
    delivery-time checks necessary, then the check itself.
    """

    __slots__ = (
        "_deny_cache",
        "_deny_filter",
        "_deny_rules",
        "_last_prune",
        "_pub_allow",
        "_pub_cache",
        "_pub_deny",
        "_since_prune",
        "_sub_allow",
        "_sub_deny",
        "checks_publish",
        "expires",
        "max_msgs",
        "replies",
        "tracks_replies",
    )

    def __init__(self, permissions: Permissions, now: float = 0.0) -> None:
        publish = permissions.publish
        response = permissions.response
        allow = [Rule(s) for s in (publish.allow if publish else ()) if is_valid_subject(s)]
        deny: list[Rule] = []
        for entry in publish.deny if publish else ():
            parsed = split_subject_queue(entry)
            if parsed is not None:
                deny.append(Rule(parsed[0]))  # a queue means nothing for publishing: its subject counts
        # An allow list that is present but empty allows nothing; allow_responses makes a missing one so.
        self._pub_allow = _index(allow) if allow or response is not None else None
        self._pub_deny = _index(deny) if deny else None
        self.checks_publish = self._pub_allow is not None or self._pub_deny is not None
        self._pub_cache: dict[str, bool] = {}

        subscribe = permissions.subscribe
        sub_allow = _rules(subscribe.allow) if subscribe else []
        self._deny_rules = _rules(subscribe.deny) if subscribe else []
        self._sub_allow = _index(sub_allow) if sub_allow else None
        self._sub_deny = _index(self._deny_rules) if self._deny_rules else None
        self._deny_filter: SubscriptionIndex | None = None
        self._deny_cache: dict[tuple[str, str], bool] = {}

        self.tracks_replies = response is not None
        self.max_msgs, self.expires = response_limits(response) if response is not None else (0, 0.0)
        # reply subject -> [when it was received, replies published to it]
        self.replies: dict[str, list[float]] = {}
        self._since_prune = 0
        self._last_prune = now

    # -- publish ---------------------------------------------------------------------

    def can_publish(self, subject: str, now: float = 0.0) -> bool:
        """Whether the client may publish to ``subject`` (counting a reply it may send, if it is one)."""
        allowed = self._pub_cache.get(subject)
        if allowed is None:
            allowed = self._publish_rules(subject)
            cache = self._pub_cache
            if len(cache) >= PUB_CACHE_LIMIT:
                cache.clear()
            cache[subject] = allowed
        if not allowed and self.tracks_replies:
            return self._response_allowed(subject, now)
        return allowed

    def _publish_rules(self, subject: str) -> bool:
        if self._pub_allow is not None and not self._pub_allow.match(subject).psubs:
            return False
        return not (self._pub_deny is not None and self._pub_deny.match(subject).psubs)

    def _response_allowed(self, subject: str, now: float) -> bool:
        entry = self.replies.get(subject)
        if entry is None:
            return False
        entry[1] += 1
        if (self.max_msgs > 0 and entry[1] > self.max_msgs) or (self.expires > 0 and now - entry[0] > self.expires):
            del self.replies[subject]
            return False
        return True

    def received_reply(self, reply: str, now: float) -> None:
        """A message with ``reply`` was delivered to the client: it may answer there (allow_responses)."""
        if self.can_publish(reply, now):
            return
        self.replies[reply] = [now, 0]
        self._since_prune += 1
        if self._since_prune > REPLY_PRUNE_COUNT or now - self._last_prune > REPLY_PRUNE_INTERVAL:
            self._prune_replies(now)

    def _prune_replies(self, now: float) -> None:
        max_msgs, expires = self.max_msgs, self.expires
        for reply, (received, sent) in list(self.replies.items()):
            if (max_msgs > 0 and sent >= max_msgs) or (expires > 0 and now - received > expires):
                del self.replies[reply]
        self._since_prune = 0
        self._last_prune = now

    # -- subscribe -------------------------------------------------------------------

    def can_subscribe(self, subject: str, queue: str = "") -> bool:
        """Whether the client may subscribe; an allowed one may switch on delivery-time deny checks."""
        allowed = True
        if self._sub_allow is not None:
            found = self._sub_allow.match(subject)
            allowed = bool(found.psubs)
            if queue and found.qsubs:
                allowed = queue_matches(queue, found.qsubs)
        if allowed and self._sub_deny is not None:
            found = self._sub_deny.match(subject)
            allowed = not found.psubs
            if allowed and queue and found.qsubs:
                allowed = not queue_matches(queue, found.qsubs)
        if allowed and self._deny_filter is None and (queue or has_wildcard(subject)):
            self._load_deny_filter(subject)
        return allowed

    def _load_deny_filter(self, subject: str) -> None:
        """A subscription that a deny may cut into: check deliveries from now on."""
        for rule in self._deny_rules:
            if overlap(rule.subject, subject):
                self._deny_filter = _index(Rule(r.subject, r.queue) for r in self._deny_rules)
                return

    @property
    def denies(self) -> bool:
        """Whether deliveries are checked against the subscribe deny list."""
        return self._deny_filter is not None

    def delivery_denied(self, subject: str, queue: str) -> bool:
        """Whether a message on ``subject`` for a subscription (in ``queue``) must not be delivered."""
        deny_filter = self._deny_filter
        if deny_filter is None:
            return False
        key = (subject, queue)
        denied = self._deny_cache.get(key)
        if denied is None:
            found = deny_filter.match(subject)
            denied = bool(found.psubs) or bool(queue and found.qsubs and queue_matches(queue, found.qsubs))
            cache = self._deny_cache
            if len(cache) >= DENY_CACHE_LIMIT:
                cache.clear()
            cache[key] = denied
        return denied


def _rules(entries: Iterable[str]) -> list[Rule]:
    rules = []
    for entry in entries:
        parsed = split_subject_queue(entry)
        if parsed is not None:
            rules.append(Rule(*parsed))
    return rules
