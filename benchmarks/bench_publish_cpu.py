"""The server's CPU time per raw pipelined JetStream publish, in-process: parse, route, store, PubAck.

    python benchmarks/bench_publish_cpu.py [--count 20000] [--rounds 5] [--profile] [--no-timeline]

What ``bench_publish_raw.py`` sends, without the socket and the event loop:
a client session (:class:`~fakejs.core.session.ClientSession`, on a socket
layer that only keeps what is written) of an in-process server with
JetStream is handed the same ``PUB s.x _INBOX.r.N 100`` frames in blocks of
2,000, into a memory stream, and its output (the PubAcks) is taken after
each block.  Prints the process's CPU time per message, best of
``--rounds`` rounds of ``--count`` messages each: less disturbed by a busy
machine than a rate, and the number to compare between two versions (run
each a few times, alternating).  ``--profile`` adds cProfile's busiest
functions over one more round, and the Python calls per publish.  ``--no-timeline``: the server
records no timeline, as the command-line server without ``--timeline`` (the in-process default
records one).  Run with ``PYTHONPATH=DIR`` to measure the
checkout in ``DIR`` (a compiled build's copy: see ``bench_summary.py
--compiled``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import pstats
import time

from fakejs.cli import tune_gc
from fakejs.core.clientio import TransportDetails
from fakejs.core.session import ClientSession
from fakejs.server.server import Server

BLOCK = 2_000
SIZE = 100


class KeptOutput:
    """A socket layer that writes nothing: the session's output is taken after each block."""

    def __init__(self) -> None:
        self.details = TransportDetails()

    def want_flush(self) -> None:
        pass

    def write_early(self) -> None:
        pass

    def close(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def write_buffer_size(self) -> int:
        return 0

    def pause_reading(self, seconds: float) -> None:
        pass


async def measure(count: int, rounds: int, profile: bool, timeline: bool = True) -> list[float]:
    """µs of CPU per publish, for each round."""
    server = Server(port=-1, jetstream=True) if timeline else Server(port=-1, jetstream=True, timeline=0)
    await server.start()
    try:
        session = ClientSession(server.broker, KeptOutput(), "127.0.0.1", 1)
        session.start()
        session.data_received(b'CONNECT {"verbose":false,"pedantic":false}\r\nSUB _INBOX.> 1\r\n')
        config = json.dumps({"name": "RAW", "subjects": ["s.>"], "storage": "memory"}).encode()
        session.data_received(b"PUB $JS.API.STREAM.CREATE.RAW _INBOX.c %d\r\n%s\r\n" % (len(config), config))
        while b'"did_create":true' not in session.take_output():
            await asyncio.sleep(0.001)
        payload = b"x" * SIZE
        frames = [b"PUB s.x _INBOX.r.%d %d\r\n%s\r\n" % (i, SIZE, payload) for i in range(count)]
        blocks = [b"".join(frames[i : i + BLOCK]) for i in range(0, count, BLOCK)]
        results = []
        for _ in range(rounds):
            started = time.process_time()
            for block in blocks:
                session.data_received(block)
                session.take_output()
            results.append((time.process_time() - started) / count * 1e6)
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
            for block in blocks:
                session.data_received(block)
                session.take_output()
            profiler.disable()
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(30)
            calls = sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]
            print(f"Python calls per publish: {calls / count:.1f} (the measure a busy machine does not disturb)")
        return results
    finally:
        await server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile's busiest functions over one more round")
    parser.add_argument("--no-timeline", action="store_true", help="no timeline, as the command-line server's default")
    args = parser.parse_args()
    tune_gc()  # the command-line server's collector settings
    results = asyncio.run(measure(args.count, args.rounds, args.profile, not args.no_timeline))
    print(f"CPU per publish: best {min(results):.2f} µs (rounds: {', '.join(f'{r:.2f}' for r in results)})")


if __name__ == "__main__":
    main()
