"""Where messages and consumer state live: the message store with its indexes, and file journals.

Knows nothing of streams' rules or consumers; imports :mod:`fakejs.core.subjects`
and :mod:`fakejs.gocompat` only.
"""
