"""Scoped signing keys: an account's ``user_scope`` signing keys and the permissions their template gives a user.

An account JWT's ``signing_keys`` holds plain keys (strings) and scoped
keys (nats-io/jwt's ``UserScope``: ``{"kind": "user_scope", "key", "role",
"template", "description"}``).  A user JWT issued by a scoped key must carry
no permissions or limits of its own (nats-io/jwt's ``ValidateScopedSigner``
and ``HasEmptyPermissions``); it gets the template's instead, whose
``pub`` and ``sub`` lists may hold ``{{name()}}``, ``{{subject()}}``,
``{{account-name()}}``, ``{{account-subject()}}``, ``{{tag(x)}}`` and
``{{account-tag(x)}}``, expanded as nats-server's
``processUserPermissionsTemplate`` does: a tag with several values makes
one subject per value (at most 4096 in all), an allow entry that expands
to an invalid subject is left out (a deny entry's is an error), and an
allow list emptied by its expansion adds ``>`` to the denied subjects.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakejs.core.jwt.claims import Claims
from fakejs.core.subjects import is_valid_subject
from fakejs.gocompat.goquote import quote_text

USER_SCOPE = "user_scope"
# nats-io/jwt's UserPermissionLimits, as JSON: what a scoped key's template holds and its users must not.
PERMISSION_FIELDS = ("pub", "sub", "resp")
LIMIT_FIELDS = ("src", "times", "times_location", "subs", "data", "payload")
CONNECTION_FIELDS = ("bearer_token", "proxy_required", "allowed_connection_types")
USER_PERMISSION_LIMIT_FIELDS = PERMISSION_FIELDS + LIMIT_FIELDS + CONNECTION_FIELDS
# nats-io/jwt's NewUserScope: a template's subs, data and payload are NoLimit unless given.
TEMPLATE_DEFAULTS = {"subs": -1, "data": -1, "payload": -1}
# nats-server's maxPermTemplateSubjectExpansions.
EXPANSION_LIMIT = 4096
# nats-server's mustacheRE: ``{{`` then anything but ``}`` then ``}}``.
MUSTACHE = re.compile(r"\{\{[^}]+\}\}")
# What a scoped key's template may hold that fakejs does not serve, with the name it refuses it by.
UNSERVED_TEMPLATE_FIELDS = {"proxy_required": "trusted proxies (proxy_required)"}

INVALID_SUBJECT = "generated invalid subject"


class ScopeError(Exception):
    """A scoped user refused: ``str()`` is the reason nats-server gives in its debug line."""


class TemplateError(ValueError):
    """A template that does not expand (nats-server's error text in ``str()``)."""


@dataclass(frozen=True)
class UserScope:
    """A scoped signing key (nats-io/jwt's ``UserScope``): its key, role and the template its users get."""

    key: str
    role: str = ""
    template: dict[str, Any] = field(default_factory=dict)

    def unserved(self) -> list[str]:
        """The names of what the template holds that fakejs does not serve (trusted proxies)."""
        return [name for key, name in UNSERVED_TEMPLATE_FIELDS.items() if self.template.get(key)]


def user_scopes(account: Mapping[str, Any]) -> dict[str, UserScope]:
    """The ``user_scope`` entries of an account claim's ``signing_keys`` (its ``nats`` part), by key."""
    entries = account.get("signing_keys")
    scopes: dict[str, UserScope] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("kind") == USER_SCOPE and isinstance(entry.get("key"), str):
            template = entry.get("template")
            template = {**TEMPLATE_DEFAULTS, **(template if isinstance(template, dict) else {})}
            scopes[entry["key"]] = UserScope(entry["key"], str(entry.get("role") or ""), template)
    return scopes


def _empty_permission(value: object) -> bool:
    if value is None:
        return True
    return isinstance(value, dict) and value.get("allow") is None and value.get("deny") is None


def has_empty_permissions(user: Mapping[str, Any]) -> bool:
    """nats-io/jwt's ``HasEmptyPermissions``: every permission and limit of the user claim at Go's zero value.

    An empty list is not Go's zero (a nil slice), nor is a limit of -1.
    """
    for key in USER_PERMISSION_LIMIT_FIELDS:
        value = user.get(key)
        if key in ("pub", "sub"):
            if not _empty_permission(value):
                return False
        elif key == "src":  # a CIDRList: even "" reads as an empty, non-nil list
            if value is not None:
                return False
        elif value not in (None, False, "", 0):
            return False
    return True


def scoped_user(scope: UserScope, user: Claims, account: Claims) -> dict[str, Any]:
    """The user claim's ``nats`` part with the scope's template in place of its permissions and limits.

    :class:`ScopeError` (with nats-server's debug text) when the user carries
    permissions of its own or the template does not expand.
    """
    if not has_empty_permissions(user.nats):
        raise ScopeError("User JWT is not valid: scoped users require no permissions or limits set")
    try:
        expanded = expand_template(scope.template, user, account)
    except TemplateError:
        raise ScopeError("User JWT generated invalid permissions") from None
    kept = {k: v for k, v in user.nats.items() if k not in USER_PERMISSION_LIMIT_FIELDS}
    return {**kept, **expanded}


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _permission(template: Mapping[str, Any], key: str) -> dict[str, list[str]]:
    value = template.get(key)
    value = value if isinstance(value, dict) else {}
    return {"allow": _strings(value.get("allow")), "deny": _strings(value.get("deny"))}


def expand_template(template: Mapping[str, Any], user: Claims, account: Claims) -> dict[str, Any]:
    """nats-server's ``processUserPermissionsTemplate``: the template with its ``pub`` and ``sub`` expanded."""
    expander = _Expander(user, account)
    publish, subscribe = _permission(template, "pub"), _permission(template, "sub")
    for permission in (subscribe, publish):
        allowed_before = bool(permission["allow"])
        permission["allow"] = expander.apply(permission["allow"], fail_on_bad_subject=False)
        permission["deny"] = expander.apply(permission["deny"], fail_on_bad_subject=True)
        if allowed_before and not permission["allow"] and ">" not in permission["deny"]:
            permission["deny"].append(">")
    return {**template, "pub": publish, "sub": subscribe}


def _tag_operation(operation: str) -> tuple[str, str] | None:
    """nats-server's ``isTag``: ``("tag", name)`` or ``("account-tag", name)`` (prefix case-blind, kept when trimmed)."""
    for kind in ("tag", "account-tag"):
        prefix = kind + "("
        if operation[: len(prefix)].lower() == prefix and operation.endswith(")"):
            return kind, operation.removeprefix(prefix).removesuffix(")")
    return None


class _Expander:
    """The values a template's operations take for one user of one account."""

    def __init__(self, user: Claims, account: Claims) -> None:
        self.user = user
        self.account = account

    def values(self, entry: str, operation: str, fail_on_bad_subject: bool) -> tuple[list[str], bool]:
        """The values of one ``{{operation}}`` and whether it was a tag."""
        simple = {
            "name()": self.user.name,
            "subject()": self.user.subject,
            "account-name()": self.account.name,
            "account-subject()": str(self.user.nats.get("issuer_account") or ""),
        }
        if operation.lower() in simple:
            return [simple[operation.lower()]], False
        tag = _tag_operation(operation)
        if tag is None:
            raise TemplateError(f"template operation in {quote_text(entry)}: {quote_text(operation)} is not defined")
        tags = _strings((self.account if tag[0] == "account-tag" else self.user).nats.get("tags"))
        prefix = tag[1].lower() + ":"
        found = [t.removeprefix(prefix) for t in tags if t.startswith(prefix)]
        if found:
            return found, True
        if fail_on_bad_subject:
            raise TemplateError(f"generated invalid subject {quote_text(entry)}: {quote_text(tag[1])} is not defined")
        return [" "], True

    def apply(self, entries: list[str], fail_on_bad_subject: bool) -> list[str]:
        """``applyTemplate``: a list unchanged when no entry has a template, else every entry expanded."""
        if not any(MUSTACHE.search(entry) for entry in entries):
            return entries
        emitted: list[str] = []
        for entry in entries:
            sources = MUSTACHE.findall(entry)
            values, has_tags = [], False
            for source in sources:
                found, is_tag = self.values(entry, source[2:-2].strip(), fail_on_bad_subject)
                values.append(found)
                has_tags = has_tags or is_tag
            if has_tags:
                _check_expansion(values, len(emitted))
            combinations = itertools.product(*values) if has_tags else [tuple(v[0] for v in values)]
            for combination in combinations:
                subject = entry
                for source, value in zip(sources, combination, strict=True):
                    subject = subject.replace(source, value)
                if is_valid_subject(subject):
                    emitted.append(subject)
                elif fail_on_bad_subject:
                    raise TemplateError(INVALID_SUBJECT)
        return emitted


def _check_expansion(values: list[list[str]], emitted: int) -> None:
    """The 4096 subjects a list may expand to, counted before any is made."""
    count = 1
    for found in values:
        if count > EXPANSION_LIMIT // len(found):
            raise TemplateError(f"template expansion exceeds limit: {EXPANSION_LIMIT}")
        count *= len(found)
    if emitted > EXPANSION_LIMIT - count:
        raise TemplateError(f"template expansion exceeds limit: {EXPANSION_LIMIT}")
