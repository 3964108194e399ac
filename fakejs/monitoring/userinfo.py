"""``$SYS.REQ.USER.INFO``: any client asks who it is logged in as, as on nats-server.

nats-server answers this subject in every account (a service import of the
system account's ``$SYS.REQ.USER.<account>.INFO``) whenever it has a
system account.  The request body is ignored; the answer is the
``ServerAPIResponse`` envelope, ``{"server": {...}, "data": {...}}``, with
nats-server's ``UserInfo`` as ``data``:

* ``user``: the name, nkey or ``[REDACTED]`` (a token) the client logged in
  with, ``""`` without authentication;
* ``account`` and ``account_name``: its account;
* ``permissions`` when its user has any: ``publish`` and ``subscribe``
  (each ``{}`` or with ``allow`` / ``deny``), and ``responses``
  (``max``, ``ttl`` in nanoseconds) with ``allow_responses``.

nats-server lists the subjects of a permission in an order of its own (its
subject index's); fakejs keeps their configuration order.  ``user_name`` is
an operator-mode user JWT's ``name``, and ``expires`` the time left (in
nanoseconds, whole seconds) of a login that ends: a user JWT's ``exp``, an
authorization callout's user's.  The subscription answers for this server alone (a cluster's other
servers are not told), as nats-server's does.

A client of the system account may also ask ``$SYS.REQ.USER.<account>.INFO``
(the subject the imports lead to) directly: as on nats-server, such a
request carries no client's details, so ``user`` and ``account`` are empty
and only the asker's own permissions are told.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.core.accounts import Account
from fakejs.core.permissions import split_subject_queue
from fakejs.core.router import InternalHandler, Subscription
from fakejs.core.session import ClientSession
from fakejs.core.subjects import is_valid_subject
from fakejs.gocompat import gojson
from fakejs.gocompat.gotime import NS
from fakejs.monitoring.records import auth_user

if TYPE_CHECKING:
    from fakejs.core.sysevents import SystemEvents
    from fakejs.core.users import Permissions, SubjectPermission

USER_INFO_SUBJECT = "$SYS.REQ.USER.INFO"
# What the accounts' imports of USER.INFO lead to in the system account (nats-server's userDirectReqSubj).
DIRECT_SUBJECT = "$SYS.REQ.USER.*.INFO"


class UserInfoResponder:
    """Answers ``$SYS.REQ.USER.INFO`` in every account of one server (nats-server's ``userInfoReq``)."""

    def __init__(self, accounts: list[Account], events: SystemEvents) -> None:
        self.events = events
        self._subs: list[tuple[Account, Subscription]] = []
        if events.account is None:
            return  # nats-server answers only while it has a system account
        for account in accounts:
            self._subscribe(account, USER_INFO_SUBJECT, user_info)
        self._subscribe(events.account, DIRECT_SUBJECT, direct_user_info)

    def _subscribe(self, account: Account, subject: str, document: Callable[[ClientSession], dict[str, Any]]) -> None:
        sub = account.router.subscribe_internal(subject, self._handler(account, document), local_only=True)
        self._subs.append((account, sub))

    def stop(self) -> None:
        for account, sub in self._subs:
            account.router.unsubscribe(sub)
        self._subs.clear()

    def _handler(self, account: Account, document: Callable[[ClientSession], dict[str, Any]]) -> InternalHandler:
        def on_request(subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
            if reply and isinstance(origin, ClientSession):
                response = {"server": self.events.server_info(), "data": document(origin)}
                account.router.publish(reply, "", None, gojson.dumps(response).encode())

        return on_request


def user_info(client: ClientSession) -> dict[str, Any]:
    """nats-server's ``UserInfo`` about one client (empty fields left out)."""
    account = client.account
    # account_name: an operator-mode account's JWT name (nats-server's getNameTag), else its name.
    doc: dict[str, Any] = {"user": auth_user(client.opts), "account": account.name}
    doc["account_name"] = account.name_tag or account.name
    login = client.login
    if login is not None and login.name_tag:
        doc["user_name"] = login.name_tag
    _with_permissions(doc, client)
    if login is not None and login.expires:
        left = login.expires * NS - client.broker.clock.time_ns()
        if left >= NS:  # Go's time.Until(expires).Truncate(time.Second), left out when 0
            doc["expires"] = left // NS * NS
    return doc


def direct_user_info(client: ClientSession) -> dict[str, Any]:
    """The answer to a system client asking the import's subject itself: no user, no account."""
    return _with_permissions({"user": "", "account": ""}, client)


def _with_permissions(doc: dict[str, Any], client: ClientSession) -> dict[str, Any]:
    user = client.login.user if client.login is not None else None
    if user is not None and user.permissions is not None:
        doc["permissions"] = permissions_document(user.permissions)
    return doc


def permissions_document(permissions: Permissions) -> dict[str, Any]:
    """nats-server's ``Permissions`` as a client sees its own: the rules it enforces, invalid entries left out."""
    publish, subscribe = permissions.publish, permissions.subscribe
    doc: dict[str, Any] = {
        "publish": _listed(
            [entry for entry in publish.allow if is_valid_subject(entry)] if publish else [],
            [parsed[0] for entry in publish.deny if (parsed := split_subject_queue(entry))] if publish else [],
        ),
        "subscribe": _listed(_entries(subscribe, allow=True), _entries(subscribe, allow=False)),
    }
    response = permissions.response
    if response is not None:
        doc["responses"] = {"max": response.max_msgs, "ttl": round(response.expires * NS)}
    return doc


def _entries(rules: SubjectPermission | None, allow: bool) -> list[str]:
    """A subscribe list as nats-server writes it back: ``subject`` or ``subject queue``."""
    if rules is None:
        return []
    parsed = [split_subject_queue(entry) for entry in (rules.allow if allow else rules.deny)]
    return [f"{subject} {queue}".rstrip() for subject, queue in filter(None, parsed)]


def _listed(allow: list[str], deny: list[str]) -> dict[str, list[str]]:
    """``SubjectPermission``: ``allow`` and ``deny``, each left out when empty."""
    doc: dict[str, list[str]] = {}
    if allow:
        doc["allow"] = allow
    if deny:
        doc["deny"] = deny
    return doc
