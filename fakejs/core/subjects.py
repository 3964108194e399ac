"""Subjects: validation, matching, and the subscription index.

The rules are nats-server's (``sublist.go``): tokens are separated by
``.``; ``*`` matches one token and ``>`` one or more trailing tokens, but
only when they are a whole token; a subscription subject is valid when it
has no empty token and ``>`` (if any) is last.  Published subjects are
matched literally, token by token: publishing to ``a.*`` reaches the
subscribers of ``a.*`` and ``a.>`` but not those of ``a.b``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

PWC = "*"
FWC = ">"
ACK_PREFIX = "$JS.ACK."  # a JetStream ack subject: its last tokens (sequences, time) never repeat
ACK_CONSUMER_ENDS = 4  # an ack subject's tokens past this many are numbers: $JS.ACK.<stream>.<consumer>.<n>...
_BLANK_CHARS = frozenset(" \t\n\r\f")


class InvalidSubject(ValueError):
    """Raised when a subscription subject cannot be indexed."""


def tokens(subject: str) -> list[str]:
    return subject.split(".")


def is_valid_subject(subject: str, check_runes: bool = False) -> bool:
    """nats-server's ``IsValidSubject`` (wildcards allowed)."""
    if not subject:
        return False
    if check_runes and ("\x00" in subject or "\ufffd" in subject or _has_surrogate(subject)):
        return False
    after_full_wildcard = False
    for token in subject.split("."):
        if not token or after_full_wildcard:
            return False
        if len(token) > 1:
            if not _BLANK_CHARS.isdisjoint(token):
                return False
            continue
        if token == FWC:
            after_full_wildcard = True
        elif token in _BLANK_CHARS:
            return False
    return True


def _has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def is_valid_literal_subject(subject: str) -> bool:
    """nats-server's ``IsValidLiteralSubject``: no empty or wildcard tokens."""
    for token in subject.split("."):
        if not token or token in (PWC, FWC):
            return False
    return True


def has_wildcard(subject: str) -> bool:
    for token in subject.split("."):
        if token in (PWC, FWC):
            return True
    return False


def matches(filter_subject: str, subject: str) -> bool:
    """Whether a literal ``subject`` matches ``filter_subject`` (which may have wildcards)."""
    if filter_subject in (subject, FWC):
        return True
    filter_tokens = filter_subject.split(".")
    subject_tokens = subject.split(".")
    for i, filter_token in enumerate(filter_tokens):
        if i >= len(subject_tokens):
            return False
        if filter_token == FWC:
            return True
        if filter_token != PWC and filter_token != subject_tokens[i]:
            return False
    return len(filter_tokens) == len(subject_tokens)


def is_subset(subject: str, test: str) -> bool:
    """nats-server's ``subjectIsSubsetMatch``: every subject matching
    ``subject`` also matches ``test`` (both may contain wildcards)."""
    subject_tokens = subject.split(".")
    test_tokens = test.split(".")
    for i, t in enumerate(test_tokens):
        if i >= len(subject_tokens):
            return False
        s = subject_tokens[i]
        if t == FWC:
            return True
        if t == PWC:
            if s == FWC:
                return False
            continue
        if s != t:
            return False
    return len(subject_tokens) == len(test_tokens)


def overlap(a: str, b: str) -> bool:
    """Whether some literal subject matches both ``a`` and ``b``."""
    a_tokens = a.split(".")
    b_tokens = b.split(".")
    for i in range(max(len(a_tokens), len(b_tokens))):
        a_token = a_tokens[i] if i < len(a_tokens) else None
        b_token = b_tokens[i] if i < len(b_tokens) else None
        if a_token == FWC or b_token == FWC:
            return a_token is not None and b_token is not None
        if a_token is None or b_token is None:
            return False
        if a_token != b_token and a_token != PWC and b_token != PWC:
            return False
    return True


# ---------------------------------------------------------------------------


class _Node:
    """A trie node (nats-server's sublist ``node``): the plain (``psubs``) and queue (``qsubs``) subscriptions
    on the subject ending here, and the level below."""

    __slots__ = ("next", "psubs", "qsubs")

    def __init__(self) -> None:
        self.next: _Level | None = None
        self.psubs: list[Any] = []
        self.qsubs: dict[str, list[Any]] = {}


