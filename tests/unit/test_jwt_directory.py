"""The account JWT directory of the full and cache resolvers, and the logins that look an account up, without a server.

Credentials come from :mod:`fakejs.testkit.jwt` with fixed clocks, so two
JWTs of one account differ in ``iat`` when the test says so.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from fakejs.core.jwt.claims import ACCOUNT, decode_kind
from fakejs.core.jwt.directory import DirectoryStore, StoreError
from fakejs.core.jwt.login import JwtAuthenticator, Refused
from fakejs.core.jwt.trust import AccountClaims
from fakejs.monitoring.claims_pack import store_hash
from fakejs.testkit.jwt import Operator

NOW = 1_700_000_000.0


def operator(now: float = NOW) -> Operator:
    return Operator("O", now=lambda: now)


def test_a_jwt_is_its_file_and_nothing_else(tmp_path: Path) -> None:
    app = operator().account("APP")
    store = DirectoryStore(str(tmp_path))
    assert store.save(app.public_key, app.jwt)
    assert (tmp_path / f"{app.public_key}.jwt").read_text() == app.jwt
    assert not store.save(app.public_key, app.jwt)  # the same JWT changes nothing
    assert store.load(app.public_key) == app.jwt
    assert store.public_keys() == [app.public_key]
    assert DirectoryStore(str(tmp_path)).load(app.public_key) == app.jwt  # read again by another store


def test_keys_that_are_not_public_keys_are_refused(tmp_path: Path) -> None:
    store = DirectoryStore(str(tmp_path))
    with pytest.raises(StoreError, match="invalid public key"):
        store.save("../escape", "x.y.z")
    assert store.load("../escape") is None


def test_a_newer_jwt_replaces_an_older_one_only_when_asked_if_newer(tmp_path: Path) -> None:
    older_operator = operator(NOW)
    older = older_operator.account("APP")
    newer = Operator("O", now=lambda: NOW + 10, seed=older_operator.seed).account("APP", seed=older.seed)
    store = DirectoryStore(str(tmp_path))
    store.save(older.public_key, newer.jwt)
    assert not store.save_if_newer(older.public_key, older.jwt)
    assert store.load(older.public_key) == newer.jwt
    assert store.save(older.public_key, older.jwt)  # an update is written whatever its iat, as nats-server's


def test_a_full_store_refuses_and_a_cache_evicts_the_least_used(tmp_path: Path) -> None:
    op = operator()
    first, second, third = op.account("A"), op.account("B"), op.account("C")
    full = DirectoryStore(str(tmp_path / "full"), limit=2)
    full.save(first.public_key, first.jwt)
    full.save(second.public_key, second.jwt)
    with pytest.raises(StoreError, match="jwt store is full"):
        full.save(third.public_key, third.jwt)
    cache = DirectoryStore(str(tmp_path / "cache"), limit=2, evict=True)
    cache.save(first.public_key, first.jwt)
    cache.save(second.public_key, second.jwt)
    cache.load(first.public_key)
    cache.save(third.public_key, third.jwt)
    assert sorted(cache.public_keys()) == sorted([first.public_key, third.public_key])


def test_delete_renames_or_removes(tmp_path: Path) -> None:
    app = operator().account("APP")
    refused = DirectoryStore(str(tmp_path / "none"))
    refused.save(app.public_key, app.jwt)
    with pytest.raises(StoreError, match="store is not set up to for delete"):
        refused.delete(app.public_key)
    renaming = DirectoryStore(str(tmp_path / "rename"), delete="rename")
    renaming.save(app.public_key, app.jwt)
    renaming.delete(app.public_key)
    renaming.delete(app.public_key)  # already gone: fine
    assert (tmp_path / "rename" / f"{app.public_key}.jwt.deleted").read_text() == app.jwt
    assert renaming.public_keys() == []
    removing = DirectoryStore(str(tmp_path / "hard"), delete="hard")
    removing.save(app.public_key, app.jwt)
    removing.delete(app.public_key)
    assert list((tmp_path / "hard").iterdir()) == []


def test_the_store_hash_is_the_xor_of_each_jwts_sha256() -> None:
    assert store_hash([]) == bytes(32)
    assert store_hash(["a", "b"]) == store_hash(["b", "a"])
    assert store_hash(["a", "a"]) == bytes(32)


def test_a_login_looks_an_unknown_account_up() -> None:
    app = operator().account("APP")
    user = app.user("alice")
    nonce = b"nonce"
    options = {"jwt": user.jwt, "sig": base64.urlsafe_b64encode(user.sign(nonce)).rstrip(b"=").decode()}
    auth = JwtAuthenticator({})
    with pytest.raises(Refused, match="Account JWT lookup error: account missing"):
        auth.login(options, nonce, "127.0.0.1", "STANDARD", NOW)
    resolved = AccountClaims.from_claims(decode_kind(app.jwt, ACCOUNT))
    auth.lookup = {app.public_key: resolved}.get
    assert auth.login(options, nonce, "127.0.0.1", "STANDARD", NOW).user.account == app.public_key


def test_jwts_expire_after_the_ttl_since_stored_or_read_else_at_their_exp(tmp_path: Path) -> None:
    now = [NOW]
    op = operator()
    lasting, ending = op.account("LASTING"), op.account("ENDING", expires=30)
    full = DirectoryStore(str(tmp_path / "full"), now=lambda: now[0])
    full.save(lasting.public_key, lasting.jwt)
    full.save(ending.public_key, ending.jwt)
    now[0] = NOW + 30
    assert full.expire() == [ending.public_key]
    assert full.public_keys() == [lasting.public_key]
    cache = DirectoryStore(str(tmp_path / "cache"), evict=True, ttl=10, now=lambda: now[0])
    cache.save(lasting.public_key, lasting.jwt)
    now[0] += 8
    cache.load(lasting.public_key)  # a read keeps it 10 more seconds
    now[0] += 8
    assert cache.expire() == []
    now[0] += 2
    assert cache.expire() == [lasting.public_key]
    assert cache.load(lasting.public_key) is None
