"""The ``authorization { ... }`` block (and ``no_auth_user``), onto :class:`ServerOptions`.

Follows nats-server's ``parseAuthorization``, ``parseUsers``,
``parseUserPermissions`` and friends in ``opts.go``: the single ``user`` /
``password`` or ``token``, ``timeout``, a ``users`` array of
``{user, password, permissions}`` and ``{nkey, permissions}`` entries, and
block-level ``permissions`` (``default_permissions``) given to every user
without its own.  Bad values are reported with nats-server's texts against
the value's position; a value of the wrong type is reported the way
nats-server's recovered panic reports it, and, as there, ends the block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fakejs.conf import Token
from fakejs.core.auth import is_valid_public_user_key
from fakejs.core.configfile.callout import parse_auth_callout
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import Mismatch, go_type, go_value
from fakejs.core.options import ServerOptions
from fakejs.core.subjects import is_valid_subject
from fakejs.core.users import AuthCallout, Permissions, ResponsePermission, SubjectPermission, User
from fakejs.gocompat.goflag import go_quote
from fakejs.gocompat.gotime import NS, parse_duration

DEFAULT_RESPONSE_EXPIRES_NS = 2 * 60 * NS
# What ``allowed_connection_types`` may name (nats-server's jwt connection types).
CONNECTION_TYPES = frozenset({"STANDARD", "WEBSOCKET", "LEAFNODE", "LEAFNODE_WS", "MQTT", "MQTT_WS", "IN_PROCESS"})
R = TypeVar("R")
NIL_POINTER = "runtime error: invalid memory address or nil pointer dereference"


class _Abort(Exception):
    """A value of the wrong type: nats-server panics, recovers, and gives up on the block."""

    def __init__(self, token: Token, reason: str) -> None:
        super().__init__(reason)
        self.token = token
        self.reason = reason


def _expect(token: Token, kind: type, name: str) -> Any:
    value = token.value
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    raise _Abort(token, f"interface conversion: interface {{}} is {go_type(value)}, not {name}")


def _string(token: Token) -> str:
    return str(_expect(token, str, "string"))


def _bool(token: Token) -> bool:
    return bool(_expect(token, bool, "bool"))


def apply(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """Map the value of the top-level ``authorization`` key onto ``options``."""
    try:
        block = _parse_block(token, context)
    except _Abort as abort:
        context.error(abort.token, abort.reason)
        # nats-server goes on with no parsed block and dereferences it.
        context.error(token, NIL_POINTER)
        return
    if block is None:
        return
    options.user = block.user
    options.password = block.password
    options.token = block.token
    options.auth_callout = block.callout
    if block.timeout:
        options.auth_timeout = block.timeout
    if (block.user or block.password) and block.token:
        context.error(token, "Cannot have a user/pass and token")
        return
    known = options.all_users()  # accounts { } read before this block have their users in it
    names = {u.name for u in known if not u.nkey} | {u.nkey for u in known if u.nkey}
    if block.users is not None or names:
        if block.user:
            context.error(token, "Can not have a single user/pass and a users array")
            return
        if block.token:
            context.error(token, "Can not have a token and a users array")
            return
        users = [u for u in block.users or () if not u.nkey]
        for user in users:
            if user.name in names:
                context.error(token, f'Duplicate user "{user.name}" detected')
                return
            names.add(user.name)
        options.users.extend(users)
    for user in [u for u in block.users or () if u.nkey]:
        if user.nkey in names:
            context.error(token, f'Duplicate nkey "{user.nkey}" detected')
            return
        names.add(user.nkey)
        options.users.append(user)


def apply_no_auth_user(token: Token, options: ServerOptions, context: ConfigContext) -> None:
    """The top-level ``no_auth_user`` (checked against the users when the server starts)."""
    try:
        options.no_auth_user = _string(token)
    except _Abort as abort:
        context.error(abort.token, abort.reason)


def parse_nested(token: Token, context: ConfigContext) -> AuthBlock | None:
    """An ``authorization {}`` inside another block (a cluster's): None when it had errors.

    A value of the wrong type makes nats-server give up on the block and then
    dereference the missing result: both errors are reported, and
    :class:`Mismatch` (at ``token``) ends the enclosing block as its panic does.
    """
    try:
        return _parse_block(token, context)
    except _Abort as abort:
        context.error(abort.token, abort.reason)
        raise Mismatch(token, NIL_POINTER) from None


class AuthBlock:
    """One ``authorization {}`` block as read: a single login, a token, users, a login time."""

    def __init__(self) -> None:
        self.user = ""
        self.password = ""
        self.token = ""
        self.timeout = 0.0
        self.users: list[User] | None = None
        self.defaults: Permissions | None = None
        self.callout: AuthCallout | None = None


def _parse_block(token: Token, context: ConfigContext) -> AuthBlock | None:
    members = _expect(token, dict, "map[string]interface {}")
    block = AuthBlock()
    for key, value in members.items():
        name = key.lower()
        if name in ("user", "username"):
            block.user = _string(value)
        elif name in ("pass", "password"):
            block.password = _string(value)
        elif name == "token":
            block.token = _string(value)
        elif name == "timeout":
            timeout = _timeout(value, context)
            if timeout is None:
                return None
            block.timeout = timeout
        elif name == "users":
            users = parse_users(value, context)
            if users is not None:
                block.users = users
        elif name in ("default_permission", "default_permissions", "permissions"):
            block.defaults = parse_permissions(value, context)
        elif name in ("auth_callout", "auth_hook"):
            block.callout = parse_auth_callout(value, context)
        elif name == "proxy_required":
            if _bool(value):
                context.refuse(value, "trusted proxies (proxy_required)")
        elif not value.used_variable:
            context.error(value, f'unknown field "{key}"')
    if block.defaults is not None and block.users:
        block.users = [u if u.permissions is not None else with_permissions(u, block.defaults) for u in block.users]
    return block


def with_permissions(user: User, permissions: Permissions) -> User:
    return User(user.name, user.password, user.nkey, permissions, user.account, user.connection_types)


def _timeout(token: Token, context: ConfigContext) -> float | None:
    value = token.value
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        context.error(token, "error parsing authorization config, 'timeout' wrong type")
        return None
    if isinstance(value, str):
        try:
            seconds = parse_duration(value) / NS
        except ValueError as exc:
            context.error(token, f"error parsing authorization config, 'timeout' {exc}")
            return None
        shown = value
    else:
        seconds = float(value)
        shown = go_value(value)
    if seconds > 60:
        context.warning(
            token,
            f'invalid use of field "timeout": timeout of {shown} ({seconds:f} seconds) is high, consider keeping '
            "it under 60 seconds. possibly caused by unquoted duration; use '1m' instead of 1m, for example",
        )
    return seconds


def _recovered(function: Callable[..., R]) -> Callable[..., R | None]:
    """nats-server's nested parsers recover their own panics: the error is kept, the result is nil."""

    def guarded(token: Token, context: ConfigContext, *args: Any, **kwargs: Any) -> R | None:
        try:
            return function(token, context, *args, **kwargs)
        except _Abort as abort:
            context.error(abort.token, abort.reason)
            return None

    return guarded


@_recovered
def parse_users(token: Token, context: ConfigContext) -> list[User] | None:
    entries = token.value
    if not isinstance(entries, list):
        context.error(token, f"Expected users field to be an array, got {go_value(entries)}")
        return None
    users: list[User] = []
    for entry in entries:
        members = entry.value
        if not isinstance(members, dict):
            context.error(entry, f"Expected user entry to be a map/struct, got {go_value(members)}")
            continue
        name = password = nkey = ""
        permissions: Permissions | None = None
        connection_types: tuple[str, ...] = ()
        last = entry
        for key, value in members.items():
            last = value
            field = key.lower()
            if field == "nkey":
                nkey = _string(value)
            elif field in ("user", "username"):
                name = _string(value)
            elif field in ("pass", "password"):
                password = _string(value)
            elif field in ("permission", "permissions", "authorization"):
                permissions = parse_permissions(value, context)
            elif field in ("allowed_connection_types", "connection_types", "clients"):
                connection_types = _connection_types(value, context) or ()
            elif field == "proxy_required":
                if _bool(value):
                    context.refuse(value, "trusted proxies (proxy_required)")
            elif not value.used_variable:
                context.error(value, f'unknown field "{key}"')
        if not nkey and not name:
            context.error(last, "User entry requires a user")
            return None
        if nkey:
            if not is_valid_public_user_key(nkey):
                context.error(last, "Not a valid public nkey for a user")
                return None
            if name or password:
                context.error(last, "Nkey users do not take usernames or passwords")
                return None
            users.append(User(nkey=nkey, permissions=permissions, connection_types=connection_types))
        else:
            users.append(User(name, password, permissions=permissions, connection_types=connection_types))
    return users


@_recovered
def _connection_types(token: Token, context: ConfigContext) -> tuple[str, ...]:
    value = token.value
    items = value if isinstance(value, list) else [token]
    names = tuple(_string(item).upper() for item in items)
    unknown = [name for name in names if name not in CONNECTION_TYPES]
    if unknown:
        context.error(token, "invalid connection types [" + " ".join(_quote(name) for name in unknown) + "]")
        return ()
    return names


@_recovered
def parse_permissions(token: Token, context: ConfigContext) -> Permissions | None:
    members = token.value
    if not isinstance(members, dict):
        context.error(token, f"Expected permissions to be a map/struct, got {go_value(members)}")
        return None
    publish: SubjectPermission | None = None
    subscribe: SubjectPermission | None = None
    response: ResponsePermission | None = None
    for key, value in members.items():
        field = key.lower()
        if field in ("pub", "publish", "import"):
            publish = _subject_permission(value, context, allow_queue=False) or publish
        elif field in ("sub", "subscribe", "export"):
            subscribe = _subject_permission(value, context, allow_queue=True) or subscribe
        elif field in ("publish_allow_responses", "allow_responses"):
            if isinstance(value.value, bool):
                response = ResponsePermission() if value.value else None
            else:
                response = _allow_responses(value, context)
        elif not value.used_variable:
            context.error(value, f'Unknown field "{key}" parsing permissions')
    return Permissions(publish, subscribe, response)


@_recovered
def _subject_permission(token: Token, context: ConfigContext, allow_queue: bool) -> SubjectPermission | None:
    members = token.value
    if not isinstance(members, dict):
        # The old style: a subject or a list of them, all allowed.  nats-server has lost the
        # value's position by then, so its errors come without one (but an element's).
        subjects = _subjects(token, context, allow_queue, positioned=False)
        return SubjectPermission(allow=tuple(subjects)) if subjects is not None else None
    if not members:
        return None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    for key, value in members.items():
        field = key.lower()
        if field == "allow":
            subjects = _subjects(value, context, allow_queue)
            if subjects is not None:
                allow = tuple(subjects)
        elif field == "deny":
            subjects = _subjects(value, context, allow_queue)
            if subjects is not None:
                deny = tuple(subjects)
        elif not value.used_variable:
            context.error(
                value,
                f"Unknown field name \"{key}\" parsing subject permissions, only 'allow' or 'deny' are permitted",
            )
    return SubjectPermission(allow, deny)


def _subjects(token: Token, context: ConfigContext, allow_queue: bool, positioned: bool = True) -> list[str] | None:
    def report(reason: str) -> None:
        if positioned:
            context.error(token, reason)
        else:
            context.errors.append(reason)

    value = token.value
    if isinstance(value, str):
        subjects = [value]
    elif isinstance(value, list):
        subjects = []
        for item in value:
            if not isinstance(item.value, str):
                context.error(item, "Subject in permissions array cannot be cast to string")
                return None
            subjects.append(item.value)
    else:
        report(f"Expected subject permissions to be a subject, or array of subjects, got {go_type(value)}")
        return None
    problem = check_subjects(subjects, allow_queue)
    if problem:
        report(problem)
        return None
    return subjects


def check_subjects(subjects: list[str], allow_queue: bool) -> str:
    """nats-server's ``checkPermSubjectArray``: the first problem, or ``""``."""
    for subject in subjects:
        if is_valid_subject(subject):
            continue
        if not allow_queue:
            return f"subject {_quote(subject)} is not a valid subject"
        fields = subject.split()
        if len(fields) != 2:
            return f"subject {_quote(subject)} is not a valid subject"
        if not is_valid_subject(fields[0]):
            return f"subject {_quote(fields[0])} is not a valid subject"
        if not is_valid_subject(fields[1]):
            return f"queue {_quote(fields[1])} is not a valid queue"
    return ""


def _quote(text: str) -> str:
    return go_quote(text)


@_recovered
def _allow_responses(token: Token, context: ConfigContext) -> ResponsePermission | None:
    members = token.value
    if not isinstance(members, dict):
        context.error(token, "error parsing response permissions, expected a boolean or a map")
        return None
    max_msgs = 1
    expires_ns = DEFAULT_RESPONSE_EXPIRES_NS
    for key, value in members.items():
        field = key.lower()
        if field in ("max", "max_msgs", "max_messages", "max_responses"):
            number = int(_expect(value, int, "int64"))
            if number != 0:
                max_msgs = number
        elif field in ("expires", "expiration", "ttl"):
            if not isinstance(value.value, str):
                context.error(value, "error parsing expires, not a duration string")
                return None
            try:
                ttl = parse_duration(value.value)
            except ValueError as exc:
                context.error(value, f"error parsing expires: {exc}")
                return None
            if ttl != 0:
                expires_ns = ttl
        elif not value.used_variable:
            context.error(value, f'Unknown field "{key}" parsing permissions')
    return ResponsePermission(max_msgs, expires_ns / NS)