class _Level:
    """One token position of the trie (nats-server's sublist ``level``): literal tokens' nodes, and the
    nodes of ``*`` (``pwc``, ``partial_wildcard``) and ``>`` (``fwc``, ``full_wildcard``)."""

    __slots__ = ("full_wildcard", "nodes", "partial_wildcard")

    def __init__(self) -> None:
        self.nodes: dict[str, _Node] = {}
        self.partial_wildcard: _Node | None = None
        self.full_wildcard: _Node | None = None

    def empty(self) -> bool:
        return not self.nodes and self.partial_wildcard is None and self.full_wildcard is None


class MatchResult:
    """Plain subscribers, and queue subscribers grouped by queue name."""

    __slots__ = ("psubs", "qsubs")

    def __init__(self) -> None:
        self.psubs: list[Any] = []
        self.qsubs: dict[str, list[Any]] = {}

    def __bool__(self) -> bool:
        return bool(self.psubs or self.qsubs)


EMPTY_RESULT = MatchResult()


class SubscriptionIndex:
    """A subject trie of subscriptions with a per-subject result cache.

    Stored items only need ``subject`` and ``queue`` attributes; the index
    never looks at anything else, so client and internal subscriptions
    share it.
    """

    CACHE_LIMIT = 4096
    RECENT_LIMIT = 1024

    def __init__(self) -> None:
        self._root = _Level()
        self._cache: dict[str, MatchResult] = {}
        # The literal tokens subscriptions name at each position, with counts.  A token
        # of a published subject that no subscription names at its position meets no
        # literal node: the subject matches what it matches with a literal ``*`` there.
        # So ``$JS.ACK.S.C.1.7.7.<ts>.<pending>`` and fresh reply inboxes share one cached
        # result (``$JS.ACK.S.C.*.*.*.*.*``) instead of each walking the trie and churning the cache.
        self._named: list[dict[str, int]] = []
        # Published subjects seen lately whose result came through their folded key (a reply
        # inbox a consumer delivers to, message after message): one lookup instead of a fold.
        # Unique subjects (ack subjects) only pass through it; any change of subscriptions
        # empties it, so it never holds a stale result.
        self._recent: dict[str, MatchResult] = {}
        # A subject's result by all but its last token, when that last token folded to ``*``
        # (with the tokens named at its position): a fresh reply inbox (``_INBOX.<id>.<n>``, a PubAck's) finds its
        # result without a fold.  Emptied with ``_recent``.
        self._heads: dict[str, tuple[dict[str, int] | None, MatchResult]] = {}
        # An ack subject's result by its stream, consumer and number of dots, while no subscription that could
        # match an ack names a token past the consumer's (each of an ack's tokens there folds to ``*``), so an
        # ack finds its result without a fold.  Emptied with ``_recent``.
        self._acks: dict[tuple[str, str, int], MatchResult] = {}
        self._ack_names = 0  # literal tokens past the consumer's in subscriptions that could match an ack
        self.count = 0
        # Lifetime counters, reported by /subsz like nats-server's sublist stats.
        self.inserts = 0
        self.removes = 0
        self.matches = 0
        self.cache_hits = 0

    def insert(self, sub: Any) -> None:
        level = self._root
        node: _Node | None = None
        after_full_wildcard = False
        for token in sub.subject.split("."):
            if not token or after_full_wildcard:
                raise InvalidSubject(sub.subject)
            if token == PWC:
                if level.partial_wildcard is None:
                    level.partial_wildcard = _Node()
                node = level.partial_wildcard
            elif token == FWC:
                after_full_wildcard = True
                if level.full_wildcard is None:
                    level.full_wildcard = _Node()
                node = level.full_wildcard
            else:
                node = level.nodes.get(token)
                if node is None:
                    node = level.nodes[token] = _Node()
            if node.next is None:
                node.next = _Level()
            level = node.next
        assert node is not None
        if sub.queue:
            node.qsubs.setdefault(sub.queue, []).append(sub)
        else:
            node.psubs.append(sub)
        self._count_tokens(sub.subject, 1)
        self.count += 1
        self.inserts += 1
        self._invalidate(sub.subject)

    def _path(self, subject: str) -> list[tuple[_Level, str, _Node]] | None:
        """The (level, token, node) steps to ``subject``'s node, or ``None`` if it has none."""
        path: list[tuple[_Level, str, _Node]] = []
        level: _Level | None = self._root
        for token in subject.split("."):
            if level is None:
                return None
            if token == PWC:
                node = level.partial_wildcard
            elif token == FWC:
                node = level.full_wildcard
            else:
                node = level.nodes.get(token)
            if node is None:
                return None
            path.append((level, token, node))
            level = node.next
        return path or None

    def remove(self, sub: Any) -> bool:
        path = self._path(sub.subject)
        if path is None:
            return False
        node = path[-1][2]
        try:
            if sub.queue:
                group = node.qsubs[sub.queue]
                group.remove(sub)
                if not group:
                    del node.qsubs[sub.queue]
            else:
                node.psubs.remove(sub)
        except (KeyError, ValueError):
            return False
        self._count_tokens(sub.subject, -1)
        self.count -= 1
        self.removes += 1
        # Prune empty nodes bottom-up.
        for parent, token, child in reversed(path):
            if child.psubs or child.qsubs or (child.next is not None and not child.next.empty()):
                break
            if token == PWC:
                parent.partial_wildcard = None
            elif token == FWC:
                parent.full_wildcard = None
            else:
                del parent.nodes[token]
        self._invalidate(sub.subject)
        return True

    def _count_tokens(self, subject: str, delta: int) -> None:
        named = self._named
        tokens = subject.split(".")
        if len(tokens) > ACK_CONSUMER_ENDS and tokens[0] in ("$JS", PWC) and tokens[1] in ("ACK", PWC):
            self._ack_names += delta * sum(token != PWC for token in tokens[ACK_CONSUMER_ENDS:])
        for position, token in enumerate(tokens):
            if token in (PWC, FWC):
                continue
            while len(named) <= position:
                named.append({})
            counts = named[position]
            left = counts.get(token, 0) + delta
            if left:
                counts[token] = left
            else:
                del counts[token]

    def _invalidate(self, subject: str) -> None:
        if self._recent:
            self._recent.clear()
        if self._heads:
            self._heads.clear()
        if self._acks:
            self._acks.clear()
        if not self._cache:
            return
        if not has_wildcard(subject):
            self._cache.pop(subject, None)
            return
        stale = [key for key in self._cache if matches(subject, key)]
        for key in stale:
            del self._cache[key]

    def match(self, subject: str) -> MatchResult:
        """Subscriptions interested in a published (literal) subject."""
        self.matches += 1
        cached = self._cache.get(subject)
        if cached is None:
            cached = self._recent.get(subject)
        if cached is not None:
            self.cache_hits += 1
            return cached
        head = ""
        # An ack's subject holds its sequences and time: never seen again, so neither its head nor the
        # subject itself is remembered (it would only crowd out subjects that do come again).
        acking = subject.startswith(ACK_PREFIX)
        ack_key: tuple[str, str, int] | None = None
        if acking:
            if not self._ack_names and ".." not in subject and subject[-1] != ".":
                parts = subject.split(".", ACK_CONSUMER_ENDS)
                if len(parts) > ACK_CONSUMER_ENDS:
                    ack_key = (parts[2], parts[3], subject.count("."))
                    if (cached := self._acks.get(ack_key)) is not None:
                        self.cache_hits += 1
                        return cached
        else:
            head, _, last = subject.rpartition(".")
            if last and (folded := self._heads.get(head)) is not None:
                names, cached = folded
                if names is None or last not in names:
                    self.cache_hits += 1
                    recent = self._recent
                    if len(recent) < self.RECENT_LIMIT:  # a subject published again finds it there
                        recent[subject] = cached
                    return cached
        tokens = subject.split(".")
        if "" in tokens:
            return EMPTY_RESULT
        named = self._named
        depth = len(named)
        tokens = [tok if i < depth and tok in named[i] else PWC for i, tok in enumerate(tokens)]
        key = ".".join(tokens)
        if key != subject:
            cached = self._cache.get(key)
            if cached is not None:
                self.cache_hits += 1
                if not acking:
                    self._remember(subject, cached, head, tokens, depth)
                elif ack_key is not None:
                    self._remember_ack(ack_key, cached)
                return cached
        result = MatchResult()
        _match_level(self._root, tokens, 0, result)
        if len(self._cache) >= self.CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = result
        if key != subject and not acking:
            self._remember(subject, result, head, tokens, depth)
        elif ack_key is not None:
            self._remember_ack(ack_key, result)
        return result

    def _remember_ack(self, key: tuple[str, str, int], result: MatchResult) -> None:
        acks = self._acks
        if len(acks) >= self.RECENT_LIMIT:
            acks.clear()
        acks[key] = result

    def _remember(self, subject: str, result: MatchResult, head: str, folded: list[str], depth: int) -> None:
        """``subject`` matched ``result`` through its ``folded`` key (``head``: all but its last token;
        ``depth``: how many positions subscriptions name tokens at)."""
        recent = self._recent
        if len(recent) >= self.RECENT_LIMIT:
            recent.clear()
            self._heads.clear()
        recent[subject] = result
        if head and folded[-1] == PWC:  # any last token no subscription names there: the same result
            last = len(folded) - 1
            self._heads[head] = (self._named[last] if last < depth else None, result)

    def has_interest(self, subject: str) -> bool:
        result = self.match(subject)
        return bool(result.psubs or result.qsubs)  # bool(result), without the call

    def exact(self, subject: str) -> MatchResult:
        """Subscriptions on exactly ``subject`` (no wildcard matching)."""
        path = self._path(subject)
        if path is None:
            return EMPTY_RESULT
        result = MatchResult()
        _add_node(path[-1][2], result)
        return result

    def cache_fanout(self) -> tuple[int, int, int]:
        """(cached subjects, largest fan-out, summed fan-out) over the match cache.

        Fan-out counts plain subscribers plus queue groups (one member of
        each gets a message), the way nats-server's sublist stats do.
        """
        largest = total = 0
        for result in self._cache.values():
            fanout = len(result.psubs) + len(result.qsubs)
            total += fanout
            largest = max(largest, fanout)
        return len(self._cache), largest, total

    def all(self) -> Iterable[Any]:
        """Every stored subscription (for monitoring and introspection)."""
        stack: list[_Level] = [self._root]
        while stack:
            level = stack.pop()
            nodes = list(level.nodes.values())
            if level.partial_wildcard is not None:
                nodes.append(level.partial_wildcard)
            if level.full_wildcard is not None:
                nodes.append(level.full_wildcard)
            for node in nodes:
                yield from node.psubs
                for group in node.qsubs.values():
                    yield from group
                if node.next is not None:
                    stack.append(node.next)


