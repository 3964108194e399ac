"""The subject index of a message store: every stored subject with its sequences.

nats-server keeps a subject tree (``stree``) with per-subject state so that
questions about a filter never look at subjects the filter cannot match.
This is the same idea:

* a dict from literal subject to the ``SortedList`` of its sequences
  answers everything about one literal subject: count O(1), first/last
  O(1), first at or after a sequence O(log m) (m: that subject's messages);
* a trie keyed by tokens, whose leaves hold the same lists, enumerates the
  subjects a wildcard filter matches while walking only branches that can
  match: O(t + visited), where t is the filter's token count and visited is
  the number of trie nodes below the matching prefixes (for ``a.*.x`` the
  children of ``a``; for ``a.>`` the subtree under ``a``) — never the whole
  stream's subjects unless the filter covers them.

Every trie node also counts the messages in its subtree, so "how many
messages match ``a.b.>``" (a consumer's pending count from the start of the
stream, a KV watch over a bucket) is O(t) whatever the number of subjects.
Adding or removing a sequence is O(log m + t) (the counts along the
subject's path), plus the path's creation or removal when a subject
appears or disappears.  Subjects are stored literally: a published token ``*`` is a
plain token, matched by a filter's ``*`` or ``>`` only, as
:func:`fakejs.core.subjects.matches` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from sortedcontainers import SortedList

PWC = "*"
FWC = ">"


class _Node:
    """One token position: children by token; ``subject``/``seqs`` when a subject ends here.

    ``total`` counts the messages at and below this node.
    """

    __slots__ = ("children", "seqs", "subject", "total")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.subject = ""
        self.seqs: SortedList | None = None
        self.total = 0


class SubjectIndex:
    """Literal subjects to their sequences, searchable by wildcard filter."""

    def __init__(self) -> None:
        self._lists: dict[str, SortedList] = {}
        self._root = _Node()
        self._paths: dict[str, tuple[_Node, ...]] = {}  # root to leaf, for the subtree counts

    # -- literal subjects: O(1) lookups ------------------------------------------------------

    def __len__(self) -> int:
        return len(self._lists)

    def __iter__(self) -> Iterator[str]:
        return iter(self._lists)

    def get(self, subject: str) -> SortedList | None:
        """The sequences of one literal subject (None: no message): O(1)."""
        return self._lists.get(subject)

    def count(self, subject: str) -> int:
        seqs = self._lists.get(subject)
        return len(seqs) if seqs is not None else 0

    def oldest(self, subject: str, keep: int) -> list[int]:
        """The subject's sequences beyond its newest ``keep``, oldest first (a copy): O(excess)."""
        seqs = self._lists.get(subject)
        if seqs is None or (excess := seqs._len - keep) <= 0:
            return []
        first = seqs._lists[0]
        return first[:excess] if excess <= len(first) else list(seqs.islice(0, excess))

    # -- changes --------------------------------------------------------------------------

    def add(self, subject: str, seq: int) -> str:
        """Record ``seq`` under ``subject``: O(log m + t).  Returns the index's string for the subject (the one
        it was first added with), which a store keeps rather than one string per message."""
        seqs = self._lists.get(subject)
        if seqs is None:
            seqs = self._lists[subject] = SortedList()
            node = self._root
            path = [node]
            for token in subject.split("."):
                child = node.children.get(token)
                if child is None:
                    child = node.children[token] = _Node()
                node = child
                path.append(node)
            node.subject = subject
            node.seqs = seqs
            self._paths[subject] = tuple(path)
        # ``seqs.add(seq)``; a store appends in sequence order, so ``seq`` is nearly always above every other.
        # That append goes straight to the last sublist of the ``SortedList`` (what ``SortedList.add`` does
        # for it, less the search and the split check), while the sublist has room (no more than twice the
        # load after it: no split) and no positional index was built (``_index``, which an append would have
        # to update); anything else is ``add``'s.
        maxes = seqs._maxes
        if maxes and seq > maxes[-1] and not seqs._index and len(last := seqs._lists[-1]) < seqs._load << 1:
            last.append(seq)
            maxes[-1] = seq
            seqs._len += 1
        else:
            seqs.add(seq)
        nodes = self._paths[subject]
        for node in nodes:
            node.total += 1
        return nodes[-1].subject

    def discard(self, subject: str, seq: int) -> None:
        """Forget ``seq``: O(log m + t)."""
        seqs = self._lists[subject]
        # ``seqs.remove(seq)``; limits remove a subject's oldest sequence, the first of its first sublist.  While
        # that sublist keeps more than one and ``SortedList`` would neither merge it (it is the only one, or keeps
        # more than half the load) nor keep a positional index, removal is that deletion (its maximum stays).
        lists = seqs._lists
        if (
            lists
            and (first := lists[0])[0] == seq
            and len(first) > 1
            and (len(lists) == 1 or len(first) > seqs._load >> 1)
            and not seqs._index
        ):
            del first[0]
            seqs._len -= 1
        else:
            seqs.remove(seq)
        for node in self._paths[subject]:
            node.total -= 1
        if not seqs._len:  # empty (without SortedList.__len__)
            del self._lists[subject]
            del self._paths[subject]
            self._unlink(subject)

    def _unlink(self, subject: str) -> None:
        """Drop the subject's leaf and every node left without children or subject."""
        path = [self._root]
        tokens = subject.split(".")
        for token in tokens:
            path.append(path[-1].children[token])
        leaf = path[-1]
        leaf.seqs = None
        leaf.subject = ""
        for depth in range(len(tokens), 0, -1):
            node = path[depth]
            if node.children or node.seqs is not None:
                break
            del path[depth - 1].children[tokens[depth - 1]]

    # -- wildcard matching: only the branches that can match -----------------------------------

    def match(self, filter_subject: str) -> Iterator[tuple[str, SortedList]]:
        """Every subject matching the filter with its sequences: O(t + visited)."""
        if not filter_subject or filter_subject == FWC:
            yield from self._lists.items()
            return
        if PWC not in filter_subject and FWC not in filter_subject:
            seqs = self._lists.get(filter_subject)
            if seqs is not None:
                yield filter_subject, seqs
            return
        yield from _walk(self._root, filter_subject.split("."))

    def match_any(self, filters: Iterable[str]) -> dict[str, SortedList]:
        """Subjects matching any of the filters (each once): O(sum over filters of t + visited)."""
        filters = list(filters)
        if not filters or FWC in filters:
            return dict(self._lists)
        if len(filters) == 1:
            return dict(self.match(filters[0]))
        found: dict[str, SortedList] = {}
        for f in filters:
            found.update(self.match(f))
        return found

    # -- questions about a filter ---------------------------------------------------------------
    # Each costs the walk (O(t + visited)) plus the stated work per matching subject (s of them).

    def total(self, filter_subject: str) -> int:
        """Messages on subjects matching the filter: O(t) for literal tokens and a trailing ``>``;
        each ``*`` adds the children at its level (never the subtrees under a ``>``)."""
        if not filter_subject or filter_subject == FWC:
            return self._root.total
        found = 0
        for node, below in _ends(self._root, filter_subject.split(".")):
            own = len(node.seqs) if node.seqs is not None else 0
            found += node.total - own if below else own
        return found

    def counts(self, filter_subject: str) -> dict[str, int]:
        """Messages per matching subject: O(walk + s)."""
        return {subject: len(seqs) for subject, seqs in self.match(filter_subject)}

    def first_from(self, filters: Iterable[str], start: int) -> int | None:
        """The smallest sequence ``>= start`` on any matching subject: O(walk + s log m)."""
        best: int | None = None
        for seqs in self.match_any(filters).values():
            k = seqs.bisect_left(start)
            if k < len(seqs) and (best is None or seqs[k] < best):
                best = seqs[k]
        return best

    def last_of(self, filter_subject: str) -> int | None:
        """The largest sequence on any matching subject: O(walk + s); O(1) for a literal subject."""
        if filter_subject and PWC not in filter_subject and FWC not in filter_subject:
            seqs = self._lists.get(filter_subject)  # never empty: a subject goes with its last sequence
            return seqs._lists[-1][-1] if seqs is not None else None  # seqs[-1], without SortedList's call
        return max((seqs[-1] for _, seqs in self.match(filter_subject)), default=None)

    def last_per_subject(self, filters: Iterable[str], up_to: int | None = None) -> list[int]:
        """Each matching subject's last sequence (at or below ``up_to``), ascending: O(walk + s log m + s log s)."""
        out = []
        for seqs in self.match_any(filters).values():
            if up_to is None:
                out.append(seqs[-1])
                continue
            k = seqs.bisect_right(up_to)
            if k:
                out.append(seqs[k - 1])
        out.sort()
        return out

    def count_from(self, filters: Iterable[str], start: int) -> int:
        """Messages ``>= start`` on matching subjects: O(walk + s log m)."""
        total = 0
        for seqs in self.match_any(filters).values():
            total += len(seqs) - (seqs.bisect_left(start) if seqs[0] < start else 0)
        return total

    def seqs_matching(self, filter_subject: str) -> list[int]:
        """Every sequence on a matching subject, ascending: O(walk + k log k) for k sequences."""
        lists = [seqs for _, seqs in self.match(filter_subject)]
        if len(lists) == 1:
            return list(lists[0])
        out = [seq for seqs in lists for seq in seqs]
        out.sort()
        return out


