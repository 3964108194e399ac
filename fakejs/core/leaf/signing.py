"""How a leaf logs in to its hub with keys: a ``.creds`` file's user JWT, or a user nkey, signing the hub's nonce.

As nats-server's ``sendLeafConnect``: ``credentials`` puts the file's JWT
in the CONNECT's ``jwt`` and the nonce signed with the file's seed in
``sig``; ``nkey`` (a user seed) puts its public key in ``nkey`` and the
signature in ``sig``.  Signatures are base64url without padding.
"""

from __future__ import annotations

import base64
import re

import nkeys

from fakejs.core.auth import is_user_seed

__all__ = ["CredentialsError", "credentials_problem", "signed_login"]

# nats-server's credsRe: the blocks between ``---...---`` lines (the JWT first, the seed second).
_CREDS_BLOCK = re.compile(r"\s*(?:(?:-{3,}.*-{3,}\r?\n)([\w\-.=]+)(?:\r?\n-{3,}.*-{3,}(?:\r?\n|\Z)))", re.ASCII)


class CredentialsError(Exception):
    """A credentials file or seed the leaf cannot log in with; ``str()`` is nats-server's error line."""


def _blocks(path: str) -> list[str]:
    with open(path, encoding="utf-8", errors="replace") as file:
        return [match.group(1) for match in _CREDS_BLOCK.finditer(file.read())]


def credentials_problem(path: str) -> str:
    """nats-server's check of a remote's credentials file at start: its error line, or "" when it is usable."""
    try:
        blocks = _blocks(path)
    except OSError as exc:
        return f"Error reading LeafNode Remote Credentials file {_quote(path)}: open {path}: {_os_text(exc)}"
    if len(blocks) < 2:
        return f"LeafNode Remote Credentials file {_quote(path)} malformed"
    if not is_user_seed(blocks[1]):
        return f"LeafNode Remote Credentials file {_quote(path)} has malformed seed"
    return ""


def _sign(seed: str, nonce: str) -> tuple[str, str]:
    """The seed's public key and its signature of ``nonce`` (base64url, no padding)."""
    try:
        keypair = nkeys.from_seed(bytearray(seed.encode()))
    except Exception as exc:
        raise CredentialsError("Credentials file has malformed seed") from exc
    signature = keypair.sign(nonce.encode())
    return keypair.public_key.decode(), base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def signed_login(credentials: str, seed: str, nonce: str) -> dict[str, str]:
    """The CONNECT's ``jwt``/``nkey`` and ``sig`` for the hub's ``nonce`` (empty when neither is configured)."""
    if credentials:
        try:
            blocks = _blocks(credentials)
        except OSError as exc:
            raise CredentialsError(f"open {credentials}: {_os_text(exc)}") from exc
        if len(blocks) < 2:
            raise CredentialsError("Credentials file malformed")
        _, signature = _sign(blocks[1], nonce)
        return {"jwt": blocks[0], "sig": signature}
    if seed:
        public_key, signature = _sign(seed, nonce)
        return {"nkey": public_key, "sig": signature}
    return {}


def _os_text(exc: OSError) -> str:
    """Go's text for a failed open: ``no such file or directory`` (lower case, as syscall errors read)."""
    return (exc.strerror or str(exc)).lower()


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
