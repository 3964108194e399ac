"""The ``tls {}`` block (top level, and inside ``websocket {}``): nats-server's keys, checks and error texts.

nats-server parses the block member by member and stops at the first bad
one (it walks a Go map, so with several bad members which one it names
varies); it then loads the certificate, key and CA files while the file is
read, so ``-t`` reports a missing or broken file too.  Errors about a
member are reported at the member, errors about the files at the block.
Settings nats-server serves and fakejs cannot (certificate stores, OCSP,
curve preferences, several certificates) are refused by name.
"""

from __future__ import annotations

import re
from typing import Any

from fakejs.conf import Token
from fakejs.core.configfile.context import ConfigContext
from fakejs.core.configfile.values import go_type, want
from fakejs.core.tls_files import TLSFileError, check_files
from fakejs.core.transport_config import DEFAULT_TLS_FIRST_FALLBACK, TLSConfig
from fakejs.gocompat.gotime import parse_duration

# Go's cipher suites: the secure ones, and those nats-server accepts only with
# ``allow_insecure_cipher_suites``.
SECURE_CIPHERS = frozenset(
    {
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    }
)
INSECURE_CIPHERS = frozenset(
    {
        "TLS_RSA_WITH_RC4_128_SHA",
        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        "TLS_RSA_WITH_AES_128_CBC_SHA",
        "TLS_RSA_WITH_AES_256_CBC_SHA",
        "TLS_RSA_WITH_AES_128_CBC_SHA256",
        "TLS_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
        "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    }
)
CURVES = frozenset({"X25519MLKEM768", "X25519", "CurveP256", "CurveP384", "CurveP521"})
_PIN = re.compile(r"^[a-f0-9]{64}$")
# Members nats-server serves that fakejs does not, and what to call them when refusing.
REFUSED = {
    "cert_store": "TLS cert_store",
    "cert_match_by": "TLS cert_store",
    "cert_match": "TLS cert_store",
    "ca_certs_match": "TLS cert_store",
    "cert_match_skip_invalid": "TLS cert_store",
    "ocsp_peer": "TLS ocsp_peer",
    "certs": "TLS certificates (several)",
    "certificates": "TLS certificates (several)",
    "curve_preferences": "TLS curve_preferences",
    "connection_rate_limit": "TLS connection_rate_limit",
    "insecure": "TLS insecure",
}


class _BadMember(Exception):
    """nats-server's error for one member (it reports the first it meets and stops)."""

    def __init__(self, token: Token, message: str) -> None:
        super().__init__(message)
        self.token = token
        self.message = message


def tls_block(token: Token, context: ConfigContext, certificate_required: bool = True) -> TLSConfig | None:
    """The block's settings, or ``None`` after reporting why it cannot be used.

    ``certificate_required`` False: the block of a connection this server dials (a leaf remote's),
    which may verify the other side with ``ca_file`` alone.
    """
    members = want(token, dict)
    config = TLSConfig()
    insecure: list[str] = []
    allow_insecure = False
    refused: list[tuple[Token, str]] = []
    try:
        for key, member in members.items():
            lowered = key.lower()
            if lowered in REFUSED:
                _check_refused(lowered, member)
                refused.append((member, REFUSED[lowered]))
            elif lowered == "allow_insecure_cipher_suites":
                allow_insecure = _bool(member, key)
            elif lowered == "cipher_suites":
                config.cipher_suites = _ciphers(member, insecure)
            else:
                _member(lowered, key, member, config)
    except _BadMember as bad:
        context.error(bad.token, bad.message)
        return None
    if insecure and not allow_insecure:
        names = ", ".join(insecure)
        context.error(
            token, f"insecure cipher suites configured without 'allow_insecure_cipher_suites' option set: {names}"
        )
        return None
    try:
        check_files(config)
    except TLSFileError as exc:
        context.error(token, str(exc))
        return None
    for member, feature in refused:
        context.refuse(member, feature)
    if not config.cert_file and certificate_required:
        context.refuse(token, "TLS without a certificate (cert_file)")
        return None
    return config if not refused else None


def _member(lowered: str, key: str, member: Token, config: TLSConfig) -> None:
    value = member.value
    if lowered in ("cert_file", "key_file", "ca_file"):
        if not isinstance(value, str):
            raise _BadMember(member, f"error parsing tls config, expected '{lowered}' to be filename")
        setattr(config, lowered, value)
    elif lowered == "verify":
        config.verify = _bool(member, "verify")
    elif lowered == "verify_and_map":
        config.verify_and_map = _bool(member, "verify_and_map")
        if config.verify_and_map:
            config.verify = True
    elif lowered == "verify_cert_and_check_known_urls":
        if _bool(member, "verify_cert_and_check_known_urls"):
            raise _BadMember(member, "verify_cert_and_check_known_urls not supported in this context")
    elif lowered == "timeout":
        config.timeout = _timeout(member)
    elif lowered in ("handshake_first", "first", "immediate"):
        config.handshake_first, config.handshake_first_fallback = _handshake_first(member, key)
    elif lowered == "min_version":
        config.min_version = _min_version(member)
    elif lowered == "pinned_certs":
        config.pinned_certs = _pinned(member)
    else:
        raise _BadMember(member, f'error parsing tls config, unknown field "{key}"')


def _bool(member: Token, key: str) -> bool:
    if not isinstance(member.value, bool):
        raise _BadMember(member, f"error parsing tls config, expected '{key}' to be a boolean")
    return member.value


def _check_refused(lowered: str, member: Token) -> None:
    """The type checks nats-server makes on members fakejs refuses anyway (an error beats a refusal)."""
    if lowered == "insecure":
        _bool(member, "insecure")
    elif lowered in ("cert_store", "cert_match_by", "cert_match"):
        _check_cert_store(lowered, member)
    elif lowered == "ocsp_peer" and not isinstance(member.value, (bool, dict)):
        # nats-server names the type of the whole tls block here, not of the member.
        raise _BadMember(member, "error parsing ocsp peer config: unsupported type map[string]interface {}")
    elif lowered in ("certs", "certificates") and not isinstance(member.value, list):
        raise _BadMember(member, "error parsing certificates config: unsupported type map[string]interface {}")
    elif lowered == "cert_match_skip_invalid" and not isinstance(member.value, bool):
        raise _BadMember(member, "expected 'cert_match_skip_invalid' to be a boolean")
    elif lowered == "curve_preferences":
        items = _list(member)
        if not items:
            raise _BadMember(member, "error parsing tls config, 'curve_preferences' cannot be empty")
        for item in items:
            if item.value not in CURVES:
                raise _BadMember(item, f"unrecognized curve preference {item.value}")


# The Windows certificate stores nats-server knows, and how cert_match_by may pick a certificate in one.
_CERT_STORES = ("windowscurrentuser", "windowslocalmachine")
_CERT_MATCH_BY = ("issuer", "subject", "thumbprint")


def _check_cert_store(lowered: str, member: Token) -> None:
    """nats-server's checks of the certificate store members (a known store is Windows-only: an error here)."""
    value = member.value
    if not isinstance(value, str) or not value:
        raise _BadMember(member, f"expected '{lowered}' to be a valid non-empty string")
    if lowered == "cert_store":
        if value.lower() not in _CERT_STORES:
            raise _BadMember(member, "cert store type not implemented")
        raise _BadMember(member, "cert_store not compatible with current operating system")
    if lowered == "cert_match_by" and value.lower() not in _CERT_MATCH_BY:
        raise _BadMember(member, "cert match by type not implemented")


def _list(member: Token) -> list[Token]:
    value: Any = want(member, list)
    return list(value)


def _ciphers(member: Token, insecure: list[str]) -> list[str]:
    items = _list(member)
    if not items:
        raise _BadMember(member, "error parsing tls config, 'cipher_suites' cannot be empty")
    names: list[str] = []
    for item in items:
        name = want(item, str)
        if name in INSECURE_CIPHERS:
            insecure.append(name)
        elif name not in SECURE_CIPHERS:
            raise _BadMember(item, f"unrecognized cipher {name}")
        names.append(name)
    return names


def _timeout(member: Token) -> float:
    value = member.value
    if isinstance(value, bool):
        raise _BadMember(member, "error parsing tls config, 'timeout' wrong type")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return parse_duration(value) / 1e9
        except ValueError as exc:
            raise _BadMember(member, f"error parsing tls config, 'timeout' {exc}") from None
    raise _BadMember(member, "error parsing tls config, 'timeout' wrong type")


def _handshake_first(member: Token, key: str) -> tuple[bool, float]:
    """``(handshake_first, fallback seconds)``: a boolean, "auto", or a duration to wait before falling back."""
    value = member.value
    if isinstance(value, bool):
        return value, 0.0
    if not isinstance(value, str):
        raise _BadMember(member, f'field "{key}" should be a boolean or a string, got {go_type(value)}')
    lowered = value.lower()
    if lowered in ("true", "on"):
        return True, 0.0
    if lowered in ("false", "off"):
        return False, 0.0
    if lowered in ("auto", "auto_fallback"):
        return True, DEFAULT_TLS_FIRST_FALLBACK
    try:
        return True, parse_duration(value) / 1e9
    except ValueError:
        raise _BadMember(member, f'field "{key}"\'s value "{value}" is invalid') from None


def _min_version(member: Token) -> str:
    value = member.value
    if not isinstance(value, str):
        raise _BadMember(member, f"error parsing tls config: 'min_version' wrong type: {value}")
    if value in ("1.0", "1.1"):
        raise _BadMember(member, f"error parsing tls config: unsupported TLS version: TLS {value}")
    if value not in ("1.2", "1.3"):
        raise _BadMember(member, f"error parsing tls config: unknown version: {value}")
    return value


def _pinned(member: Token) -> list[str]:
    value = member.value
    if not isinstance(value, list):
        raise _BadMember(
            member,
            "error parsing tls config, expected 'pinned_certs' to be a list of hex-encoded sha256 of DER "
            "encoded SubjectPublicKeyInfo",
        )
    pins: list[str] = []
    for item in value:
        entry = str(want(item, str)).lower()
        if not _PIN.match(entry):
            raise _BadMember(
                item,
                f"error parsing tls config, 'pinned_certs' key {entry} does not look like hex-encoded sha256 "
                "of DER encoded SubjectPublicKeyInfo",
            )
        pins.append(entry)
    return pins
