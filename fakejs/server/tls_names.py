"""Go's names for what OpenSSL negotiates, and what a client certificate says (as Go prints it).

nats-server reports cipher suites by Go's names (``/connz``
``tls_cipher_suite``) and maps a certificate's subject to a user by Go's
RFC 2253 string of it (``verify_and_map``); Python's ``ssl`` speaks
OpenSSL's names and gives the subject as tuples.  This module translates.
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

# pkix.Name's attributes in the order Go's ToRDNSequence lists them (String() prints them reversed).
_GO_ORDER = (
    ("countryName", "C"),
    ("stateOrProvinceName", "ST"),
    ("localityName", "L"),
    ("streetAddress", "STREET"),
    ("postalCode", "POSTALCODE"),
    ("organizationName", "O"),
    ("organizationalUnitName", "OU"),
    ("commonName", "CN"),
    ("serialNumber", "SERIALNUMBER"),
)


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


def go_subject(subject: tuple[tuple[tuple[str, str], ...], ...]) -> str:
    """The subject as Go's ``pkix.Name.ToRDNSequence().String()`` prints it (``CN=alice,O=Acme``)."""
    values: dict[str, list[str]] = {}
    for rdn in subject:
        for name, value in rdn:
            values.setdefault(name, []).append(value)
    parts: list[str] = []
    for name, short in _GO_ORDER:
        found = values.get(name)
        if found:
            parts.append("+".join(f"{short}={_escape(v)}" for v in found))
    return ",".join(reversed(parts))


def peer_certificate(decoded: dict[str, object]) -> PeerCertificate:
    """What ``verify_and_map`` reads from a verified client certificate (``SSLObject.getpeercert()``)."""
    subject = decoded.get("subject", ())
    assert isinstance(subject, tuple)
    common = [value for rdn in subject for name, value in rdn if name == "commonName"]
    cert = PeerCertificate(subject=go_subject(subject), common_name=common[0] if common else "")
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


def _der_item(data: bytes, offset: int) -> tuple[int, int, int]:
    """``(tag, start of content, end of content)`` of the DER item at ``offset``."""
    tag = data[offset]
    length = data[offset + 1]
    start = offset + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    return tag, start, start + length


def public_key_fingerprint(der: bytes) -> str:
    """SHA-256 (hex) of the certificate's DER SubjectPublicKeyInfo, as ``pinned_certs`` lists them."""
    _, cert_start, _ = _der_item(der, 0)
    _, offset, _ = _der_item(der, cert_start)  # tbsCertificate's content
    if der[offset] == 0xA0:  # [0] version
        offset = _der_item(der, offset)[2]
    for _ in range(5):  # serialNumber, signature, issuer, validity, subject
        offset = _der_item(der, offset)[2]
    _, _, end = _der_item(der, offset)
    return hashlib.sha256(der[offset:end]).hexdigest()


def peer_cert_document(subject: str, der: bytes) -> dict[str, str]:
    """One ``tls_peer_certs`` entry of /connz, as nats-server shows a client certificate."""
    return {
        "subject": subject,
        "spki_sha256": public_key_fingerprint(der),
        "cert_sha256": hashlib.sha256(der).hexdigest(),
    }
