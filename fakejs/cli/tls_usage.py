"""``--help_tls``: what fakejs serves of TLS, printed to stdout with status 0 as nats-server prints its TLS help.

The text is fakejs's own: nats-server's help describes its whole TLS
support (certificate stores, OCSP, curve preferences), much of which
fakejs refuses; a user reading fakejs's help should learn what fakejs
will accept.
"""

from __future__ import annotations

import textwrap

from fakejs.core.configfile.tls import INSECURE_CIPHERS, REFUSED, SECURE_CIPHERS


def tls_usage_text() -> str:
    """The ``--help_tls`` text (it starts with a blank line, as nats-server's does)."""
    secure = "\n".join(f"    {name}" for name in sorted(SECURE_CIPHERS))
    insecure = "\n".join(f"    {name}" for name in sorted(INSECURE_CIPHERS))
    refused = textwrap.fill(", ".join(sorted(REFUSED)), width=100, initial_indent="    ", subsequent_indent="    ")
    return f"""
TLS for client connections is set up in a configuration file's tls block,
or with the TLS flags (which replace the file's certificate settings):

    tls {{
        cert_file:      "./certs/server-cert.pem"
        key_file:       "./certs/server-key.pem"
        ca_file:        "./certs/ca.pem"
        verify:         true
    }}

Flags:
    --tls                            Serve TLS without asking clients for a certificate
    --tlscert <file>                 The server's certificate (PEM)
    --tlskey <file>                  Its private key (PEM)
    --tlsverify                      Serve TLS and require a client certificate signed by --tlscacert
    --tlscacert <file>               The CA client certificates must be signed by
    -ms, --https_port <port>         Serve monitoring over HTTPS with the client port's certificate

Keys of the tls block fakejs serves:
    cert_file, key_file              The server's certificate and key (checked when the file is read)
    ca_file                          The CA that signs client certificates
    verify                           Require a client certificate
    verify_and_map                   Require one and log the client in as the user it names
                                     (SAN e-mail, DNS name, URI, then the subject)
    timeout                          Seconds (or a duration) the handshake may take (default 2)
    handshake_first                  TLS before INFO: true, false, "auto" or a fallback delay ("300ms")
    min_version                      "1.2" (default) or "1.3"
    cipher_suites                    TLS 1.2 suites to offer, by Go's names (TLS 1.3 suites are always offered)
    allow_insecure_cipher_suites     Needed for the insecure suites listed below
    pinned_certs                     SHA-256 (hex) of the client certificates' public keys to accept

The same block, inside websocket {{}}, puts the websocket port on TLS; with
allow_non_tls: true the client port also serves clients that do not start TLS.

Keys nats-server serves that fakejs refuses (it exits naming them):
{refused}

Secure cipher suites:
{secure}

Insecure cipher suites (with allow_insecure_cipher_suites: true):
{insecure}
"""
