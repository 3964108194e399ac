"""Configuration reload of JetStream's limits and of JetStream itself, on both servers.

Raised ``max_mem_store`` / ``max_file_store`` apply at once (``$JS.API.INFO``
shows them); lowered ones are refused with nats-server's text; JetStream
turned off by a reload shuts down, turned on again it starts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nats
import pytest

from tests.harness.reload import TARGETS, failure, reload, start
from tests.harness.targets import REAL_BINARY, REAL_MISSING_REASON
from tests.harness.wait import WAIT

pytestmark = pytest.mark.skipif(REAL_BINARY is None, reason=REAL_MISSING_REASON)


def _jetstream(store: Path, memory: str, disk: str) -> str:
    return f'jetstream {{ store_dir: "{store}", max_mem_store: {memory}, max_file_store: {disk} }}\n'


async def _create(url: str, name: str, max_bytes: int) -> dict:
    """A memory stream reserving ``max_bytes``: its reply (an error past the server's max_mem_store)."""
    config = {"name": name, "subjects": [name], "storage": "memory", "max_bytes": max_bytes}
    nc = await nats.connect(url)
    try:
        reply = await nc.request(f"$JS.API.STREAM.CREATE.{name}", json.dumps(config).encode(), timeout=WAIT)
    finally:
        await nc.close()
    return json.loads(reply.data)


@pytest.mark.parametrize("kind", TARGETS)
async def test_raised_limits_apply_and_lowered_ones_are_refused(kind: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    server = start(kind, _jetstream(store, "10MB", "20MB"), tmp_path)
    try:
        refused = await _create(server.url, "S1", 25 * 1024 * 1024)
        assert refused["error"]["err_code"] == 10028, refused  # over the server's max_mem_store
        log = await reload(server, _jetstream(store, "30MB", "40MB"))
        assert re.findall(r"\[INF\] (Reloaded: JetStream.*)\n", log) == [
            "Reloaded: JetStream max_mem_store = 30.00 MB",
            "Reloaded: JetStream max_file_store = 40.00 MB",
        ]
        assert "error" not in await _create(server.url, "S2", 25 * 1024 * 1024)
        log = await reload(server, _jetstream(store, "30MB", "1MB"), count=2)
        assert failure(log) == "config reload not supported for decreasing jetstream max memory and store"
        assert (await _create(server.url, "S3", 6 * 1024 * 1024))["error"]["err_code"] == 10028
    finally:
        server.stop()


@pytest.mark.parametrize("kind", TARGETS)
async def test_jetstream_turned_off_and_on(kind: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    block = f'jetstream {{ store_dir: "{store}" }}\n'
    server = start(kind, block, tmp_path)
    try:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="KEPT", subjects=["kept"])
        await js.publish("kept", b"1")
        log = await reload(server, "jetstream: disabled\n")
        shutdown = log.split("Reloaded: accounts\n", 1)[1]
        assert re.findall(r"\[INF\] (.*)\n", shutdown) == [
            "Reloaded: JetStream",
            "Initiating JetStream Shutdown...",
            "JetStream Shutdown",
            re.findall(r"Reloaded server configuration.*", shutdown)[0],
        ]
        log = await reload(server, block, count=2)
        restart = log.rsplit("Reloaded: accounts\n", 1)[1]
        lines = re.findall(r"\[INF\] (.*)\n", restart)
        assert lines[:3] == ["Reloaded: JetStream", "Restarting JetStream", "Starting JetStream"]
        assert lines[-2].startswith("Took ") and lines[-2].endswith(" to start JetStream")
        info = await js.stream_info("KEPT")  # the file store is read again
        assert info.state.messages == 1
        await nc.close()
    finally:
        server.stop()


KEPT = {
    "unique_tag: az": "config reload not supported for JetStreamUniqueTag: old=, new=az",
    "request_queue_limit: 50": "config reload not supported for JetStreamRequestQueueLimit: old=10000, new=50",
    "sync_interval: 10s": "config reload not supported for SyncInterval: old=2m0s, new=10s",
    "strict: false": "config reload not supported for NoJetStreamStrict: old=false, new=true",
    "max_buffered_msgs: 100": "config reload not supported for StreamMaxBufferedMsgs: old=0, new=100",
}


@pytest.mark.parametrize("setting", sorted(KEPT))
@pytest.mark.parametrize("kind", TARGETS)
async def test_jetstream_settings_nats_server_keeps(kind: str, setting: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    server = start(kind, f'jetstream {{ store_dir: "{store}" }}\n', tmp_path)
    try:
        log = await reload(server, f'jetstream {{ store_dir: "{store}", {setting} }}\n')
        assert failure(log) == KEPT[setting]
    finally:
        server.stop()


def _account(store: Path, memory: str) -> str:
    return (
        f'jetstream {{ store_dir: "{store}" }}\n'
        f"accounts {{ A: {{ jetstream: {{ max_mem: {memory} }}, users: [{{user: a, password: a}}] }} }}\n"
    )


@pytest.mark.parametrize("kind", TARGETS)
async def test_new_account_jetstream_limits_apply(kind: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    server = start(kind, _account(store, "1MB"), tmp_path)
    try:
        url = f"nats://a:a@127.0.0.1:{server.port}"
        refused = await _create(url, "S1", 5 * 1024 * 1024)
        assert refused["error"]["description"] == "insufficient memory resources available"
        log = await reload(server, _account(store, "10MB"))
        assert re.findall(r"\[INF\] (Reloaded.*)\n", log)[:2] == ["Reloaded: authorization users", "Reloaded: accounts"]
        assert "error" not in await _create(url, "S2", 5 * 1024 * 1024)
        assert (await _create(url, "S3", 6 * 1024 * 1024))["error"]["err_code"] == 10028
    finally:
        server.stop()


def _accounts(store: Path, b_has_jetstream: bool) -> str:
    enabled = "jetstream: enabled, " if b_has_jetstream else ""
    return (
        f'jetstream {{ store_dir: "{store}" }}\n'
        "accounts {\n  A: { jetstream: enabled, users: [{user: a, password: a}] }\n"
        f"  B: {{ {enabled}users: [{{user: b, password: b}}] }}\n}}\n"
    )


async def _account_info(url: str) -> dict:
    nc = await nats.connect(url)
    try:
        return json.loads((await nc.request("$JS.API.INFO", b"", timeout=WAIT)).data)
    finally:
        await nc.close()


@pytest.mark.parametrize("kind", TARGETS)
async def test_account_jetstream_turned_on_off_and_on(kind: str, tmp_path: Path) -> None:
    store = tmp_path / f"{kind}-js"
    server = start(kind, _accounts(store, False), tmp_path)
    try:
        url = f"nats://b:b@127.0.0.1:{server.port}"
        assert (await _account_info(url))["error"]["err_code"] == 10039
        log = await reload(server, _accounts(store, True))
        assert re.findall(r"\[INF\] (Reloaded.*)\n", log)[:2] == ["Reloaded: authorization users", "Reloaded: accounts"]
        assert "error" not in await _account_info(url)
        nc = await nats.connect(url)
        js = nc.jetstream()
        await js.add_stream(name="BS", subjects=["bs"])
        await js.publish("bs", b"1")
        await nc.close()
        await reload(server, _accounts(store, False), count=2)
        assert (await _account_info(url))["error"]["description"] == "JetStream not enabled for account"
        log = await reload(server, _accounts(store, True), count=3)
        last = log.rsplit("Trapped", 1)[1]
        restored = re.findall(r"\[INF\] (.*)\n", last)
        assert restored[2] == "  Starting restore for stream 'B > BS'"
        assert re.fullmatch(r"  Restored 1 messages for stream 'B > BS' in \S+", restored[3])
        assert restored[4].startswith("Reloaded server configuration")
        assert (await _account_info(url))["streams"] == 1
    finally:
        server.stop()
