"""The marker for a reply subject that is present but empty, in a module of its own.

It subclasses ``str``: kept apart, the router's module holds no subclass of
a built-in type, which a compiled build of the message path (mypyc) cannot
compile.
"""


class _EmptyReply(str):
    """A reply subject that is present but empty.

    nats-server writes some internal messages (consumer reset replies, API
    audit advisories) with an empty reply-to field, so their ``MSG`` line
    has two spaces.  Being an empty ``str`` it means "no reply" everywhere;
    only the writer checks for it by identity.
    """


EMPTY_REPLY = _EmptyReply("")
