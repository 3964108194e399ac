"""How fakejs and nats-server scale with the number of subjects and messages.

    python benchmarks/bench_scale.py [--big] [--only kv] [--plot scale.png] [--fakejs-root DIR]

Both servers run as subprocesses (see :mod:`harness`); each scenario is the
same raw JetStream API traffic over nats-py on both, at growing sizes:

* ``kv watch create``/``kv watch all``: a KV bucket (``max_msgs_per_subject:
  1``) with N keys, then the ordered push consumer a KV watch creates
  (``last_per_subject``, filter ``$KV.B.>``, headers only, flow control):
  seconds until the create reply, and until every key was delivered;
* ``kv keys``: nats-py's ``kv.keys()`` over N keys (seconds);
* ``wildcard pull``: N messages on N subjects ``many.<i>.x``, a durable pull
  consumer on ``many.*.x`` fetched 500 at a time (messages per second);
* a stream of M messages on 1,000 subjects: ``STREAM.INFO`` with a
  ``subjects_filter``, a Direct Get of the last message on a subject, a
  consumer create (its reply carries ``num_pending``) and a purge by subject
  (seconds each).

``--big`` adds 100,000 keys/subjects and a 1,000,000 message stream.
``--plot FILE`` draws the time-vs-size curves (log-log) when matplotlib is
installed (``pip install fakejs[bench]``).  ``--fakejs-root`` runs fakejs
from another checkout, to compare before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import nats
from nats.aio.client import Client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import start_server

from fakejs.targets.real import ServerProcess

API = "$JS.API"
BATCH = 500


@dataclass
class Row:
    scenario: str
    size: int
    unit: str  # "s" (lower is better) or "msg/s"
    values: dict[str, float]


async def api(nc: Client, subject: str, body: dict[str, Any] | None = None, timeout: float = 120.0) -> dict[str, Any]:
    reply = await nc.request(f"{API}.{subject}", json.dumps(body or {}).encode(), timeout=timeout)
    answer: dict[str, Any] = json.loads(reply.data)
    if "error" in answer:
        raise RuntimeError(f"{subject}: {answer['error']}")
    return answer


async def fill(nc: Client, stream: str, subjects: Callable[[int], str], count: int, expect: int) -> None:
    """Publish ``count`` messages without waiting for acks, then until the stream holds ``expect``."""
    for i in range(count):
        await nc.publish(subjects(i), b"v")
        if i % 5000 == 4999:
            await nc.flush(timeout=60)
    await nc.flush(timeout=60)
    for _ in range(6000):
        info = await api(nc, f"STREAM.INFO.{stream}")
        if info["state"]["messages"] >= expect:
            return
        await asyncio.sleep(0.02)
    raise RuntimeError(f"{stream}: only {info['state']['messages']} of {expect} stored")


async def fresh_stream(nc: Client, config: dict[str, Any]) -> None:
    try:
        await api(nc, f"STREAM.DELETE.{config['name']}")
    except RuntimeError:
        pass
    await api(nc, f"STREAM.CREATE.{config['name']}", {"storage": "file", **config})


# -- scenarios ------------------------------------------------------------------------------


async def kv_watch(url: str, keys: int) -> dict[str, float]:
    nc = await nats.connect(url, pending_size=256 * 1024 * 1024)
    try:
        await fresh_stream(nc, {"name": "KV_B", "subjects": ["$KV.B.>"], "max_msgs_per_subject": 1})
        await fill(nc, "KV_B", lambda i: f"$KV.B.k{i}", keys, keys)
        done = asyncio.Event()
        seen = 0

        async def on_msg(msg: Any) -> None:
            nonlocal seen
            if msg.reply.startswith("$JS.FC"):
                await nc.publish(msg.reply, b"")
            elif msg.reply:
                seen += 1
                if seen >= keys:
                    done.set()

        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox, cb=on_msg, pending_msgs_limit=-1, pending_bytes_limit=-1)
        config = {
            "deliver_subject": inbox,
            "deliver_policy": "last_per_subject",
            "filter_subject": "$KV.B.>",
            "ack_policy": "none",
            "max_deliver": 1,
            "flow_control": True,
            "idle_heartbeat": 5_000_000_000,
            "headers_only": True,
            "mem_storage": True,
            "num_replicas": 1,
            "inactive_threshold": 300_000_000_000,
        }
        start = time.perf_counter()
        await api(nc, "CONSUMER.CREATE.KV_B", {"stream_name": "KV_B", "config": config})
        created = time.perf_counter() - start
        await asyncio.wait_for(done.wait(), timeout=600)
        delivered = time.perf_counter() - start
        await sub.unsubscribe()
        js = nc.jetstream()
        kv = await js.key_value("B")
        start = time.perf_counter()
        listed = await kv.keys()
        keys_time = time.perf_counter() - start
        assert len(listed) == keys, (len(listed), keys)
        await api(nc, "STREAM.DELETE.KV_B")
        return {"kv watch create": created, "kv watch all": delivered, "kv keys": keys_time}
    finally:
        await nc.close()


async def wildcard_pull(url: str, subjects: int) -> dict[str, float]:
    nc = await nats.connect(url, pending_size=256 * 1024 * 1024)
    try:
        await fresh_stream(nc, {"name": "MANY", "subjects": ["many.>"]})
        await fill(nc, "MANY", lambda i: f"many.{i}.x", subjects, subjects)
        await api(
            nc,
            "CONSUMER.CREATE.MANY.C",
            {
                "stream_name": "MANY",
                "config": {"durable_name": "C", "filter_subject": "many.*.x", "ack_policy": "none"},
            },
        )
        got = 0
        batch_done = asyncio.Event()

        async def on_msg(msg: Any) -> None:
            nonlocal got
            if msg.reply:
                got += 1
                if got % BATCH == 0 or got == subjects:
                    batch_done.set()

        inbox = nc.new_inbox()
        sub = await nc.subscribe(inbox, cb=on_msg, pending_msgs_limit=-1, pending_bytes_limit=-1)
        start = time.perf_counter()
        while got < subjects:
            batch_done.clear()
            request = {"batch": BATCH, "expires": 30_000_000_000}
            await nc.publish(f"{API}.CONSUMER.MSG.NEXT.MANY.C", json.dumps(request).encode(), reply=inbox)
            await asyncio.wait_for(batch_done.wait(), timeout=600)
        rate = subjects / (time.perf_counter() - start)
        await sub.unsubscribe()
        await api(nc, "STREAM.DELETE.MANY")
        return {"wildcard pull": rate}
    finally:
        await nc.close()


async def big_stream(url: str, messages: int) -> dict[str, float]:
    nc = await nats.connect(url, pending_size=256 * 1024 * 1024)
    out: dict[str, float] = {}
    try:
        await fresh_stream(nc, {"name": "BIG", "subjects": ["big.>"], "allow_direct": True})
        await fill(nc, "BIG", lambda i: f"big.{i % 10}.{i % 1000}", messages, messages)
        out["info subjects_filter"] = await timed(api(nc, "STREAM.INFO.BIG", {"subjects_filter": "big.3.*"}))
        out["direct get last"] = await timed(nc.request(f"{API}.DIRECT.GET.BIG.big.7.407", b"", timeout=60))
        consumer = {"durable_name": "N", "filter_subject": "big.*.517", "ack_policy": "explicit"}
        out["consumer num_pending"] = await timed(
            api(nc, "CONSUMER.CREATE.BIG.N", {"stream_name": "BIG", "config": consumer})
        )
        out["purge by subject"] = await timed(api(nc, "STREAM.PURGE.BIG", {"filter": "big.4.*"}))
        await api(nc, "STREAM.DELETE.BIG")
        return out
    finally:
        await nc.close()


async def timed(call: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await call
    return time.perf_counter() - start


# -- running and reporting ---------------------------------------------------------------------


UNITS = {"wildcard pull": "msg/s"}


def run(servers: dict[str, ServerProcess], sizes: dict[str, list[int]], only: str) -> list[Row]:
    scenarios: dict[str, Callable[[str, int], Awaitable[dict[str, float]]]] = {
        "kv": kv_watch,
        "wildcard": wildcard_pull,
        "big": big_stream,
    }
    rows: list[Row] = []
    for key, scenario in scenarios.items():
        if only and only not in key:
            continue
        for size in sizes[key]:
            found: dict[str, dict[str, float]] = {}
            for kind, server in servers.items():
                for name, value in asyncio.run(scenario(server.url, size)).items():
                    found.setdefault(name, {})[kind] = value
            for name, values in found.items():
                rows.append(Row(name, size, UNITS.get(name, "s"), values))
                print(format_row(rows[-1]), flush=True)
    return rows


def format_row(row: Row) -> str:
    fake, real = row.values["fakejs"], row.values["nats-server"]
    if row.unit == "s":
        return f"{row.scenario:22} {row.size:>9,} {fake:>12.4f} s {real:>12.4f} s {fake / real if real else 0:>9.1f}x slower"
    return f"{row.scenario:22} {row.size:>9,} {fake:>10,.0f}/s {real:>10,.0f}/s {fake / real if real else 0:>9.2f}x as fast"


def plot(rows: list[Row], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install fakejs[bench])")
        return
    names = sorted({r.scenario for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        chosen = [r for r in rows if r.scenario == name]
        for kind in ("fakejs", "nats-server"):
            ax.loglog([r.size for r in chosen], [max(r.values[kind], 1e-6) for r in chosen], marker="o", label=kind)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("size")
        ax.set_ylabel(chosen[0].unit)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", action="store_true", help="add 100,000 keys/subjects and 1,000,000 messages")
    parser.add_argument("--only", default="", help="kv, wildcard or big")
    parser.add_argument("--plot", default="", help="write a log-log PNG here (needs matplotlib)")
    parser.add_argument("--fakejs-root", default="", help="run fakejs from this checkout")
    parser.add_argument("--max-size", type=int, default=0, help="skip sizes above this (keys, subjects)")
    args = parser.parse_args(argv)
    sizes = {"kv": [1_000, 5_000, 10_000], "wildcard": [1_000, 10_000, 20_000], "big": [200_000]}
    if args.big:
        sizes = {"kv": sizes["kv"] + [100_000], "wildcard": sizes["wildcard"] + [100_000], "big": [1_000_000]}
    if args.max_size:
        sizes = {key: [n for n in ns if n <= args.max_size or key == "big"] for key, ns in sizes.items()}
    servers = {"fakejs": start_fakejs(args.fakejs_root), "nats-server": start_server("nats-server")}
    print(f"{'scenario':22} {'size':>9} {'fakejs':>14} {'nats-server':>14}")
    try:
        rows = run(servers, sizes, args.only)
    finally:
        for server in servers.values():
            server.stop()
    if args.plot:
        plot(rows, args.plot)


def start_fakejs(root: str) -> ServerProcess:
    if not root:
        return start_server("fakejs")
    return ServerProcess(command=[sys.executable, "-m", "fakejs"], cwd=os.path.abspath(root)).start()


if __name__ == "__main__":
    main()