def filter_matcher(filters: Iterable[str]) -> Callable[[str], re.Match[str] | None]:
    """A test of one literal subject against any of the filters (a match or None): one compiled regex, O(len(subject)).

    Same answers as :func:`fakejs.core.subjects.matches`: ``*`` is any one
    token (even an empty one), ``>`` one or more trailing tokens, anything
    else a token compared literally.
    """
    alternatives = []
    for f in filters:
        parts = []
        for token in f.split("."):
            parts.append("[^.]*" if token == PWC else ".*" if token == FWC else re.escape(token))
        alternatives.append(r"\.".join(parts))
    return re.compile("|".join(f"(?:{a})" for a in alternatives) or "(?!)", re.DOTALL).fullmatch


def _walk(root: _Node, tokens: list[str]) -> Iterator[tuple[str, SortedList]]:
    """Every subject a filter's tokens match, with its sequences (``>`` takes whole subtrees)."""
    for node, below in _ends(root, tokens):
        if below:
            for child in node.children.values():
                yield from _subtree(child)
        elif node.seqs is not None:
            yield node.subject, node.seqs


def _ends(root: _Node, tokens: list[str]) -> Iterator[tuple[_Node, bool]]:
    """Where a filter's walk ends, depth-first without recursion, visiting only the children its tokens allow.

    ``(node, False)``: the filter's last token reached ``node`` (its own
    subject matches, if one ends there); ``(node, True)``: a ``>`` at
    ``node`` (every subject strictly below it matches).
    """
    last = len(tokens)
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth == last:
            yield node, False
            continue
        token = tokens[depth]
        if token == FWC:
            yield node, True
        elif token == PWC:
            stack.extend((child, depth + 1) for child in node.children.values())
        else:
            found = node.children.get(token)
            if found is not None:
                stack.append((found, depth + 1))


def _subtree(node: _Node) -> Iterator[tuple[str, SortedList]]:
    """Every subject at or below ``node``, iteratively (deep subjects do not hit the recursion limit)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.seqs is not None:
            yield current.subject, current.seqs
        stack.extend(current.children.values())
