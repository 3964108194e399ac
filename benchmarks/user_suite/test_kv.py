"""Key-value buckets: put, get, update, history, watch, delete."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError


async def test_put_get(js):
    kv = await js.create_key_value(bucket="cfg")
    rev = await kv.put("color", b"blue")
    entry = await kv.get("color")
    assert entry.value == b"blue"
    assert entry.revision == rev


@pytest.mark.parametrize("key", ["a", "a.b", "a-b_c", "A/B=C"])
async def test_key_shapes(js, key):
    kv = await js.create_key_value(bucket="cfg")
    await kv.put(key, b"v")
    assert (await kv.get(key)).value == b"v"


async def test_overwrite(js):
    kv = await js.create_key_value(bucket="cfg")
    await kv.put("k", b"1")
    await kv.put("k", b"2")
    assert (await kv.get("k")).value == b"2"


async def test_missing_key(js):
    kv = await js.create_key_value(bucket="cfg")
    with pytest.raises(KeyNotFoundError):
        await kv.get("nope")


async def test_delete_key(js):
    kv = await js.create_key_value(bucket="cfg")
    await kv.put("k", b"v")
    await kv.delete("k")
    with pytest.raises(KeyNotFoundError):
        await kv.get("k")


async def test_purge_key(js):
    kv = await js.create_key_value(bucket="cfg", history=5)
    await kv.put("k", b"1")
    await kv.put("k", b"2")
    await kv.purge("k")
    with pytest.raises(KeyNotFoundError):
        await kv.get("k")


async def test_create_only_once(js):
    kv = await js.create_key_value(bucket="cfg")
    await kv.create("k", b"v")
    with pytest.raises(KeyWrongLastSequenceError):
        await kv.create("k", b"w")


async def test_update_with_revision(js):
    kv = await js.create_key_value(bucket="cfg")
    rev = await kv.put("k", b"1")
    rev2 = await kv.update("k", b"2", last=rev)
    assert rev2 > rev
    with pytest.raises(KeyWrongLastSequenceError):
        await kv.update("k", b"3", last=rev)


async def test_history(js):
    kv = await js.create_key_value(bucket="cfg", history=10)
    for i in range(4):
        await kv.put("k", str(i).encode())
    history = await kv.history("k")
    assert [e.value for e in history] == [b"0", b"1", b"2", b"3"]


async def test_history_limit(js):
    kv = await js.create_key_value(bucket="cfg", history=2)
    for i in range(5):
        await kv.put("k", str(i).encode())
    history = await kv.history("k")
    assert [e.value for e in history] == [b"3", b"4"]


async def test_keys(js):
    kv = await js.create_key_value(bucket="cfg")
    for key in ("x", "y", "z"):
        await kv.put(key, b"1")
    assert sorted(await kv.keys()) == ["x", "y", "z"]


async def test_watch_key(js):
    kv = await js.create_key_value(bucket="cfg")
    await kv.put("k", b"before")
    watcher = await kv.watch("k")
    first = await watcher.updates(timeout=1)
    assert first.value == b"before"
    initial_done = await watcher.updates(timeout=1)
    assert initial_done is None
    await kv.put("k", b"after")
    update = await watcher.updates(timeout=1)
    assert update.value == b"after"
    await watcher.stop()


async def test_watch_all_sees_deletes(js):
    kv = await js.create_key_value(bucket="cfg")
    watcher = await kv.watchall()
    assert await watcher.updates(timeout=1) is None
    await kv.put("a", b"1")
    await kv.delete("a")
    put = await watcher.updates(timeout=1)
    deleted = await watcher.updates(timeout=1)
    assert put.key == "a"
    assert deleted.operation == "DEL"
    await watcher.stop()


async def test_watch_many_updates(js):
    kv = await js.create_key_value(bucket="cfg")
    watcher = await kv.watchall()
    assert await watcher.updates(timeout=1) is None
    for i in range(20):
        await kv.put(f"k{i % 3}", str(i).encode())
    seen = [await watcher.updates(timeout=1) for _ in range(20)]
    assert seen[-1].value == b"19"
    await watcher.stop()


async def test_status(js):
    kv = await js.create_key_value(bucket="cfg", history=3)
    await kv.put("k", b"v")
    status = await kv.status()
    assert status.bucket == "cfg"
    assert status.values == 1
    assert status.history == 3


async def test_bind_existing_bucket(js):
    await js.create_key_value(bucket="cfg")
    kv = await js.key_value("cfg")
    await kv.put("k", b"v")
    assert (await kv.get("k")).value == b"v"


async def test_missing_bucket(js):
    with pytest.raises(BucketNotFoundError):
        await js.key_value("nope")


async def test_delete_bucket(js):
    await js.create_key_value(bucket="cfg")
    assert await js.delete_key_value("cfg")
    with pytest.raises(BucketNotFoundError):
        await js.key_value("cfg")


async def test_concurrent_puts(js):
    kv = await js.create_key_value(bucket="cfg")
    revs = await asyncio.gather(*(kv.put(f"k{i}", b"v") for i in range(30)))
    assert sorted(revs) == list(range(1, 31))