def _add_node(node: _Node, result: MatchResult) -> None:
    if node.psubs:
        result.psubs.extend(node.psubs)
    for queue, group in node.qsubs.items():
        existing = result.qsubs.get(queue)
        if existing is None:
            result.qsubs[queue] = list(group)
        else:
            existing.extend(group)


def _match_level(level: _Level | None, tokens: list[str], start: int, result: MatchResult) -> None:
    """Collect matches for ``toks[start:]`` below ``level`` (indices, not slices: no copies per wildcard)."""
    node: _Node | None = None
    partial_wildcard: _Node | None = None
    for i in range(start, len(tokens)):
        if level is None:
            return
        if level.full_wildcard is not None:
            _add_node(level.full_wildcard, result)
        partial_wildcard = level.partial_wildcard
        if partial_wildcard is not None:
            _match_level(partial_wildcard.next, tokens, i + 1, result)
        node = level.nodes.get(tokens[i])
        level = node.next if node is not None else None
    if node is not None:
        _add_node(node, result)
    if partial_wildcard is not None:
        _add_node(partial_wildcard, result)


# What every reserved reply starts with (a reply that does not is never reserved: a caller's test without a call).
RESERVED_REPLY_PREFIXES = ("_R_.", "$JS.ACK.", "_GR_.")
_RESERVED_REPLY_BARE = ("$JS.ACK.", "_GR_.")


def is_reserved_reply(reply: str) -> bool:
    """Reply subjects clients may not publish with (service imports, JetStream acks, gateways)."""
    # "$JS.ACK." and "_GR_." alone are not reserved: only what follows them is
    return reply.startswith(RESERVED_REPLY_PREFIXES) and reply not in _RESERVED_REPLY_BARE
