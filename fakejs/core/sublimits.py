"""Subscriptions refused: a subject the client may not subscribe to, and ``max_subscriptions`` of the server and
of the client's account.

As nats-server's ``applyAccountLimits`` (``client.go``): when a client
logs in to an account, its limit is its user JWT's ``subs`` lowered to the
account's ``limits { max_subscriptions }`` (or account JWT's ``subs``), lowered to the server's ``max_subscriptions`` when
that is lower (0 on the server means no limit; -1 means none anywhere).
A SUB with the client at its limit is answered ``-ERR 'maximum
subscriptions exceeded'`` and dropped; the client stays.  A client already
at its limit when it logs in (a limit of 0) is told so once the read that
logged it in is done, and closed 20 ms later.  The error line is logged at most once every 2 seconds per account.
"""

from __future__ import annotations

import logging
from typing import Protocol

from fakejs.core.accounts import Account
from fakejs.core.clientio import MAX_SUBSCRIPTIONS_EXCEEDED
from fakejs.core.clock import Clock
from fakejs.core.jetstream_limits import NO_LIMIT
from fakejs.core.options import ServerOptions
from fakejs.protocol.writer import go_quote

ERR_TOO_MANY_SUBS = "maximum subscriptions exceeded"  # nats-server's ErrTooManySubs
LOG_EVERY_NS = 2_000_000_000  # nats-server's defaultMaxSubLimitReportThreshold
CLOSE_AFTER = 0.020  # how long a client at its limit on login keeps its connection


class LimitedClient(Protocol):
    """What the limits need of a session."""

    account: Account
    max_subs: int
    closed: bool

    @property
    def subscription_count(self) -> int: ...

    def send_err(self, text: str) -> None: ...

    def close(self, reason: str = ..., abort: bool = False) -> None: ...


def tighter(current: int, limit: int) -> int:
    """nats-server's ``minLimit``: the lower of two limits, where ``NO_LIMIT`` loses to any other."""
    if current == NO_LIMIT:
        return limit
    if limit != NO_LIMIT and limit < current:
        return limit
    return current


def at_limit(client: LimitedClient) -> bool:
    """Whether one more subscription would go over the client's limit (nats-server's ``subsAtLimit``)."""
    return client.max_subs != NO_LIMIT and client.subscription_count >= client.max_subs


def apply_limits(
    client: LimitedClient, options: ServerOptions, clock: Clock, log: logging.Logger, user_limit: int = NO_LIMIT
) -> None:
    """Set the client's limit as it logs in to its account; a client already at it is told and closed.

    ``user_limit`` is the user's own (a user JWT's ``subs``), which the account's may lower.
    """
    limit = tighter(user_limit, client.account.max_subscriptions)
    server = _go_int32(options.max_subscriptions) or NO_LIMIT
    lowered = tighter(limit, server)
    if lowered != limit and limit != NO_LIMIT:
        log.debug(
            "%s - Max Subscriptions set to %d from server overrides account or user config",
            client,
            options.max_subscriptions,
        )
    client.max_subs = lowered
    if at_limit(client):
        clock.call_soon(_refuse_and_close, client, clock, log)


def _refuse_and_close(client: LimitedClient, clock: Clock, log: logging.Logger) -> None:
    """nats-server does it on its own goroutine: usually after the rest of the client's read."""
    if not client.closed:
        refuse_subscription(client, clock, log)
        clock.call_later(CLOSE_AFTER, client.close, MAX_SUBSCRIPTIONS_EXCEEDED)


def refuse_subscription(client: LimitedClient, clock: Clock, log: logging.Logger) -> None:
    """nats-server's ``maxSubsExceeded``: the error line (once in a while per account), then the -ERR."""
    account = client.account
    now = clock.time_ns()
    if account.limit_logged_ns is None or now - account.limit_logged_ns >= LOG_EVERY_NS:
        account.limit_logged_ns = now
        log.error("%s - %s", client, ERR_TOO_MANY_SUBS)
    client.send_err(ERR_TOO_MANY_SUBS)


def _go_int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def subscribe_violation(client: LimitedClient, subject: str, queue: str, sid: str, log: logging.Logger) -> None:
    """A SUB the client's permissions (or the system's queue group) refuse: ``-ERR`` and an error line."""
    quoted = go_quote(subject)
    if queue:
        queued = go_quote(queue)
        client.send_err(f"Permissions Violation for Subscription to {quoted} using queue {queued}")
        log.error("%s - Subscription Violation - Subject %s, Queue: %s, SID %s", client, quoted, queued, sid)
    else:
        client.send_err(f"Permissions Violation for Subscription to {quoted}")
        log.error("%s - Subscription Violation - Subject %s, SID %s", client, quoted, sid)
