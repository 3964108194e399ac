"""The few DER walks fakejs makes in an X.509 certificate, without a crypto library.

Python's ``ssl`` gives a peer certificate's DER bytes but not its subject
as encoded, its public key info or its expiry as Go reads them; these
helpers find those fields.  The certificates come from a completed TLS
handshake or from a file that loaded as a certificate, so they are well
formed.
"""

from __future__ import annotations

import base64
import datetime

Span = tuple[int, int, int]  # (tag, start of content, end of content)


def item(data: bytes, offset: int) -> Span:
    """``(tag, start of content, end of content)`` of the DER item at ``offset``."""
    tag = data[offset]
    length = data[offset + 1]
    start = offset + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    return tag, start, start + length


def tbs_fields(der: bytes) -> list[int]:
    """Where tbsCertificate's fields start, after the version: serial, signature, issuer, validity, subject, key, ..."""
    _, cert_start, _ = item(der, 0)
    _, offset, end = item(der, cert_start)
    if der[offset] == 0xA0:  # [0] version
        offset = item(der, offset)[2]
    heads: list[int] = []
    while offset < end:
        heads.append(offset)
        offset = item(der, offset)[2]
    return heads


def first_pem_certificate(pem: bytes) -> bytes | None:
    """The DER bytes of the first ``CERTIFICATE`` block of a PEM file."""
    begin, end = b"-----BEGIN CERTIFICATE-----", b"-----END CERTIFICATE-----"
    start = pem.find(begin)
    stop = pem.find(end, start)
    if start < 0 or stop < 0:
        return None
    try:
        return base64.b64decode(b"".join(pem[start + len(begin) : stop].split()))
    except ValueError:
        return None


def not_after(der: bytes) -> datetime.datetime:
    """When the certificate expires (UTC), from its validity field."""
    _, start, _ = item(der, tbs_fields(der)[3])
    after_tag, after_start, after_end = item(der, item(der, start)[2])
    text = der[after_start:after_end].decode("ascii").rstrip("Z")
    if after_tag == 0x17:  # UTCTime: YYMMDDHHMMSS, years 1950-2049
        year = int(text[:2])
        text = f"{2000 + year if year < 50 else 1900 + year}{text[2:]}"
    return datetime.datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=datetime.UTC)
