"""Go's names for what OpenSSL negotiates, and what a client certificate says (as Go prints it).

nats-server reports cipher suites by Go's names (``/connz``
``tls_cipher_suite``) and maps a certificate's subject to a user by Go's
RFC 2253 string of it (``verify_and_map``); Python's ``ssl`` speaks
OpenSSL's names and gives the subject as tuples.  This module translates,
reading certificates with the ``cryptography`` library (imported when a
client certificate is first looked at).
"""

from __future__ import annotations

import hashlib

from fakejs.core.clientio import PeerCertificate

# Go's TLS 1.2 cipher suite names -> OpenSSL's (TLS 1.3 suites have the same names in both).
GO_TO_OPENSSL = {
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
}
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")
OPENSSL_TO_GO = {openssl: go for go, openssl in GO_TO_OPENSSL.items()}

# pkix.Name's attributes (by OID) in the order Go's ToRDNSequence lists them (String() prints them reversed);
# the others (domain components, e-mail addresses, ...) are left out of it.
_GO_ORDER = (
    ("2.5.4.6", "C"),
    ("2.5.4.8", "ST"),
    ("2.5.4.7", "L"),
    ("2.5.4.9", "STREET"),
    ("2.5.4.17", "POSTALCODE"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.3", "CN"),
    ("2.5.4.5", "SERIALNUMBER"),
)
_GO_NAMES = dict(_GO_ORDER)
_SINGLE = ("2.5.4.3", "2.5.4.5")  # pkix.Name keeps one common name and one serial number: the last

# One attribute of a subject: (dotted OID, value); an RDN is a list of them, a subject a list of RDNs.
Attribute = tuple[str, str]


def go_cipher_name(openssl_name: str) -> str:
    """Go's name of a negotiated suite (OpenSSL's name when Go has none)."""
    return OPENSSL_TO_GO.get(openssl_name, openssl_name)


def _escape(value: str) -> str:
    """Go's escaping of an attribute value in an RFC 2253 string."""
    out = []
    for index, char in enumerate(value):
        if char in ',+"\\<>;' or (index == 0 and char in " #") or (index == len(value) - 1 and char == " "):
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


def subject_rdns(der: bytes) -> list[list[Attribute]]:
    """The certificate's subject as it is encoded: RDNs in order, each ``(dotted OID, value)`` pairs."""
    # Only a client certificate looked at loads cryptography
    from cryptography import x509

    subject = x509.load_der_x509_certificate(der).subject
    return [[(attribute.oid.dotted_string, _text(attribute.value)) for attribute in rdn] for rdn in subject.rdns]


def _text(value: str | bytes) -> str:
    """An attribute's value as Go holds it (the bytes of a non-string type as they are)."""
    return value if isinstance(value, str) else value.decode("latin-1")


def _go_rdn_sequence(rdns: list[list[Attribute]]) -> list[list[Attribute]]:
    """Go's ``pkix.Name.ToRDNSequence()`` of a parsed subject: its named attributes only, in Go's order."""
    values: dict[str, list[str]] = {}
    for rdn in rdns:
        for oid, value in rdn:
            if oid in _GO_NAMES:
                if oid in _SINGLE:
                    values[oid] = [value]
                else:
                    values.setdefault(oid, []).append(value)
    return [[(oid, value) for value in values[oid]] for oid, _ in _GO_ORDER if values.get(oid)]


def _go_string(rdns: list[list[Attribute]]) -> str:
    """Go's ``RDNSequence.String()``: RDNs last first, ``+`` inside one, unnamed attributes by dotted OID."""
    parts: list[str] = []
    for rdn in reversed(rdns):
        items: list[str] = []
        for oid, value in rdn:
            short = _GO_NAMES.get(oid)
            items.append(f"{short or oid}={_escape(value)}")
        parts.append("+".join(items))
    return ",".join(parts)


def go_subject(rdns: list[list[Attribute]]) -> str:
    """The subject as ``cert.Subject.ToRDNSequence().String()`` prints it (``CN=alice,O=Acme``): for ``verify_and_map``."""
    return _go_string(_go_rdn_sequence(rdns))


def go_name_string(rdns: list[list[Attribute]]) -> str:
    """The subject as ``cert.Subject.String()`` prints it (/connz): the unnamed attributes too, at the end."""
    extra = [[(oid, value)] for rdn in rdns for oid, value in rdn if oid not in _GO_NAMES]
    return _go_string(extra + _go_rdn_sequence(rdns))


def peer_certificate(decoded: dict[str, object], der: bytes) -> PeerCertificate:
    """What ``verify_and_map`` reads from a verified client certificate (``getpeercert()`` and its DER)."""
    rdns = subject_rdns(der)
    common = [value for rdn in rdns for oid, value in rdn if oid == "2.5.4.3"]
    cert = PeerCertificate(
        subject=go_subject(rdns),
        common_name=common[-1] if common else "",
        rdns=rdns,
        display_subject=go_name_string(rdns),
    )
    alt_names = decoded.get("subjectAltName", ())
    assert isinstance(alt_names, tuple)
    for kind, value in alt_names:
        if kind == "email":
            cert.emails.append(value)
        elif kind == "DNS":
            cert.dns_names.append(value)
        elif kind == "URI":
            cert.uris.append(value)
        elif kind == "IP Address":
            cert.ip_addresses.append(value)
    return cert


def public_key_fingerprint(der: bytes) -> str:
    """SHA-256 (hex) of the certificate's DER SubjectPublicKeyInfo, as ``pinned_certs`` lists them."""
    # Only pinned_certs load cryptography
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    key = x509.load_der_x509_certificate(der).public_key()
    return hashlib.sha256(key.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)).hexdigest()


def peer_cert_document(subject: str, der: bytes) -> dict[str, str]:
    """One ``tls_peer_certs`` entry of /connz, as nats-server shows a client certificate."""
    return {
        "subject": subject,
        "spki_sha256": public_key_fingerprint(der),
        "cert_sha256": hashlib.sha256(der).hexdigest(),
    }
