"""``$SYS.DEBUG.SUBSCRIBERS``: how many clients of the system account listen on a subject.

nats-server's ``debugSubscribers`` on one server: the body is ``<subject>``
or ``<subject> <queue>``; the answer is the bare count (``3``).  A literal
subject counts the client subscriptions it would be delivered to (with a
queue: only that queue's members); a subject with wildcards counts the
client subscriptions whose subject it contains (with a queue: that queue's).
Subscriptions of the server itself are not counted.
"""

from __future__ import annotations

from fakejs.core.router import Router, Subscription
from fakejs.core.session import ClientSession
from fakejs.core.subjects import has_wildcard, is_subset, matches

SUBJECT = "$SYS.DEBUG.SUBSCRIBERS"


def count_subscribers(router: Router, body: bytes) -> int:
    """The answer to one request with ``body`` in the account of ``router``."""
    args = body.decode("utf-8", "replace").strip().split(" ")
    subject = args[0]
    queue = args[1] if len(args) > 1 else None
    clients = [sub for sub in router.local_subscriptions() if isinstance(sub.owner, ClientSession)]
    if has_wildcard(subject):
        return sum(1 for sub in clients if is_subset(sub.subject, subject) and _in_queue(sub, queue))
    chosen = [sub for sub in clients if matches(sub.subject, subject)]
    if queue is None:
        return len(chosen)
    return sum(1 for sub in chosen if sub.queue and sub.queue == queue)


def _in_queue(sub: Subscription, queue: str | None) -> bool:
    return queue is None or sub.queue == queue
