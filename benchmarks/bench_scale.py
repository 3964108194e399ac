"""How fakejs and nats-server scale with the number of subjects and messages.

    python benchmarks/bench_scale.py [--big] [--only kv] [--repeat 3] [--plot FILE | --no-plot]
    python benchmarks/bench_scale.py --only wildcard --sizes 5000,20000 --no-plot

Both servers run as subprocesses (see :mod:`harness`); each scenario is the
same raw JetStream API traffic over nats-py on both, at growing sizes, and
every value is in seconds (lower is better):

* ``kv watch create``/``kv watch all``: a KV bucket (``max_msgs_per_subject:
  1``) with N keys, then the ordered push consumer a KV watch creates
  (``last_per_subject``, filter ``$KV.B.>``, headers only, flow control):
  time until the create reply, and until every key was delivered;
* ``kv keys``: nats-py's ``kv.keys()`` over N keys;
* ``wildcard pull``: N messages on N subjects ``many.<i>.x``, a durable pull
  consumer on ``many.*.x`` fetched 500 at a time: time to receive them all;
* a stream of M messages on 1,000 subjects: ``STREAM.INFO`` with a
  ``subjects_filter``, a Direct Get of the last message on a subject and a
  consumer create (its reply carries ``num_pending``), each the median of
  five calls, and one purge by subject.

Each scenario first runs once at size 200 on both servers, as a warm-up.
Sizes are 1,000, 3,000 and 10,000 keys/subjects and 10,000 and 100,000
messages; ``--big`` adds 30,000 and 100,000 keys/subjects and 1,000,000
messages, and ``--sizes`` names other sizes.  After the table comes each
curve's log-log slope (least squares over the sizes: 1 is linear, 0 constant) for both servers, flagging a fakejs
curve steeper than nats-server's by more than 0.1.  The plot (log-log, one
panel per scenario) goes to ``benchmarks/results/scale.png`` unless
``--plot``/``--no-plot`` say otherwise; it needs matplotlib (``pip install
fakejs[bench]``).  ``--fakejs-root`` runs fakejs from another checkout, to
compare before and after a change.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import nats
import nats.js.errors
from nats.aio.client import Client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import HERE, start_server

from fakejs.targets.real import ServerProcess

API = "$JS.API"
BATCH = 500
LOOKUPS = 5
WARM_UP = 200


@dataclass
class Row:
    scenario: str
    size: int
    unit: str  # "s": lower is better
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
        for _ in range(3):  # nats-py's keys() may see its consumer's info before the first key and find none
            start = time.perf_counter()
            try:
                listed = await kv.keys()
            except nats.js.errors.NoKeysError:
                continue
            keys_time = time.perf_counter() - start
            break
        else:
            raise RuntimeError("kv.keys() found no keys three times")
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
        elapsed = time.perf_counter() - start
        await sub.unsubscribe()
        await api(nc, "STREAM.DELETE.MANY")
        return {"wildcard pull": elapsed}
    finally:
        await nc.close()


async def big_stream(url: str, messages: int) -> dict[str, float]:
    """Look-ups in a stream of ``messages`` messages; each but the purge is the median of LOOKUPS calls."""
    nc = await nats.connect(url, pending_size=256 * 1024 * 1024)
    out: dict[str, float] = {}
    try:
        await fresh_stream(nc, {"name": "BIG", "subjects": ["big.>"], "allow_direct": True})
        await fill(nc, "BIG", lambda i: f"big.{i % 10}.{i % 1000}", messages, messages)
        out["info subjects_filter"] = statistics.median(
            [await timed(api(nc, "STREAM.INFO.BIG", {"subjects_filter": f"big.{i}.*"})) for i in range(LOOKUPS)]
        )
        out["direct get last"] = statistics.median(
            [
                await timed(nc.request(f"{API}.DIRECT.GET.BIG.big.7.{407 + i * 10}", b"", timeout=60))
                for i in range(LOOKUPS)
            ]
        )
        times = []
        for i in range(LOOKUPS):
            consumer = {"durable_name": f"N{i}", "filter_subject": f"big.*.{517 + i}", "ack_policy": "explicit"}
            times.append(await timed(api(nc, f"CONSUMER.CREATE.BIG.N{i}", {"stream_name": "BIG", "config": consumer})))
        out["consumer num_pending"] = statistics.median(times)
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

KINDS = ("fakejs", "nats-server")
SLOPE_MARGIN = 0.1  # a fakejs curve may be at most this much steeper than nats-server's
# ... or than flat: a time that does not grow is never too steep, though nats-server's, shrinking by
# noise at a near-constant time (its first sizes' warm-up, say), has a slope below zero.
FLAT = 0.0


def run(servers: dict[str, ServerProcess], sizes: dict[str, list[int]], only: str, repeat: int) -> list[Row]:
    """Every scenario at every size on both servers, ``repeat`` times alternating; the median counts."""
    scenarios: dict[str, Callable[[str, int], Awaitable[dict[str, float]]]] = {
        "kv": kv_watch,
        "wildcard": wildcard_pull,
        "big": big_stream,
    }
    rows: list[Row] = []
    for key, scenario in scenarios.items():
        if only and only not in key:
            continue
        for kind in KINDS:  # a warm-up, so that first-call costs do not land on the smallest size
            asyncio.run(scenario(servers[kind].url, WARM_UP))
        for size in sizes[key]:
            found: dict[str, dict[str, list[float]]] = {}
            for _ in range(repeat):
                for kind in KINDS:
                    for name, value in asyncio.run(scenario(servers[kind].url, size)).items():
                        found.setdefault(name, {}).setdefault(kind, []).append(value)
            for name, values in found.items():
                rows.append(Row(name, size, "s", {kind: statistics.median(v) for kind, v in values.items()}))
                print(format_row(rows[-1]), flush=True)
    return rows


def format_row(row: Row) -> str:
    fake, real = row.values["fakejs"], row.values["nats-server"]
    ratio = fake / real if real else float("inf")
    text = f"{row.scenario:22} {row.size:>9,} {fake:>12.4f} s {real:>12.4f} s {ratio:>8.1f}x"
    if row.scenario == "wildcard pull":
        text += f"   ({row.size / fake:,.0f} vs {row.size / real:,.0f} msg/s)"
    return text


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of log(time) against log(size): 1 is linear, 0 constant."""
    if len(points) < 2:
        return float("nan")
    xs = [math.log10(size) for size, _ in points]
    ys = [math.log10(max(value, 1e-9)) for _, value in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else float("nan")


def slopes(rows: list[Row]) -> dict[str, dict[str, float]]:
    names = list(dict.fromkeys(r.scenario for r in rows))
    return {
        name: {kind: slope([(r.size, r.values[kind]) for r in rows if r.scenario == name]) for kind in KINDS}
        for name in names
    }


def report_slopes(rows: list[Row]) -> list[str]:
    """Print each curve's log-log slope for both servers; returns the scenarios where fakejs is too steep."""
    steep: list[str] = []
    print(f"\n{'log-log slope':22} {'sizes':>17} {'fakejs':>7} {'nats-server':>12}")
    for name, found in slopes(rows).items():
        sizes = [r.size for r in rows if r.scenario == name]
        fake, real = found["fakejs"], found["nats-server"]
        flag = ""
        if fake > max(real, FLAT) + SLOPE_MARGIN:
            flag = f"  STEEPER (> nats-server + {SLOPE_MARGIN})"
            steep.append(name)
        span = f"{min(sizes):,}-{max(sizes):,}"
        print(f"{name:22} {span:>17} {fake:>7.2f} {real:>12.2f}{flag}".replace("nan", "  -"))
    if steep:
        print(f"fakejs curves steeper than nats-server's + {SLOPE_MARGIN}: {', '.join(steep)}")
    else:
        print(f"every fakejs curve is within nats-server's slope + {SLOPE_MARGIN}")
    return steep


def plot(rows: list[Row], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install fakejs[bench])")
        return
    found = slopes(rows)
    names = list(found)
    columns = min(4, len(names))
    lines = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4 * columns, 3.4 * lines), squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names):
        chosen = [r for r in rows if r.scenario == name]
        for kind, style in zip(KINDS, ("o-", "s--")):
            ax.loglog(
                [r.size for r in chosen],
                [max(r.values[kind], 1e-6) for r in chosen],
                style,
                label=f"{kind} (slope {found[name][kind]:.2f})",
            )
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("messages" if name in BIG_SCENARIOS else "keys / subjects")
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("fakejs vs nats-server: time against size (log-log)")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    print(f"plot written to {path}")


