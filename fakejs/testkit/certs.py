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

import datetime
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
        # Only a test that makes certificates loads trustme (and cryptography with it)
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

    def issue_client_with_subject(
        self, name: str, subject: list[list[tuple[str, str]]], *emails: str
    ) -> CertificateFiles:
        """A client certificate whose subject is exactly ``subject``: RDNs in order, ``(dotted OID, value)`` each.

        For subjects trustme cannot write (domain components, e-mail
        attributes, multi-valued RDNs); signed by the same CA.
        """
        # Only the subjects trustme cannot write load cryptography here
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        ca_key = serialization.load_pem_private_key(self._ca.private_key_pem.bytes(), password=None)
        ca_cert = x509.load_pem_x509_certificate(self._ca.cert_pem.bytes())
        key = ec.generate_private_key(ec.SECP256R1())
        rdns = [
            x509.RelativeDistinguishedName(
                [x509.NameAttribute(x509.ObjectIdentifier(oid), value) for oid, value in rdn]
            )
            for rdn in subject
        ]
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(rdns))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        )
        if emails:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.RFC822Name(email) for email in emails]), critical=False
            )
        cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
        cert_file = self.directory / f"{name}-cert.pem"
        key_file = self.directory / f"{name}-key.pem"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        return CertificateFiles(str(cert_file), str(key_file))

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
