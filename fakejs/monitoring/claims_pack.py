"""A full resolver's directory kept in step with the cluster's: nats-server's ``$SYS.REQ.CLAIMS.PACK`` sync.

Every ``interval`` (a minute unless set), on the server's clock, a full
resolver sends ``$SYS.REQ.CLAIMS.PACK`` with the hash of its directory
(:func:`store_hash`) and a reply subject of its own.  The request goes to
one member of the full resolvers' ``responder`` queue group, another server
(nats-server sends it without echo: its own member passes it on): a directory of the same hash answers one empty
message, any other every JWT it holds (``<key>|<jwt>``, one a message)
then an empty one.  :class:`PackSync` merges what comes back: each JWT is
stored unless the directory holds the same one or one issued later
(``saveIfNewer``), and applied to its account when the server made it;
its debug lines are nats-server's (``DirResolver - Checking store state:
<hash>``, ``Merging succeeded and changed <hash> to <hash>``, ``Merging
finished and resulting in: <hash>``).
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable
from typing import Any

from fakejs.core.account_fetch import response_inbox
from fakejs.core.accounts import Account
from fakejs.core.clock import Clock, TimerHandle
from fakejs.core.jwt.claims import PREFIX_BYTE_ACCOUNT, JwtError, is_key_of
from fakejs.core.jwt.directory import DirectoryStore, StoreError

PACK = "$SYS.REQ.CLAIMS.PACK"
DEFAULT_INTERVAL = 60.0  # nats-server's sync interval when none is configured


def store_hash(tokens: list[str]) -> bytes:
    """nats-server's ``DirJWTStore.Hash``: the XOR of each stored JWT's SHA-256."""
    total = bytearray(32)
    for token in tokens:
        for index, byte in enumerate(hashlib.sha256(token.encode()).digest()):
            total[index] ^= byte
    return bytes(total)


def directory_hash(store: DirectoryStore) -> bytes:
    """The hash of every JWT the directory holds."""
    return store_hash([store.load(key) or "" for key in store.public_keys()])


class MergeError(Exception):
    """A pack message that cannot be merged; ``str()`` is nats-server's error text."""


class PackSync:
    """One full resolver's periodic pack request and the merge of the answers (nats-server's ``DirAccResolver``).

    ``apply`` makes an account the server has follow a JWT the merge stored.
    """

    def __init__(
        self,
        account: Account,
        store: DirectoryStore,
        clock: Clock,
        rng: random.Random,
        log: logging.Logger,
        interval: float,
        apply: Callable[[str, str], None],
        server_name: str = "",
    ) -> None:
        self.account, self.store, self.clock, self.log = account, store, clock, log
        self.interval = interval or DEFAULT_INTERVAL
        self.apply = apply
        self.inbox = response_inbox(server_name, rng)
        self._sub = account.router.subscribe_internal(self.inbox, self._on_answer)
        self._timer: TimerHandle | None = clock.call_later(self.interval, self._tick)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.account.router.unsubscribe(self._sub)

    def _tick(self) -> None:
        ours = directory_hash(self.store)
        self.log.debug("DirResolver - Checking store state: %s", ours.hex())
        self.account.router.publish(PACK, self.inbox, None, ours)
        self._timer = self.clock.call_later(self.interval, self._tick)

    def _on_answer(self, subject: str, reply: str, headers: bytes | None, payload: bytes, origin: Any) -> None:
        if not payload:  # the end of an answer
            self.log.debug("DirResolver - Merging finished and resulting in: %s", directory_hash(self.store).hex())
            return
        before = directory_hash(self.store)
        try:
            self._merge(payload.decode(errors="replace"))
        except MergeError as exc:
            self.log.error("DirResolver - Merging resulted in error: %s", exc)
            return
        after = directory_hash(self.store)
        self.log.debug("DirResolver - Merging succeeded and changed %s to %s", before.hex(), after.hex())

    def _merge(self, pack: str) -> None:
        """nats-server's ``DirJWTStore.Merge``: each ``<key>|<jwt>`` line stored unless older."""
        for line in pack.split("\n"):
            if not line:
                continue
            parts = line.split("|")
            if len(parts) != 2:
                raise MergeError(f"line in package didn't contain 2 entries: {_go_quoted(line)}")
            key, token = parts
            if not is_key_of(key, PREFIX_BYTE_ACCOUNT):
                raise MergeError("key to merge is not a valid public account key")
            try:
                changed = self.store.save_if_newer(key, token)
            except (StoreError, JwtError) as exc:
                raise MergeError(str(exc)) from None
            if changed:
                self.apply(key, token)


def _go_quoted(text: str) -> str:
    """Go's ``%q`` for plain text."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
