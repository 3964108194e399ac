"""What one leaf connection may carry each way: a remote's ``deny_imports``/``deny_exports``, a hub user's permissions.

nats-server gives a leaf connection two lists, seen from the server that
holds it: what it may *send* to the remote (messages delivered to it; the
remote's interest in a literal subject is accepted only where a message
could follow) and what it may *receive* (interest told to the remote,
messages taken from it).

* The leaf (the server that dialled): ``deny_exports`` is never sent,
  ``deny_imports`` never received, and its ``CONNECT`` names
  ``deny_imports`` (``deny_pub``) so the hub sends none of them.  The hub's
  second ``INFO`` may add its user's lists (``import``: what the leaf may
  receive, ``export``: what it may send), the local denies added to them.
* The hub: the user the leaf logged in as, the other way round -- what
  the user may subscribe to is sent, what it may publish is received --
  with the leaf's ``deny_pub`` added to what is sent.  Its lists go to the
  leaf in the second ``INFO``.

As for a client, the leaf's receive deny list also cuts into what it sends
once the hub told it of interest (a wildcard or a queue) overlapping it:
from then on a message on a denied subject is not sent either.
"""

from __future__ import annotations

from typing import Any

from fakejs.core.permissions import PermissionChecker
from fakejs.core.subjects import has_wildcard
from fakejs.core.users import Permissions, SubjectPermission

__all__ = ["LeafPermissions", "hub_permissions", "leaf_permissions"]


def _with_denies(permission: SubjectPermission | None, denies: list[str]) -> SubjectPermission | None:
    if not denies:
        return permission
    if permission is None:
        return SubjectPermission(deny=tuple(denies))
    return SubjectPermission(permission.allow, permission.deny + tuple(denies))


def _info_lists(permission: SubjectPermission) -> dict[str, list[str]]:
    lists: dict[str, list[str]] = {}
    if permission.allow:
        lists["allow"] = list(permission.allow)
    if permission.deny:
        lists["deny"] = list(permission.deny)
    return lists


def _from_info(value: Any) -> SubjectPermission | None:
    if not isinstance(value, dict):
        return None
    allow, deny = value.get("allow") or [], value.get("deny") or []
    return SubjectPermission(tuple(str(s) for s in allow), tuple(str(s) for s in deny))


class LeafPermissions:
    """One leaf connection's lists (see the module docstring); ``info`` is what the hub's second INFO says of them."""

    def __init__(
        self,
        send: SubjectPermission | None,
        receive: SubjectPermission | None,
        info: dict[str, Any] | None = None,
        local_denies: tuple[list[str], list[str]] | None = None,
    ) -> None:
        self._send = PermissionChecker(Permissions(publish=send)) if send is not None else None
        self._receive = PermissionChecker(Permissions(subscribe=receive)) if receive is not None else None
        self.info: dict[str, Any] = info or {}
        # The leaf's own lists (None on the hub, whose deliveries the receive list does not filter).
        self._local_denies = local_denies
        self._delivery_filter = self._receive if local_denies is not None else None

    def may_send(self, subject: str) -> bool:
        """A message on ``subject`` may go to the remote (and its interest in that literal subject is accepted)."""
        return self._send is None or self._send.can_publish(subject)

    def may_deliver(self, subject: str) -> bool:
        """A message on ``subject`` goes to the remote: :meth:`may_send`, and not cut by the deny filter."""
        if not self.may_send(subject):
            return False
        return self._delivery_filter is None or not self._delivery_filter.delivery_denied(subject, "")

    def remote_interest(self, subject: str, queue: str) -> None:
        """The remote's interest was accepted: a wildcard or queue overlapping a receive deny starts the deny filter."""
        if self._delivery_filter is not None and (queue or has_wildcard(subject)):
            self._delivery_filter.can_subscribe(subject, queue)

    def may_receive(self, subject: str) -> bool:
        """Interest in ``subject`` may be told to the remote, and its messages on it taken."""
        return self._receive is None or self._receive.can_subscribe(subject)

    def with_hub_lists(self, info: dict[str, Any]) -> LeafPermissions:
        """The leaf's lists once the hub's INFO names its own (``import``/``export``), the local denies kept."""
        imports, exports = _from_info(info.get("import")), _from_info(info.get("export"))
        if imports is None and exports is None:
            return self
        deny_imports, deny_exports = self._local_denies or ([], [])
        return LeafPermissions(
            _with_denies(exports, deny_exports), _with_denies(imports, deny_imports), local_denies=self._local_denies
        )


def leaf_permissions(deny_imports: list[str], deny_exports: list[str]) -> LeafPermissions | None:
    """A remote's lists (None: it has none)."""
    if not deny_imports and not deny_exports:
        return None
    return LeafPermissions(
        _with_denies(None, deny_exports), _with_denies(None, deny_imports), local_denies=(deny_imports, deny_exports)
    )


def hub_permissions(user: Permissions | None, deny_pub: Any) -> LeafPermissions | None:
    """The hub's lists for a leaf logged in as a user with ``user`` permissions, whose CONNECT has ``deny_pub``."""
    denies = [str(s) for s in deny_pub] if isinstance(deny_pub, list) else []
    publish = user.publish if user is not None else None
    subscribe = user.subscribe if user is not None else None
    if publish is None and subscribe is None and not denies:
        return None
    info: dict[str, Any] = {}
    if subscribe is not None:
        info["import"] = _info_lists(subscribe)
    if publish is not None:
        info["export"] = _info_lists(publish)
    return LeafPermissions(_with_denies(subscribe, denies), publish, info)
