"""``$SYS.DEBUG.SUBSCRIBERS`` and ``$SYS.REQ.ACCOUNT.NSUBS``: how many clients listen on a subject.

nats-server's ``debugSubscribers`` and ``nsubsRequest`` on one server.
``DEBUG.SUBSCRIBERS`` counts in the system account; its body is
``<subject>`` or ``<subject> <queue>``.  ``NSUBS`` counts in the account its
JSON body names (``{"acc", "subject", "queue"}``, the queue base64 as Go
writes bytes) and stays silent for an account without clients, or a body
that is no such document.  The answer is the bare count (``3``).  A
literal subject counts the client subscriptions it would be delivered to
(with a queue: only that queue's members); a subject with wildcards
counts the client subscriptions whose subject it contains (with a queue:
that queue's).  Subscriptions of the server itself are not counted.
"""

from __future__ import annotations

import base64
import binascii
import json

from fakejs.core.accounts import Accounts
from fakejs.core.router import Router, Subscription
from fakejs.core.session import ClientSession
from fakejs.core.subjects import has_wildcard, is_subset, matches

SUBJECT = "$SYS.DEBUG.SUBSCRIBERS"
NSUBS_SUBJECT = "$SYS.REQ.ACCOUNT.NSUBS"


def count_subscribers(router: Router, body: bytes) -> int:
    """The answer to one ``DEBUG.SUBSCRIBERS`` request with ``body`` in the account of ``router``."""
    args = body.decode("utf-8", "replace").strip().split(" ")
    return count_matching(router, args[0], args[1] if len(args) > 1 else None)


def nsubs_request(accounts: Accounts, clients: list[ClientSession], body: bytes) -> int | None:
    """The answer to one ``NSUBS`` request (None: nats-server stays silent)."""
    try:
        request = json.loads(body) if body else None
    except ValueError:
        return None
    if not isinstance(request, dict):
        return None
    name, subject, queue = request.get("acc") or "", request.get("subject") or "", request.get("queue")
    account = accounts.get(name) if isinstance(name, str) else None
    if (
        account is None
        or not isinstance(subject, str)
        or not any(c.account is account and not c.closed for c in clients)
    ):
        return None
    if queue is not None:
        try:
            queue = base64.b64decode(queue, validate=True).decode("utf-8", "replace")
        except (binascii.Error, TypeError, ValueError):
            return None
    return count_matching(account.router, subject, queue)


def count_matching(router: Router, subject: str, queue: str | None) -> int:
    """Client subscriptions of ``router`` on ``subject`` (and ``queue``), counted as nats-server counts them."""
    chosen = [sub for sub in router.local_subscriptions() if isinstance(sub.owner, ClientSession)]
    if has_wildcard(subject):
        return sum(1 for sub in chosen if is_subset(sub.subject, subject) and _in_queue(sub, queue))
    chosen = [sub for sub in chosen if matches(sub.subject, subject)]
    if queue is None:
        return len(chosen)
    return sum(1 for sub in chosen if sub.queue and sub.queue == queue)


def _in_queue(sub: Subscription, queue: str | None) -> bool:
    return queue is None or sub.queue == queue
