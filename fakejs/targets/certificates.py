"""``tls=True`` / ``tls="verify"`` for the test handles: certificates made for one server, and its clients' side.

A handle started with ``tls`` makes a throwaway CA and certificates
(:class:`~fakejs.testkit.certs.TestCertificates`) in a directory of its own,
serves TLS with them -- fakejs through its options, a real nats-server
through the same ``--tls*`` flags or ``tls {}`` block a user would write --
and hands tests :meth:`TestTLS.client_ssl_context` and the PEM files (for
clients in other languages).  ``"verify"`` asks every client for a
certificate signed by the CA (mutual TLS); the default client context then
shows the one made with the CA.
"""

from __future__ import annotations

import ssl
from typing import Any

from fakejs.core.transport_config import TLSConfig
from fakejs.testkit.certs import CertificateFiles, TestCertificates

MODES = (True, "verify")


class TestTLS:
    """The TLS side of one test server: its certificates, and contexts for its clients."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, mode: Any, directory: str) -> None:
        if mode not in MODES:
            raise ValueError(f"tls must be True or 'verify', not {mode!r}")
        self.verify = mode == "verify"
        self.certificates = TestCertificates(directory)

    def server_config(self) -> TLSConfig:
        return self.certificates.tls_config(verify=self.verify)

    def config_block(self) -> str:
        """The ``tls {}`` block a real server's configuration file gets."""
        return self.certificates.config_block(verify=self.verify)

    def flags(self) -> list[str]:
        """nats-server's command-line flags for the same settings."""
        certs = self.certificates
        flags = ["--tlscert", certs.server_cert_file, "--tlskey", certs.server_key_file]
        if self.verify:
            flags += ["--tlsverify", "--tlscacert", certs.ca_file]
        else:
            flags.append("--tls")
        return flags

    def client_ssl_context(self, client: bool | CertificateFiles | None = None) -> ssl.SSLContext:
        """A context trusting the CA; it shows the CA's client certificate under ``"verify"`` unless ``client`` says."""
        return self.certificates.client_ssl_context(self.verify if client is None else client)


def required(tls: TestTLS | None) -> TestTLS:
    """A handle's certificates, or the error telling the test how to ask for them."""
    if tls is None:
        raise RuntimeError("this server was not started with TLS: use @pytest.mark.fakejs(tls=True) or tls='verify'")
    return tls
