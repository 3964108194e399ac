"""``verify_and_map``: which configured user a verified client certificate logs in as.

nats-server tries, in this order: the certificate's SAN email addresses,
its DNS names and its URIs, each looked up as a user name; then the
subject as a distinguished name, equal to a user name read as one (same
attributes in the same order, or the same attributes reordered); then the
subject's RFC 2253 string (as Go prints it) as a user name.  Users not
allowed on plain client connections are skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from fakejs.core.clientio import PeerCertificate
from fakejs.core.users import User

Rdn = frozenset[tuple[str, str]]


def _split(text: str, separator: str) -> list[str]:
    """``text`` split on unescaped ``separator`` characters (escapes kept)."""
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out: list[str] = []
    escaped = False
    for char in value:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def parse_dn(text: str) -> list[Rdn] | None:
    """A distinguished name as RDNs (attribute types upper case), or ``None`` when it is not one."""
    if not text.strip():
        return None
    rdns: list[Rdn] = []
    for part in _split(text, ","):
        pairs: set[tuple[str, str]] = set()
        for attribute in _split(part, "+"):
            kind, equals, value = attribute.partition("=")
            if not equals or not kind.strip():
                return None
            pairs.add((kind.strip().upper(), _unescape(value.strip())))
        rdns.append(frozenset(pairs))
    return rdns


def mapped_user(
    peer: PeerCertificate | None, users: Mapping[str, User], allowed: Callable[[User], bool]
) -> User | None:
    """The user ``peer`` maps to, or ``None`` (no certificate, or nobody it names)."""
    if peer is None:
        return None

    def lookup(name: str) -> User | None:
        user = users.get(name)
        return user if user is not None and allowed(user) else None

    for name in (*peer.emails, *peer.dns_names, *peer.uris):
        found = lookup(name)
        if found is not None:
            return found
    cert_dn = parse_dn(peer.subject)
    if cert_dn is not None:
        candidates = [(user, parse_dn(name)) for name, user in users.items() if allowed(user)]
        for user, dn in candidates:
            if dn == cert_dn:
                return user
        for user, dn in candidates:
            if dn is not None and len(dn) == len(cert_dn) and set(dn) == set(cert_dn):
                return user
    return lookup(peer.subject) if peer.subject else None
