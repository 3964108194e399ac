"""Identifiers shaped like the ones nats-server generates, drawn from a caller's ``random.Random``.

Every random choice a server makes goes through its one seeded generator,
so a server started with a seed repeats its ids run after run; these
functions therefore take the generator instead of using a module-level one.
"""

from __future__ import annotations

import hashlib
import random

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# The alphabet nats-server draws generated consumer names from.
NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def token(rng: random.Random, alphabet: str, length: int) -> str:
    """``length`` characters drawn from ``alphabet``."""
    return "".join(rng.choice(alphabet) for _ in range(length))


def server_id(rng: random.Random) -> str:
    """A 56-character id shaped like nats-server's (an nkey public key)."""
    return "N" + token(rng, BASE32, 55)


def nuid(rng: random.Random) -> str:
    """A 22-character id shaped like a NATS NUID."""
    return token(rng, BASE62, 22)


def consumer_name(rng: random.Random) -> str:
    """An 8-character name, as nats-server generates for a consumer created without one."""
    return token(rng, NAME_CHARS, 8)


def get_hash(name: str, size: int = 8) -> str:
    """nats-server's short hash of a name (sha256 mapped onto 62 characters)."""
    digest = hashlib.sha256(name.encode()).digest()
    return "".join(BASE62[b % 62] for b in digest[:size])


def new_random(seed: int | None) -> random.Random:
    """The server's generator: seeded when asked for, else seeded from the OS."""
    return random.Random(seed)
