"""``--tls-selfsigned``: serve TLS with a CA and certificates made at start, for ``docker run`` and CI.

A client in any language needs only the CA bundle to trust the server (and,
with ``--tlsverify``, the client certificate and key made alongside): their
paths are logged at start, in ``--tls_dir`` when given (a mounted volume,
say) or else in a temporary directory removed at exit.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass, replace

from fakejs.core.options import ServerOptions
from fakejs.core.transport_config import TLSConfig
from fakejs.testkit.certs import TestCertificates


@dataclass
class SelfSigned:
    """The certificates made for this run, and whether their directory is ours to remove."""

    certificates: TestCertificates
    temporary: bool

    def remove(self) -> None:
        if self.temporary:
            shutil.rmtree(self.certificates.directory, ignore_errors=True)


def make_self_signed(options: ServerOptions, directory: str, verify: bool, log: logging.Logger) -> SelfSigned:
    """Certificates for the server's names; ``options.tls`` set to serve them (``verify``: mutual TLS)."""
    temporary = not directory
    where = directory or tempfile.mkdtemp(prefix="fakejs-tls-")
    names = ["localhost", "127.0.0.1", "::1"]
    if options.host and options.host not in names and options.host not in ("0.0.0.0", "::"):
        names.append(options.host)
    certificates = TestCertificates(where, tuple(names))
    # A configuration file's other TLS settings (handshake_first, timeout, ...) stay as given.
    options.tls = replace(
        options.tls or TLSConfig(),
        cert_file=certificates.server_cert_file,
        key_file=certificates.server_key_file,
        ca_file=certificates.ca_file,
        verify=verify or (options.tls is not None and options.tls.verify),
    )
    log.info("TLS with certificates made for this run (--tls-selfsigned) for %s", ", ".join(names))
    log.info("  CA bundle:           %s", certificates.ca_file)
    log.info("  client certificate:  %s", certificates.client_cert_file)
    log.info("  client key:          %s", certificates.client_key_file)
    return SelfSigned(certificates, temporary)
