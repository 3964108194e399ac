"""The directory of account JWTs behind a full or cache resolver (nats-server's ``DirJWTStore``).

Each account's JWT is one file, ``<public key>.jwt``, holding the JWT's text
and nothing else, directly in the directory: a directory one server wrote is
read by the other.  :meth:`DirectoryStore.save` writes a JWT (telling whether
it changed the file), :meth:`DirectoryStore.save_if_newer` keeps a stored
JWT issued later (a preloaded or looked-up one), :meth:`DirectoryStore.delete`
renames the file ``<key>.jwt.deleted`` or removes it (``hard_delete``).
``limit`` caps the JWTs held: a full resolver refuses one more (``jwt
store is full``), a cache forgets the one used least recently.  Each JWT
expires ``ttl`` seconds after it was stored or last read (a cache's
``ttl``), else at its own ``exp``: :meth:`DirectoryStore.expire` removes the
files whose time has come (the caller's clock says when; nats-server checks
every ``min(ttl / 2, 1 minute)``).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable

from fakejs.core.auth import decode_public_key
from fakejs.core.jwt.claims import JwtError, decode

EXTENSION = ".jwt"
DELETED = ".deleted"
# nats-server's defaults: a full resolver holds any number, a cache 1000.
CACHE_LIMIT = 1000


class StoreError(Exception):
    """A save or delete the store refuses; ``str()`` is nats-server's error text."""


def _valid_key(key: str) -> bool:
    """What nkeys' ``IsValidPublicKey`` accepts for a file name (an account, operator... public key)."""
    return len(key) >= 2 and decode_public_key(key) is not None


class DirectoryStore:
    """Account JWTs as ``<key>.jwt`` files in one directory, with nats-server's limit and delete rules."""

    def __init__(
        self,
        directory: str,
        limit: int = 0,
        evict: bool = False,
        delete: str = "",
        ttl: float = 0.0,
        now: Callable[[], float] = lambda: 0.0,
    ) -> None:
        self.directory = directory
        self.evict = evict
        self.limit = limit if limit > 0 else (CACHE_LIMIT if evict else 0)
        self.delete_mode = delete  # "": deleting refused, "rename", "hard"
        self.ttl, self.now = ttl, now
        # Keys held, least recently used first (what a cache evicts).
        self.used: OrderedDict[str, None] = OrderedDict()
        # When each key's file is removed (Unix seconds; absent: never).
        self.expires: dict[str, float] = {}
        os.makedirs(directory, exist_ok=True)
        for name in sorted(os.listdir(directory)):
            if name.endswith(EXTENSION):
                key = name[: -len(EXTENSION)]
                self.used[key] = None
                with open(os.path.join(directory, name), encoding="utf-8") as file:
                    self._track(key, file.read())

    def _track(self, key: str, token: str) -> None:
        """nats-server's expiration tracking: ``ttl`` from now when set, else the JWT's ``exp``."""
        if self.ttl:
            self.expires[key] = self.now() + self.ttl
            return
        try:
            expires = decode(token).expires
        except JwtError:
            expires = 0
        if expires:
            self.expires[key] = expires
        else:
            self.expires.pop(key, None)

    def expire(self) -> list[str]:
        """Remove the files whose time has come; their keys."""
        now = self.now()
        gone = sorted(key for key, when in self.expires.items() if when <= now)
        for key in gone:
            try:
                os.remove(self.path(key))
            except FileNotFoundError:
                pass
            del self.expires[key]
            self.used.pop(key, None)
        return gone

    def path(self, key: str) -> str:
        return os.path.join(self.directory, key + EXTENSION)

    def public_keys(self) -> list[str]:
        """The keys held, in the order of their file names (as nats-server's walk of the directory)."""
        return sorted(name[: -len(EXTENSION)] for name in os.listdir(self.directory) if name.endswith(EXTENSION))

    def load(self, key: str) -> str | None:
        """The stored JWT of ``key``, or None."""
        if not _valid_key(key):
            return None
        try:
            with open(self.path(key), encoding="utf-8") as file:
                text = file.read()
        except OSError:
            return None
        if key in self.used:
            self.used.move_to_end(key)
            if self.ttl:
                self.expires[key] = self.now() + self.ttl
        return text

    def save(self, key: str, token: str) -> bool:
        """Write ``token`` as ``key``'s JWT; whether the file changed (:class:`StoreError` when refused)."""
        if not _valid_key(key):
            raise StoreError("invalid public key")
        if not token:
            raise StoreError("invalid JWT")
        if key in self.used:
            self.used.move_to_end(key)
            if self.load(key) == token:
                return False
        elif self.limit and len(self.used) >= self.limit:
            if not self.evict:
                raise StoreError("jwt store is full")
            oldest = next(iter(self.used))
            os.remove(self.path(oldest))
            del self.used[oldest]
            self.expires.pop(oldest, None)
        with open(self.path(key), "w", encoding="utf-8") as file:
            file.write(token)
        self.used[key] = None
        self._track(key, token)
        return True

    def save_if_newer(self, key: str, token: str) -> bool:
        """nats-server's ``saveIfNewer``: a stored JWT that is the same or issued later stays."""
        existing = self.load(key)
        if existing is not None:
            try:
                new, old = decode(token), decode(existing)
            except JwtError:
                return False
            if old.jwt_id == new.jwt_id or old.issued_at > new.issued_at:
                return False
        return self.save(key, token)

    def delete(self, key: str) -> None:
        """Rename the file ``<key>.jwt.deleted`` (or remove it with ``hard_delete``); missing is fine."""
        if not self.delete_mode:
            raise StoreError("store is not set up to for delete")
        path = self.path(key)
        try:
            if self.delete_mode == "hard":
                os.remove(path)
            else:
                os.replace(path, path + DELETED)
        except FileNotFoundError:
            return
        self.used.pop(key, None)
        self.expires.pop(key, None)
