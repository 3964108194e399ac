"""The checks nats-server makes on a TLS configuration's files while reading it, with its error texts.

nats-server loads the certificate, its key and the CA file when it reads
the configuration (``-t`` reports them); a server started in-process from
a :class:`TLSConfig` gets the same checks before it listens.  ``ssl`` is
imported only when there are files to check.
"""

from __future__ import annotations

import calendar
import functools
import os
import ssl

from fakejs.core.transport_config import TLSConfig


class TLSFileError(ValueError):
    """A certificate, key or CA file nats-server would not start with (its message)."""


def _read(path: str) -> bytes:
    """The file's bytes, or Go's ``open PATH: reason`` error."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except IsADirectoryError:
        raise TLSFileError(f"read {path}: is a directory") from None
    except OSError as exc:
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise TLSFileError(f"open {path}: {reason}") from None


def check_files(config: TLSConfig) -> None:
    """Raise :class:`TLSFileError` with nats-server's text when the files cannot be used."""
    if config.cert_file and not config.key_file:
        raise TLSFileError("missing 'key_file' in TLS configuration")
    if config.key_file and not config.cert_file:
        raise TLSFileError("missing 'cert_file' in TLS configuration")
    if config.cert_file:
        _check_pair(config.cert_file, config.key_file)
    if config.ca_file:
        _check_ca(config.ca_file)


def _check_pair(cert_file: str, key_file: str) -> None:
    prefix = "error parsing X509 certificate/key pair: "
    try:
        cert = _read(cert_file)
        key = _read(key_file)
    except TLSFileError as exc:
        raise TLSFileError(prefix + str(exc)) from None
    if b"-----BEGIN" not in cert:
        raise TLSFileError(prefix + "tls: failed to find any PEM data in certificate input")
    if b"-----BEGIN" not in key:
        raise TLSFileError(prefix + "tls: failed to find any PEM data in key input")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert_file, key_file)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc) or "key values mismatch" in str(exc):
            raise TLSFileError(prefix + "tls: private key does not match public key") from None
        raise TLSFileError(prefix + f"tls: failed to parse private key ({exc.reason or exc})") from None


def _check_ca(ca_file: str) -> None:
    data = _read(ca_file)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    try:
        context.load_verify_locations(cadata=data.decode("latin-1"))
    except (ssl.SSLError, ValueError):
        raise TLSFileError("failed to parse root ca certificate") from None
    if not context.get_ca_certs():
        raise TLSFileError("failed to parse root ca certificate")


@functools.lru_cache(maxsize=16)
def certificate_not_after(cert_file: str) -> int | None:
    """When the first certificate of ``cert_file`` expires, in Unix nanoseconds (/varz ``tls_cert_not_after``).

    Read once per file, as nats-server reads it once when it loads the
    configuration; ``None`` when the file holds no readable certificate.
    """
    # Only /varz asking for a certificate's expiry loads cryptography
    from cryptography import x509

    try:
        with open(cert_file, "rb") as handle:
            certificates = x509.load_pem_x509_certificates(handle.read())
    except (OSError, ValueError):
        return None
    expiry = certificates[0].not_valid_after_utc
    return calendar.timegm(expiry.utctimetuple()) * 1_000_000_000
