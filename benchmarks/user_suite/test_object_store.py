"""Object store with small objects."""

from __future__ import annotations

import pytest
from nats.js.errors import ObjectNotFoundError


async def test_put_get(js):
    obs = await js.create_object_store("files")
    await obs.put("hello.txt", b"hello world")
    result = await obs.get("hello.txt")
    assert result.data == b"hello world"


@pytest.mark.parametrize("size", [1, 1000, 200_000])
async def test_sizes(js, size):
    obs = await js.create_object_store("files")
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    info = await obs.put("blob", data)
    assert info.size == size
    assert (await obs.get("blob")).data == data


async def test_info(js):
    obs = await js.create_object_store("files")
    await obs.put("a", b"12345")
    info = await obs.get_info("a")
    assert info.name == "a"
    assert info.size == 5


async def test_list(js):
    obs = await js.create_object_store("files")
    for name in ("a", "b", "c"):
        await obs.put(name, name.encode())
    names = sorted(info.name for info in await obs.list())
    assert names == ["a", "b", "c"]


async def test_replace(js):
    obs = await js.create_object_store("files")
    await obs.put("a", b"old")
    await obs.put("a", b"new")
    assert (await obs.get("a")).data == b"new"


async def test_delete(js):
    obs = await js.create_object_store("files")
    await obs.put("a", b"x")
    await obs.delete("a")
    with pytest.raises(ObjectNotFoundError):
        await obs.get("a")


async def test_missing(js):
    obs = await js.create_object_store("files")
    with pytest.raises(ObjectNotFoundError):
        await obs.get("nope")


async def test_bind_existing(js):
    await js.create_object_store("files")
    obs = await js.object_store("files")
    await obs.put("a", b"x")
    assert (await obs.get("a")).data == b"x"