BIG_SCENARIOS = {"info subjects_filter", "direct get last", "consumer num_pending", "purge by subject"}
DEFAULT_PLOT = os.path.join(HERE, "results", "scale.png")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big", action="store_true", help="add 30,000 and 100,000 keys/subjects, 1,000,000 messages")
    parser.add_argument("--only", default="", help="kv, wildcard or big")
    parser.add_argument("--plot", default=DEFAULT_PLOT, help="write the log-log PNG here (needs matplotlib)")
    parser.add_argument("--no-plot", action="store_true", help="do not draw the plot")
    parser.add_argument("--repeat", type=int, default=1, help="runs per size and server; the median counts")
    parser.add_argument("--fakejs-root", default="", help="run fakejs from this checkout")
    parser.add_argument("--max-size", type=int, default=0, help="skip sizes above this (keys, subjects, messages)")
    parser.add_argument("--sizes", default="", help="comma-separated sizes instead of the defaults (5000,20000)")
    args = parser.parse_args(argv)
    sizes = {"kv": [1_000, 3_000, 10_000], "wildcard": [1_000, 3_000, 10_000], "big": [10_000, 100_000]}
    if args.big:
        sizes = {
            "kv": sizes["kv"] + [30_000, 100_000],
            "wildcard": sizes["wildcard"] + [30_000, 100_000],
            "big": sizes["big"] + [1_000_000],
        }
    if args.sizes:
        chosen = [int(n) for n in args.sizes.split(",")]
        sizes = {key: chosen for key in sizes}
    if args.max_size:
        sizes = {key: [n for n in ns if n <= args.max_size] for key, ns in sizes.items()}
    servers = {"fakejs": start_fakejs(args.fakejs_root), "nats-server": start_server("nats-server")}
    print(f"{'scenario':22} {'size':>9} {'fakejs':>14} {'nats-server':>14} {'ratio':>9}")
    started = time.perf_counter()
    try:
        rows = run(servers, sizes, args.only, max(1, args.repeat))
    finally:
        for server in servers.values():
            server.stop()
    print(f"(ran for {time.perf_counter() - started:.0f} s; ratio = fakejs / nats-server, times are medians)")
    report_slopes(rows)
    if not args.no_plot:
        plot(rows, args.plot)


def start_fakejs(root: str) -> ServerProcess:
    if not root:
        return start_server("fakejs")
    return ServerProcess(command=[sys.executable, "-m", "fakejs"], cwd=os.path.abspath(root)).start()


if __name__ == "__main__":
    main()
