"""Go's string forms of a client certificate's subject, and what is read from a DER certificate."""

from __future__ import annotations

import datetime
import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from fakejs.server.tls_names import (
    go_cipher_name,
    go_name_string,
    go_subject,
    peer_certificate,
    public_key_fingerprint,
    subject_rdns,
)

C, ST, L, ORG, OU, CN, SERIAL = "2.5.4.6", "2.5.4.8", "2.5.4.7", "2.5.4.10", "2.5.4.11", "2.5.4.3", "2.5.4.5"
DC, UID = "0.9.2342.19200300.100.1.25", "0.9.2342.19200300.100.1.1"


def certificate(subject: list[list[tuple[str, str]]]) -> tuple[bytes, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.RelativeDistinguishedName([x509.NameAttribute(x509.ObjectIdentifier(o), v) for o, v in rdn])
            for rdn in subject
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.DER), cert


def test_subject_is_read_as_encoded() -> None:
    subject = [[(DC, "com")], [(ORG, "Acme"), (OU, "Eng")], [(CN, "é user")]]
    der, _ = certificate(subject)
    rdns = subject_rdns(der)
    assert [sorted(rdn) for rdn in rdns] == [sorted(rdn) for rdn in subject]


def test_fingerprint_is_the_sha256_of_the_public_key_info() -> None:
    der, cert = certificate([[(CN, "x")]])
    spki = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert public_key_fingerprint(der) == hashlib.sha256(spki).hexdigest()


def test_go_order_and_merged_attributes() -> None:
    # Go lists C, ST, L, STREET, POSTALCODE, O, OU, CN, SERIALNUMBER and prints them reversed,
    # every value of one attribute in a single RDN.
    rdns = [[(CN, "alice")], [(OU, "b")], [(C, "US")], [(OU, "a")], [(ORG, "Acme")], [(SERIAL, "7")], [(L, "X")]]
    assert go_subject(rdns) == "SERIALNUMBER=7,CN=alice,OU=b+OU=a,O=Acme,L=X,C=US"


def test_last_common_name_wins() -> None:
    assert go_subject([[(CN, "first")], [(CN, "second")]]) == "CN=second"


def test_escapes() -> None:
    assert go_subject([[(CN, '#a,b+c"d\\e<f>g;h ')]]) == 'CN=\\#a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\ '
    assert go_subject([[(CN, " x")]]) == "CN=\\ x"


def test_unnamed_attributes_only_in_the_full_string() -> None:
    rdns = [[(DC, "com")], [(DC, "example")], [(CN, "u")], [(UID, "u-1")]]
    assert go_subject(rdns) == "CN=u"
    assert go_name_string(rdns) == f"CN=u,{UID}=u-1,{DC}=example,{DC}=com"


def test_peer_certificate() -> None:
    der, _ = certificate([[(DC, "com")], [(CN, "u")]])
    decoded: dict[str, object] = {"subjectAltName": (("email", "u@x"), ("DNS", "h"), ("URI", "spiffe://a/b"))}
    peer = peer_certificate(decoded, der)
    assert (peer.subject, peer.common_name) == ("CN=u", "u")
    assert (peer.emails, peer.dns_names, peer.uris) == (["u@x"], ["h"], ["spiffe://a/b"])
    assert peer.rdns == [[(DC, "com")], [(CN, "u")]]
    assert peer.display_subject == f"CN=u,{DC}=com"


def test_cipher_names() -> None:
    assert go_cipher_name("ECDHE-RSA-AES128-GCM-SHA256") == "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
    assert go_cipher_name("TLS_AES_128_GCM_SHA256") == "TLS_AES_128_GCM_SHA256"
