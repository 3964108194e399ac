"""``verify_and_map``: which user a client certificate maps to, in nats-server's order."""

from __future__ import annotations

from fakejs.core.certmap import certificate_dn, domain_components, mapped_user, parse_dn
from fakejs.core.clientio import PeerCertificate
from fakejs.core.users import User

ORG, OU, CN = "2.5.4.10", "2.5.4.11", "2.5.4.3"
DC, UID = "0.9.2342.19200300.100.1.25", "0.9.2342.19200300.100.1.1"


def users(*names: str, **types: tuple[str, ...]) -> dict[str, User]:
    return {name: User(name=name, connection_types=types.get(name, ())) for name in names}


def allowed(user: User) -> bool:
    return not user.connection_types or "STANDARD" in user.connection_types


def peer(rdns: list[list[tuple[str, str]]], subject: str = "", **sans: list[str]) -> PeerCertificate:
    return PeerCertificate(subject=subject, rdns=rdns, **sans)  # type: ignore[arg-type]


def name_of(found: User | None) -> str | None:
    return None if found is None else found.name


def test_email_then_dns_then_uri_then_subject() -> None:
    cert = peer([[(CN, "c")]], "CN=c", emails=["e@x"], dns_names=["d.x"], uris=["spiffe://u"])
    everyone = users("CN=c", "spiffe://u", "d.x", "e@x")
    assert name_of(mapped_user(cert, everyone, allowed)) == "e@x"
    del everyone["e@x"]
    assert name_of(mapped_user(cert, everyone, allowed)) == "d.x"
    del everyone["d.x"]
    assert name_of(mapped_user(cert, everyone, allowed)) == "spiffe://u"
    del everyone["spiffe://u"]
    assert name_of(mapped_user(cert, everyone, allowed)) == "CN=c"


def test_users_not_allowed_on_client_connections_are_skipped() -> None:
    cert = peer([[(CN, "c")]], "CN=c", emails=["e@x"])
    assert name_of(mapped_user(cert, users("e@x", "CN=c", **{"e@x": ("WEBSOCKET",)}), allowed)) == "CN=c"


def test_no_certificate_maps_nobody() -> None:
    assert mapped_user(None, users("CN=c"), allowed) is None


def test_dn_in_order_before_reordered() -> None:
    cert = peer([[(ORG, "Acme")], [(OU, "Eng")], [(CN, "u")]], "CN=u,OU=Eng,O=Acme")
    assert name_of(mapped_user(cert, users("O=Acme,CN=u,OU=Eng", "cn=u, ou=Eng, o=Acme"), allowed)) == (
        "cn=u, ou=Eng, o=Acme"
    )
    assert name_of(mapped_user(cert, users("O=Acme,CN=u,OU=Eng"), allowed)) == "O=Acme,CN=u,OU=Eng"
    assert mapped_user(cert, users("CN=u,O=Acme"), allowed) is None


def test_reordered_rdns_count_repeats() -> None:
    cert = peer([[(OU, "a")], [(OU, "a")], [(CN, "u")]], "CN=u,OU=a+OU=a")
    assert mapped_user(cert, users("OU=a,CN=u,OU=b"), allowed) is None
    assert name_of(mapped_user(cert, users("OU=a,CN=u,OU=a"), allowed)) == "OU=a,CN=u,OU=a"


def test_domain_components() -> None:
    rdns = [[(DC, "com")], [(DC, "example")], [(CN, "u")]]
    assert certificate_dn(rdns) == parse_dn("CN=u,DC=example,DC=com")
    assert domain_components(rdns) == "DC=com,DC=example"
    assert name_of(mapped_user(peer(rdns, "CN=u"), users("CN=u,DC=example,DC=com"), allowed)) == (
        "CN=u,DC=example,DC=com"
    )


def test_unknown_attribute_leaves_the_string_forms() -> None:
    rdns = [[(DC, "com")], [(DC, "example")], [(CN, "u")], [(UID, "1")]]
    assert certificate_dn(rdns) is None
    cert = peer(rdns, "CN=u")
    assert mapped_user(cert, users("UID=1,CN=u,DC=example,DC=com"), allowed) is None
    assert name_of(mapped_user(cert, users("CN=u,DC=com,DC=example", "CN=u"), allowed)) == "CN=u,DC=com,DC=example"
    assert name_of(mapped_user(cert, users("CN=u"), allowed)) == "CN=u"


def test_parse_dn() -> None:
    assert parse_dn("CN=a\\,b+O=x , ou=y") == [frozenset({("CN", "a,b"), ("O", "x")}), frozenset({("OU", "y")})]
    assert parse_dn("not a dn") is None
    assert parse_dn("  ") is None
