"""The curve key of INFO's ``xkey``: RFC 7748's X25519 and nkeys' text form."""

from __future__ import annotations

import base64
import os

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fakejs.core.broker import Broker
from fakejs.core.options import ServerOptions
from fakejs.gocompat.curvekeys import PREFIX_BYTE_CURVE, crc16, encode_key, x25519_public
from fakejs.testkit.clock import ManualClock

# An xkey nats-server 2.15.1 announced.
NATS_SERVER_XKEY = "XAX36O3PAGMF6LQK62N6JMYBBNY764DQJGPRJJV7XEHF2FDA7J6SY7DP"


def test_rfc_7748_test_vector() -> None:
    alice = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
    assert x25519_public(alice).hex() == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"


def test_public_keys_match_the_cryptography_library() -> None:
    for _ in range(20):
        private = os.urandom(32)
        expected = (
            X25519PrivateKey.from_private_bytes(private).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        )
        assert x25519_public(private) == expected


def test_text_form_round_trips_a_key_nats_server_made() -> None:
    raw = base64.b32decode(NATS_SERVER_XKEY + "=" * (-len(NATS_SERVER_XKEY) % 8))
    assert raw[0] == PREFIX_BYTE_CURVE and crc16(raw[:-2]) == int.from_bytes(raw[-2:], "little")
    assert encode_key(PREFIX_BYTE_CURVE, raw[1:-2]) == NATS_SERVER_XKEY


def test_a_seeded_server_repeats_its_curve_key() -> None:
    first, again, other = (Broker(ServerOptions(seed=seed), ManualClock(start_ns=0)) for seed in (3, 3, 4))
    assert first.xkey == again.xkey != other.xkey
    assert first.xkey.startswith("X") and len(first.xkey) == 56
