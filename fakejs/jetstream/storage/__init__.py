"""Where messages and consumer state live: the message store with its indexes, and file journals.

``store`` (the message store of one stream), ``message`` (one stored
message and its accounted size), ``subject_index`` (every stored subject
with its sequences), ``cursor`` (a walk in sequence order through what a
wildcard filter matches), ``files`` (the append-only msgpack log),
``journal`` (reading those logs back) and ``consumer_state`` (a consumer's
persisted state).  Knows nothing of streams' rules or consumers; imports
:mod:`fakejs.core.subjects` and :mod:`fakejs.gocompat` only.
"""
