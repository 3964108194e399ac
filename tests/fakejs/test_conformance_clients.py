"""The conformance client adapters (nats-py, nats.js) against a fakejs server watching them.

Each run follows the client command contract: a stream ``ORDERS``
(``orders.>``) and a durable pull consumer ``worker`` (explicit ack) exist
when the adapter starts; 20 messages are published while it runs; it exits
0 and prints ``{"received": N, "errors": [...]}``.  What is pinned is what
holds of the libraries whatever the watch thinks of them: every message is
received, the process exits 0.  The watch's report is printed (``-s``), not
asserted: it says how each library consumes, which is for the conformance
runner to judge, not these tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import nats
import pytest

from fakejs.server import Server

ROOT = Path(__file__).resolve().parents[2]
PY_CLIENT = ROOT / "tests" / "conformance" / "nats_py_client.py"
JS_DIR = ROOT / "tests" / "js"
JS_CLIENT = JS_DIR / "conformance_client.mjs"
MESSAGES = 20
PUBLISH_EVERY = 0.04  # seconds: 20 messages over ~0.8 s of a 2.5 s run (under load publishes take longer)
GRACE = 5.0  # the runner kills a client FAKEJS_DURATION_MS + 5 s after starting it


def contract_env(url: str, mode: str, ack: str) -> dict[str, str]:
    """The contract's variables for one run (consume mode pulls from the durable ``worker``)."""
    return {
        "NATS_URL": url,
        "FAKEJS_STREAM": "ORDERS",
        "FAKEJS_CONSUMER": "" if mode == "ordered" else "worker",
        "FAKEJS_MODE": mode,
        "FAKEJS_ACK": ack,
        "FAKEJS_GROUP": "",
        "FAKEJS_MAX_MESSAGES": "10",
        "FAKEJS_EXPIRES_MS": "2000",
        "FAKEJS_HEARTBEAT_MS": "500",
        "FAKEJS_DURATION_MS": "2500",
    }


async def prepare(url: str) -> None:
    """The stream and durable pull consumer every run starts with."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"], storage="memory")
        await js.add_consumer("ORDERS", durable_name="worker", ack_policy="explicit")
    finally:
        await nc.close()


async def publish_spread(url: str) -> None:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for i in range(MESSAGES):
            await js.publish(f"orders.{i % 3}", f"order {i}".encode())
            await asyncio.sleep(PUBLISH_EVERY)
    finally:
        await nc.close()


async def drive(url: str, argv: list[str], mode: str, ack: str, cwd: Path = ROOT) -> dict[str, Any]:
    """Run one adapter as the runner would (publishing while it consumes); its JSON line."""
    await prepare(url)
    env = {**os.environ, **contract_env(url, mode, ack)}
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    publishing = asyncio.create_task(publish_spread(url))
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 2.5 + GRACE)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise AssertionError(f"{argv[-1]} did not finish in time") from None
    finally:
        await publishing
    assert proc.returncode == 0, (out.decode(), err.decode())
    doc: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return doc


def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.skip("node not found")
    if not (JS_DIR / "node_modules" / "@nats-io" / "jetstream").is_dir():
        pytest.skip(f"@nats-io/jetstream not installed in {JS_DIR}/node_modules")
    return path


def command(client: str) -> tuple[list[str], Path]:
    if client == "nats-py":
        return [sys.executable, str(PY_CLIENT)], ROOT
    return [node(), str(JS_CLIENT)], JS_DIR


RUNS = [("consume", "ack"), ("consume", "sync"), ("ordered", "none")]


@pytest.mark.slow
@pytest.mark.parametrize("client", ["nats-py", "nats.js"])
@pytest.mark.parametrize(("mode", "ack"), RUNS, ids=[f"{mode}-{ack}" for mode, ack in RUNS])
async def test_adapter_receives_every_message(client: str, mode: str, ack: str) -> None:
    argv, cwd = command(client)
    async with Server(port=0, conformance=True) as server:
        doc = await drive(server.url, argv, mode, ack, cwd)
        report = server.conformance()
        print(f"\n== {client} {mode}/{ack}: {doc}\n{report.text()}\nexercised: {report.exercised}")
    assert doc["received"] == MESSAGES, doc
    assert isinstance(doc["errors"], list)
