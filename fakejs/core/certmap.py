"""``verify_and_map``: which configured user a verified client certificate logs in as.

nats-server tries, in this order: the certificate's SAN email addresses,
its DNS names and its URIs, each looked up as a user name; then the
subject as encoded, as a distinguished name equal to a user name read as
one (same RDNs in the same order, or the same RDNs reordered) -- only when
every attribute is one its DN reader names (C, ST, L, STREET, POSTALCODE,
O, OU, CN, SERIALNUMBER, DC); then the subject's RFC 2253 string as Go
prints it (named attributes only) followed by its domain components
(``CN=alice,DC=example,DC=com``); then that string alone.  Users not
allowed on plain client connections are skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from fakejs.core.clientio import PeerCertificate
from fakejs.core.users import User

Rdn = frozenset[tuple[str, str]]

DOMAIN_COMPONENT = "0.9.2342.19200300.100.1.25"
# The attribute types nats-server's DN reader knows (by OID); a subject with another is not read as a DN.
_DN_TYPES = {
    "2.5.4.3": "CN",
    "2.5.4.5": "SERIALNUMBER",
    "2.5.4.6": "C",
    "2.5.4.7": "L",
    "2.5.4.8": "ST",
    "2.5.4.9": "STREET",
    "2.5.4.10": "O",
    "2.5.4.11": "OU",
    "2.5.4.17": "POSTALCODE",
    DOMAIN_COMPONENT: "DC",
}


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


def certificate_dn(rdns: list[list[tuple[str, str]]]) -> list[Rdn] | None:
    """The encoded subject as a DN (last RDN first, as written), or ``None`` when an attribute has no name."""
    dn: list[Rdn] = []
    for rdn in reversed(rdns):
        pairs: set[tuple[str, str]] = set()
        for oid, value in rdn:
            kind = _DN_TYPES.get(oid)
            if kind is None:
                return None
            pairs.add((kind, value))
        if pairs:
            dn.append(frozenset(pairs))
    return dn


def domain_components(rdns: list[list[tuple[str, str]]]) -> str:
    """``DC=example,DC=com``: the subject's domain components in encoded order (empty when it has none)."""
    return ",".join(f"DC={value}" for rdn in rdns for oid, value in rdn if oid == DOMAIN_COMPONENT)


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
    cert_dn = certificate_dn(peer.rdns) if peer.rdns else parse_dn(peer.subject)
    if cert_dn is not None:
        candidates = [(user, parse_dn(name)) for name, user in users.items() if allowed(user)]
        for user, dn in candidates:
            if dn == cert_dn:
                return user
        wanted = Counter(cert_dn)
        for user, dn in candidates:
            if dn is not None and Counter(dn) == wanted:
                return user
    dcs = domain_components(peer.rdns)
    if dcs:
        found = lookup(f"{peer.subject},{dcs}")
        if found is not None:
            return found
    return lookup(peer.subject) if peer.subject else None
