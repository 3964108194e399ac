"""nkeys' text form of a key, and the curve (x25519) key a server announces as ``xkey``.

An nkey is base32 (no padding) of a prefix byte naming its kind, the raw
32-byte key and a CRC-16 of both (little endian): 56 characters whose
first names the kind (``N`` a server, ``U`` a user, ``X`` a curve key).
nats-server makes a fresh curve key pair at every start (nkeys'
``CreateCurveKeys``) and puts the public key in its INFO; fakejs draws the
private key from the server's seeded generator and derives the public key
with the X25519 function of RFC 7748, computed here in plain Python so
that a start loads no cryptography library for one key.
"""

from __future__ import annotations

import base64
import random

# nkeys' prefix byte of curve keys: their text starts with "X".
PREFIX_BYTE_CURVE = 23 << 3
KEY_SIZE = 32
# RFC 7748: the field prime of Curve25519, the ladder's constant and the base point's u.
_FIELD_PRIME = 2**255 - 19
_A24 = 121665
_BASE_POINT = 9


def crc16(data: bytes) -> int:
    """The CRC-16 (XMODEM polynomial 0x1021, start 0) nkeys appends to a key."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def encode_key(prefix: int, raw: bytes) -> str:
    """nkeys' ``Encode``: the text form of a raw key of the kind ``prefix`` names."""
    body = bytes([prefix]) + raw
    return base64.b32encode(body + crc16(body).to_bytes(2, "little")).decode().rstrip("=")


def x25519_public(private: bytes) -> bytes:
    """RFC 7748's ``X25519(private, 9)``: the public key of a 32-byte curve private key."""
    scalar = bytearray(private)
    scalar[0] &= 248
    scalar[31] = (scalar[31] & 127) | 64
    return _ladder(int.from_bytes(scalar, "little"), _BASE_POINT).to_bytes(KEY_SIZE, "little")


def _ladder(scalar: int, u: int) -> int:
    """The Montgomery ladder of RFC 7748 section 5: ``u`` times ``scalar``, as a u-coordinate."""
    p = _FIELD_PRIME
    x2, z2, x3, z3 = 1, 0, u, 1
    swap = 0
    for bit_index in reversed(range(255)):
        bit = (scalar >> bit_index) & 1
        if swap ^ bit:
            x2, x3, z2, z3 = x3, x2, z3, z2
        swap = bit
        a, b, c, d = x2 + z2, x2 - z2, x3 + z3, x3 - z3
        aa, bb = a * a % p, b * b % p
        e = aa - bb
        da, cb = d * a % p, c * b % p
        x3, z3 = (da + cb) ** 2 % p, u * (da - cb) ** 2 % p
        x2, z2 = aa * bb % p, e * (aa + _A24 * e) % p
    if swap:
        x2, z2 = x3, z3
    return x2 * pow(z2, p - 2, p) % p


def curve_public_key(rng: random.Random) -> str:
    """A new curve key pair's public key in nkeys' text form (``X...``), its private key drawn from ``rng``."""
    return curve_key_pair(rng)[1]


def curve_key_pair(rng: random.Random) -> tuple[bytes, str]:
    """A new curve key pair drawn from ``rng``: the raw private key and the public key's text (``X...``)."""
    private = curve_private_key(rng)
    return private, curve_public_text(private)


def curve_private_key(rng: random.Random) -> bytes:
    """A new curve private key drawn from ``rng`` (its public key: :func:`curve_public_text`)."""
    return rng.randbytes(KEY_SIZE)


def curve_public_text(private: bytes) -> str:
    """The public key of a curve private key in nkeys' text form (``X...``); about 3 ms of plain Python."""
    return encode_key(PREFIX_BYTE_CURVE, x25519_public(private))
