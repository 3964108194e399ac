"""The ``tls {}`` block's configuration errors: ``fakejs -t -c FILE`` against ``nats-server -t -c FILE``.

Each bad block must give nats-server's text at nats-server's position with
its exit status; blocks nats-server accepts but fakejs does not serve are
refused by fakejs, naming the feature.  ``{cert}``, ``{key}``, ``{ca}``
and ``{client_key}`` stand for throwaway certificate files, ``{garbage}``
for a file that is no PEM at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fakejs.testkit.certs import TestCertificates
from tests.harness.config_file import FAKE, lines, real, run, write

PAIR = 'cert_file: "{cert}"\n  key_file: "{key}"\n'
PIN = "a" * 64

ERRORS = {
    "missing_cert_file": 'tls {\n  cert_file: "/nonexistent/cert.pem"\n  key_file: "{key}"\n}\n',
    "missing_key_file": 'tls {\n  cert_file: "{cert}"\n  key_file: "/nonexistent/key.pem"\n}\n',
    "bad_key": 'tls {\n  cert_file: "{cert}"\n  key_file: "{garbage}"\n}\n',
    "key_of_another_certificate": 'tls {\n  cert_file: "{cert}"\n  key_file: "{client_key}"\n}\n',
    "cert_without_key": 'tls {\n  cert_file: "{cert}"\n}\n',
    "key_without_cert": 'tls {\n  key_file: "{key}"\n}\n',
    "missing_ca_file": "tls {\n  " + PAIR + '  ca_file: "/nonexistent/ca.pem"\n}\n',
    "ca_file_not_pem": "tls {\n  " + PAIR + '  ca_file: "{garbage}"\n}\n',
    "cert_file_number": 'tls {\n  cert_file: 5\n  key_file: "{key}"\n}\n',
    "unknown_key": "tls {\n  " + PAIR + "  bogus: 1\n}\n",
    "verify_number": "tls {\n  " + PAIR + "  verify: 1\n}\n",
    "verify_string": "tls {\n  " + PAIR + '  verify: "yes please"\n}\n',
    "verify_and_map_string": "tls {\n  " + PAIR + '  verify_and_map: "x"\n}\n',
    "timeout_string": "tls {\n  " + PAIR + '  timeout: "abc"\n}\n',
    "timeout_bool": "tls {\n  " + PAIR + "  timeout: true\n}\n",
    "handshake_first_number": "tls {\n  " + PAIR + "  handshake_first: 5\n}\n",
    "handshake_first_word": "tls {\n  " + PAIR + '  handshake_first: "soon"\n}\n',
    "handshake_first_list": "tls {\n  " + PAIR + "  handshake_first: [1]\n}\n",
    "min_version_unknown": "tls {\n  " + PAIR + '  min_version: "1.5"\n}\n',
    "min_version_too_old": "tls {\n  " + PAIR + '  min_version: "1.0"\n}\n',
    "min_version_number": "tls {\n  " + PAIR + "  min_version: 1.2\n}\n",
    "cipher_unknown": "tls {\n  " + PAIR + '  cipher_suites: ["TLS_NOPE"]\n}\n',
    "cipher_number": "tls {\n  " + PAIR + "  cipher_suites: [1]\n}\n",
    "cipher_not_a_list": "tls {\n  " + PAIR + '  cipher_suites: "TLS_AES_128_GCM_SHA256"\n}\n',
    "curve_unknown": "tls {\n  " + PAIR + '  curve_preferences: ["NOPE"]\n}\n',
    "verify_cert_and_check_known_urls": "tls {\n  " + PAIR + "  verify_cert_and_check_known_urls: true\n}\n",
    "pinned_not_hex": "tls {\n  " + PAIR + '  pinned_certs: ["zz"]\n}\n',
    "pinned_number": "tls {\n  " + PAIR + "  pinned_certs: [1]\n}\n",
    "pinned_not_a_list": "tls {\n  " + PAIR + '  pinned_certs: "abc"\n}\n',
    "cert_store": 'tls {\n  cert_store: "WindowsCurrentUser"\n}\n',
    "cert_store_unknown": 'tls {\n  cert_store: "Mine"\n}\n',
    "cert_store_number": "tls {\n  cert_store: 5\n}\n",
    "cert_match_by_unknown": 'tls {\n  cert_match_by: "color"\n}\n',
    "cert_match_number": "tls {\n  cert_match: 1\n}\n",
    "cert_match_skip_invalid_number": "tls {\n  cert_match_skip_invalid: 1\n}\n",
    "ocsp_peer_number": "tls {\n  " + PAIR + "  ocsp_peer: 5\n}\n",
    "certs_not_a_list": "tls {\n  certs: 5\n}\n",
    "tls_not_a_block": "tls: 1\n",
    "two_bad_members": "tls {\n  " + PAIR + '  verify: 1\n  timeout: "abc"\n}\n',
}

# Valid for both: the same digest line.
VALID = {
    "pinned_upper_case": "tls {\n  " + PAIR + f'  pinned_certs: ["{PIN.upper()}"]\n}}\n',
    "verify_and_map_with_verify": "tls {\n  " + PAIR + '  ca_file: "{ca}"\n  verify: true\n  verify_and_map: true\n}\n',
    "handshake_first_delay": "tls {\n  " + PAIR + '  handshake_first: "300ms"\n  timeout: 0.5\n}\n',
    "min_version_13": "tls {\n  " + PAIR + '  min_version: "1.3"\n}\n',
}

# Valid for nats-server; fakejs does not serve them and says so.
REFUSED = {
    "ocsp_peer": ("tls {\n  " + PAIR + "  ocsp_peer: true\n}\n", "TLS ocsp_peer"),
    "several_certificates": ('tls {\n  certs: [ { cert_file: "{cert}", key_file: "{key}" } ]\n}\n', "several"),
    "insecure": ("tls {\n  " + PAIR + "  insecure: true\n}\n", "TLS insecure"),
    "connection_rate_limit": ("tls {\n  " + PAIR + "  connection_rate_limit: 10\n}\n", "connection_rate_limit"),
    "no_certificate": ("tls {}\n", "TLS without a certificate"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    directory = tmp_path_factory.mktemp("tls-conf")
    certs = TestCertificates(directory / "certs")
    garbage = directory / "garbage.pem"
    garbage.write_text("not a pem file\n")
    return {
        "cert": certs.server_cert_file,
        "key": certs.server_key_file,
        "ca": certs.ca_file,
        "client_key": certs.client_key_file,
        "garbage": str(garbage),
    }


def fill(text: str, files: dict[str, str]) -> str:
    for name, path in files.items():
        text = text.replace("{" + name + "}", path)
    return text


# nats-server's tls {} parser stops at its first bad member, and walks a Go map: with two bad
# members either may be the one reported.
MAP_ORDER = frozenset({"two_bad_members"})
MAP_ORDER_TRIES = 20


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_tls_block_errors(name: str, files: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path, fill(ERRORS[name], files))
    fake_status, fake_err = run(FAKE, "-t", "-c", path)
    tries = MAP_ORDER_TRIES if name in MAP_ORDER else 1
    seen = []
    for _ in range(tries):
        real_status, real_err = run(real(), "-t", "-c", path)
        assert real_status == 1, real_err
        seen.append(lines(real_err))
        if seen[-1] == lines(fake_err):
            break
    assert (fake_status, lines(fake_err)) == (real_status, seen[-1]), seen


@pytest.mark.parametrize("name", sorted(VALID))
def test_tls_blocks_both_accept(name: str, files: dict[str, str], tmp_path: Path) -> None:
    path = write(tmp_path, fill(VALID[name], files))
    real_status, real_err = run(real(), "-t", "-c", path)
    assert real_status == 0, real_err
    assert run(FAKE, "-t", "-c", path) == (real_status, real_err)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tls_blocks_fakejs_refuses(name: str, files: dict[str, str], tmp_path: Path) -> None:
    text, feature = REFUSED[name]
    path = write(tmp_path, fill(text, files))
    assert run(real(), "-t", "-c", path)[0] == 0
    status, stderr = run(FAKE, "-t", "-c", path)
    assert status == 1
    assert stderr.startswith(f"fakejs: {path}:") and feature in stderr and "not supported by fakejs yet" in stderr
