"""Throwaway certificates for TLS tests: a CA, a server certificate, client certificates -- as files and contexts.

::

    certs = TestCertificates(tmp_path)                 # CA + server cert for localhost/127.0.0.1/::1
    server = Server(tls=certs.tls_config(verify=True))
    nc = await nats.connect(server.url, tls=certs.client_ssl_context(client=True))

Everything is written under one directory as PEM files, so a server in
another process (nats-server, ``fakejs -c``, a client in another language)
gets the same files: :attr:`TestCertificates.ca_file`,
:attr:`~TestCertificates.server_cert_file` / ``server_key_file``,
:attr:`~TestCertificates.client_cert_file` / ``client_key_file``, and
:meth:`~TestCertificates.issue_client` for more clients (a common name, SAN
emails, ...) as ``verify_and_map`` needs.  The ``trustme`` library makes
the keys and certificates; it is imported when the first set is made.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fakejs.core.transport_config import TLSConfig

if TYPE_CHECKING:
    import trustme

SERVER_NAMES = ("localhost", "127.0.0.1", "::1")
# The identity of the default client certificate (verify_and_map maps its SAN email).
DEFAULT_CLIENT = "client@fakejs.test"


@dataclass(frozen=True)
class CertificateFiles:
    """A certificate and its private key, as PEM files."""

    cert_file: str
    key_file: str


class TestCertificates:
    """A throwaway CA with a server certificate and a client certificate, written under ``directory``."""

    __test__ = False  # not a pytest test class, despite its name

    def __init__(self, directory: str | Path, server_names: tuple[str, ...] = SERVER_NAMES) -> None:
        import trustme

        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._ca: trustme.CA = trustme.CA(organization_name="fakejs test CA")
        self.ca_file = str(self.directory / "ca.pem")
        self._ca.cert_pem.write_to_path(self.ca_file)
        server = self._write("server", self._ca.issue_cert(*server_names, common_name=server_names[0]))
        self.server_cert_file, self.server_key_file = server.cert_file, server.key_file
        client = self.issue_client("client", DEFAULT_CLIENT, common_name="fakejs client")
        self.client_cert_file, self.client_key_file = client.cert_file, client.key_file

    def issue_client(
        self,
        name: str,
        *identities: str,
        common_name: str | None = None,
        organization: str | None = None,
        organizational_unit: str | None = None,
    ) -> CertificateFiles:
        """Another client certificate (``name``-cert.pem / ``name``-key.pem) with these SANs and subject."""
        leaf = self._ca.issue_cert(
            *identities,
            common_name=common_name,
            organization_name=organization,
            organization_unit_name=organizational_unit,
        )
        return self._write(name, leaf)

    def _write(self, name: str, leaf: trustme.LeafCert) -> CertificateFiles:
        cert_file = str(self.directory / f"{name}-cert.pem")
        key_file = str(self.directory / f"{name}-key.pem")
        leaf.cert_chain_pems[0].write_to_path(cert_file)
        leaf.private_key_pem.write_to_path(key_file)
        return CertificateFiles(cert_file, key_file)

    def tls_config(self, verify: bool = False, **settings: object) -> TLSConfig:
        """A server's ``tls {}`` settings with these files (``verify``: clients must show a certificate)."""
        return TLSConfig(
            cert_file=self.server_cert_file,
            key_file=self.server_key_file,
            ca_file=self.ca_file,
            verify=verify,
            **settings,  # type: ignore[arg-type]
        )

    def config_block(self, verify: bool = False, extra: str = "") -> str:
        """The same settings as a configuration-file ``tls {}`` block (for nats-server or ``fakejs -c``)."""
        lines = [
            f'cert_file: "{self.server_cert_file}"',
            f'key_file: "{self.server_key_file}"',
            f'ca_file: "{self.ca_file}"',
        ]
        if verify:
            lines.append("verify: true")
        if extra:
            lines.append(extra)
        return "tls {\n  " + "\n  ".join(lines) + "\n}\n"

    def client_ssl_context(self, client: bool | CertificateFiles = False) -> ssl.SSLContext:
        """A client context trusting the CA; ``client=True`` (or a :class:`CertificateFiles`) shows a certificate."""
        context = ssl.create_default_context(cafile=self.ca_file)
        if client is True:
            context.load_cert_chain(self.client_cert_file, self.client_key_file)
        elif isinstance(client, CertificateFiles):
            context.load_cert_chain(client.cert_file, client.key_file)
        return context
